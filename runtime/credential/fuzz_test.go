package credential

import (
	"fmt"
	"strings"
	"testing"
)

func fmtAll(v any) string { return fmt.Sprintf("%v %+v %#v %s", v, v, v, v) }

func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"{api_key}", "Token {api_key}", "{a}:{b}", "{", "}", "{{a}}", "{A}", "", "a{b}c{d}e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		parts, err := parseTemplate(tmpl)
		if err != nil {
			return
		}
		// A parsed template rebuilds to itself, and filling every field with
		// "<name>" gives the same text.
		var b strings.Builder
		fields := map[string]string{}
		for _, p := range parts {
			if p.field != "" {
				if !isFieldName(p.field) {
					t.Fatalf("bad field name %q accepted", p.field)
				}
				b.WriteString("{" + p.field + "}")
				fields[p.field] = "{" + p.field + "}"
			} else {
				if strings.ContainsAny(p.literal, "{}") {
					t.Fatalf("literal %q contains a brace", p.literal)
				}
				b.WriteString(p.literal)
			}
		}
		if b.String() != tmpl {
			t.Fatalf("rebuilt %q from %q", b.String(), tmpl)
		}
		got, err := fillTemplate(tmpl, fields)
		if err != nil || got != tmpl {
			t.Fatalf("fillTemplate = %q, %v", got, err)
		}
	})
}
