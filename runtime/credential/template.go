package credential

import (
	"fmt"
	"strings"
)

// templatePart is one piece of a placement template: literal text, or the
// name of a credential field to substitute.
type templatePart struct {
	literal string
	field   string // non-empty for a {field} reference
}

// parseTemplate splits a template such as "Token {api_key}" into parts.
// A reference is {name} with name made of [a-z0-9_]+; any other brace is an
// error. Errors quote the template, which is manifest text, never a secret.
func parseTemplate(tmpl string) ([]templatePart, error) {
	var parts []templatePart
	rest := tmpl
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			parts = append(parts, templatePart{literal: rest})
			break
		}
		if i > 0 {
			parts = append(parts, templatePart{literal: rest[:i]})
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("template %q: unbalanced '}'", tmpl)
		}
		end := strings.IndexAny(rest[i+1:], "{}")
		if end < 0 || rest[i+1+end] == '{' {
			return nil, fmt.Errorf("template %q: unbalanced '{'", tmpl)
		}
		name := rest[i+1 : i+1+end]
		if !isFieldName(name) {
			return nil, fmt.Errorf("template %q: field name %q must match [a-z0-9_]+", tmpl, name)
		}
		parts = append(parts, templatePart{field: name})
		rest = rest[i+1+end+1:]
	}
	return parts, nil
}

func isFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// fillTemplate substitutes fields into tmpl. A missing field is an error that
// names the field, never a value.
func fillTemplate(tmpl string, fields map[string]string) (string, error) {
	parts, err := parseTemplate(tmpl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.field == "" {
			b.WriteString(p.literal)
			continue
		}
		v, ok := fields[p.field]
		if !ok {
			return "", fmt.Errorf("credential has no field %q", p.field)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}
