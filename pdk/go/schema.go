package pdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor returns the JSON Schema of t as github.com/google/jsonschema-go
// infers it (json tags name properties, fields without omitempty or omitzero
// are required, a `jsonschema:"..."` tag is the description, structs allow no
// additional properties), refined by these field tags:
//
//	enum:"open,closed,all"  allowed values (for a slice field: of its items)
//	default:"30"            default value, used when the field is absent
//	minimum:"1"             inclusive lower bound of a number
//	maximum:"100"           inclusive upper bound of a number
//	pattern:"^[a-z]+$"      regular expression a string must match
//
// A pointer to a struct gives the struct's schema: a top-level "null" is not
// a useful tool input or output. hasDefaults reports whether any default tag
// was applied.
func schemaFor(t reflect.Type) (s *jsonschema.Schema, hasDefaults bool, err error) {
	s, err = jsonschema.ForType(t, nil)
	if err != nil {
		return nil, false, err
	}
	r := &refiner{}
	if err := r.refine(t, s); err != nil {
		return nil, false, err
	}
	if slices.Equal(s.Types, []string{"null", "object"}) {
		s.Type, s.Types = "object", nil
	}
	return s, r.defaults, nil
}

// refiner applies field tags to an inferred schema.
type refiner struct {
	defaults bool // a default tag was applied
}

// refine walks t alongside its inferred schema s and applies the field tags
// described at schemaFor.
func (r *refiner) refine(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return r.refine(t.Elem(), s.Items)
	case reflect.Map:
		return r.refine(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous || !f.IsExported() {
				continue
			}
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if err := r.applyTags(f, ps); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
			if err := r.refine(f.Type, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName returns the JSON property name of f, or false when encoding/json
// skips it.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// applyTags applies the enum, default, minimum, maximum and pattern tags of f
// to its schema s.
func (r *refiner) applyTags(f reflect.StructField, s *jsonschema.Schema) error {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if v, ok := f.Tag.Lookup("enum"); ok {
		target, kind := s, ft.Kind()
		if (kind == reflect.Slice || kind == reflect.Array) && s.Items != nil {
			target, kind = s.Items, derefKind(ft.Elem())
		}
		for _, word := range strings.Split(v, ",") {
			val, err := parseTagValue(kind, strings.TrimSpace(word))
			if err != nil {
				return fmt.Errorf("enum tag: %w", err)
			}
			target.Enum = append(target.Enum, val)
		}
	}
	if v, ok := f.Tag.Lookup("default"); ok {
		val, err := parseTagValue(ft.Kind(), v)
		if err != nil {
			return fmt.Errorf("default tag: %w", err)
		}
		raw, err := json.Marshal(val)
		if err != nil {
			return fmt.Errorf("default tag: %w", err)
		}
		s.Default = raw
		r.defaults = true
	}
	for _, bound := range []struct {
		tag string
		dst **float64
	}{{"minimum", &s.Minimum}, {"maximum", &s.Maximum}} {
		v, ok := f.Tag.Lookup(bound.tag)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s tag %q is not a number", bound.tag, v)
		}
		*bound.dst = &n
	}
	if v, ok := f.Tag.Lookup("pattern"); ok {
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Errorf("pattern tag: %w", err)
		}
		s.Pattern = v
	}
	if s.Default != nil {
		v, err := compileValidator(s)
		if err != nil {
			return err
		}
		var d any
		if err := json.Unmarshal(s.Default, &d); err != nil {
			return fmt.Errorf("default tag: %w", err)
		}
		if e := v.check(f.Name, d); e != nil {
			return fmt.Errorf("default tag: %s", e.Message)
		}
	}
	return nil
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// parseTagValue converts a tag word to the JSON value of a field of kind k.
func parseTagValue(k reflect.Kind, word string) (any, error) {
	switch k {
	case reflect.String:
		return word, nil
	case reflect.Bool:
		return strconv.ParseBool(word)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseInt(word, 10, 64)
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(word, 64)
	}
	return nil, fmt.Errorf("%q: fields of kind %s take no enum or default tag", word, k)
}
