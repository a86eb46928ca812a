package pdk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// schema is the subset of JSON Schema the PDK generates for a Go type. It
// is written by appendJSON in the shape github.com/google/jsonschema-go
// gives the same schema (the PDK used that library before; dropping it took
// about half of a plugin instance's start-up cost), so manifests did not
// change.
type schema struct {
	typ         string   // "type" when it is one word
	types       []string // "type" when it is a list (["null","array"])
	properties  map[string]*schema
	order       []string // property order: the fields' order
	items       *schema
	description string
	def         json.RawMessage // "default"
	enum        []any           // string, int64, float64 or bool
	minimum     *float64
	maximum     *float64
	pattern     string
	minItems    *int
	maxItems    *int
	required    []string
	// additional is additionalProperties; closed (a struct) writes false.
	additional *schema
	closed     bool
}

// schemaFor returns the JSON Schema of t (json tags name properties, fields
// without omitempty or omitzero are required, a `jsonschema:"..."` tag is the
// description, structs allow no additional properties), refined by these
// field tags:
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
func schemaFor(t reflect.Type) (s *schema, hasDefaults bool, err error) {
	s, err = inferSchema(t, map[reflect.Type]bool{})
	if err != nil {
		return nil, false, fmt.Errorf("schema of %s: %w", t, err)
	}
	r := &refiner{}
	if err := r.refine(t, s); err != nil {
		return nil, false, err
	}
	if slices.Equal(s.types, []string{"null", "object"}) {
		s.typ, s.types = "object", nil
	}
	return s, r.defaults, nil
}

// isStringSchemaType reports whether t is one of the standard library types
// that encode as JSON strings through their own methods. They are
// recognised by name so that the packages are not linked into every plugin.
func isStringSchemaType(t reflect.Type) bool {
	switch t.PkgPath() {
	case "time":
		return t.Name() == "Time"
	case "log/slog":
		return t.Name() == "Level"
	case "math/big":
		return t.Name() == "Int" || t.Name() == "Rat" || t.Name() == "Float"
	}
	return false
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// inferSchema returns the schema of t before field tags are applied. seen
// holds the named types on the path from the root, to refuse cycles.
func inferSchema(t reflect.Type, seen map[reflect.Type]bool) (*schema, error) {
	nullable := false
	for t.Kind() == reflect.Pointer {
		nullable = true
		t = t.Elem()
	}
	if t.Name() != "" {
		if seen[t] {
			return nil, fmt.Errorf("cycle detected for type %v", t)
		}
		seen[t] = true
		defer delete(seen, t)
	}
	s := &schema{}
	if isStringSchemaType(t) {
		s.typ = "string"
		if nullable {
			s.typ, s.types = "", []string{"null", "string"}
		}
		return s, nil
	}
	switch k := t.Kind(); k {
	case reflect.Bool:
		s.typ = "boolean"
	case reflect.Int, reflect.Int64:
		s.typ = "integer"
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		s.typ = "integer"
		s.minimum = floatPtr(0)
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		s.typ = "integer"
		s.minimum = floatPtr(-math.Exp2(float64(bits - 1)))
		s.maximum = floatPtr(math.Exp2(float64(bits-1)) - 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		s.typ = "integer"
		s.minimum = floatPtr(0)
		s.maximum = floatPtr(math.Exp2(float64(t.Bits())) - 1)
	case reflect.Float32, reflect.Float64:
		s.typ = "number"
	case reflect.String:
		s.typ = "string"
	case reflect.Interface:
		// Any value.
	case reflect.Map:
		if t.Key().Kind() != reflect.String && !t.Key().Implements(textMarshalerType) {
			return nil, fmt.Errorf("unsupported map key type %v", t.Key().Kind())
		}
		s.typ = "object"
		elem, err := inferSchema(t.Elem(), seen)
		if err != nil {
			return nil, fmt.Errorf("computing map value schema: %v", err)
		}
		s.additional = elem
	case reflect.Slice, reflect.Array:
		if k == reflect.Slice {
			s.types = []string{"null", "array"}
		} else {
			s.typ = "array"
			n := t.Len()
			s.minItems, s.maxItems = &n, &n
		}
		items, err := inferSchema(t.Elem(), seen)
		if err != nil {
			return nil, fmt.Errorf("computing element schema: %v", err)
		}
		s.items = items
	case reflect.Struct:
		if err := inferStruct(t, s, seen); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("type %v is unsupported: it has no JSON Schema", t)
	}
	if nullable && s.typ != "" {
		s.typ, s.types = "", []string{"null", s.typ}
	}
	return s, nil
}

// inferStruct fills s with the properties of struct type t: its visible
// exported fields, named by their json tags.
func inferStruct(t reflect.Type, s *schema, seen map[reflect.Type]bool) error {
	s.typ = "object"
	s.closed = true
	for _, f := range reflect.VisibleFields(t) {
		if s.properties == nil {
			s.properties = map[string]*schema{}
		}
		if f.Anonymous {
			if isStringSchemaType(f.Type) {
				return fmt.Errorf(`custom schema for embedded struct must have type "object", got "string"`)
			}
			continue
		}
		name, opts, ok := fieldJSONName(f)
		if !ok {
			continue
		}
		fs, err := inferSchema(f.Type, seen)
		if err != nil {
			return err
		}
		if tag, ok := f.Tag.Lookup("jsonschema"); ok {
			if tag == "" {
				return fmt.Errorf("empty jsonschema tag on struct field %s.%s", t, f.Name)
			}
			if startsWithAssignment(tag) {
				return fmt.Errorf("tag must not begin with 'WORD=': %q", tag)
			}
			fs.description = tag
		}
		s.properties[name] = fs
		// A later field of the same name replaces the earlier one.
		s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
		s.order = append(s.order, name)
		if !hasTagOption(opts, "omitempty") && !hasTagOption(opts, "omitzero") {
			s.required = append(s.required, name)
		}
	}
	return nil
}

// fieldJSONName returns the JSON name of an exported field and the options
// of its json tag; ok is false for unexported fields and json:"-".
func fieldJSONName(f reflect.StructField) (name, opts string, ok bool) {
	if !f.IsExported() {
		return "", "", false
	}
	tag, hasTag := f.Tag.Lookup("json")
	if !hasTag {
		return f.Name, "", true
	}
	name, opts, found := strings.Cut(tag, ",")
	if name == "-" && !found {
		return "", "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, opts, true
}

// hasTagOption reports whether the comma-separated json tag options hold
// option.
func hasTagOption(opts, option string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == option {
			return true
		}
	}
	return false
}

// startsWithAssignment reports whether tag starts with a word (no spaces)
// followed by '=': jsonschema tags reserve that form.
func startsWithAssignment(tag string) bool {
	for i := 0; i < len(tag); i++ {
		switch tag[i] {
		case '=':
			return true
		case ' ', '\t', '\n':
			return false
		}
	}
	return false
}

func floatPtr(f float64) *float64 { return &f }

// refiner applies field tags to an inferred schema.
type refiner struct {
	defaults bool // a default tag was applied
}

// refine walks t alongside its inferred schema s and applies the field tags
// described at schemaFor.
func (r *refiner) refine(t reflect.Type, s *schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return r.refine(t.Elem(), s.items)
	case reflect.Map:
		return r.refine(t.Elem(), s.additional)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous {
				continue
			}
			name, _, ok := fieldJSONName(f)
			if !ok {
				continue
			}
			ps := s.properties[name]
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

// applyTags applies the enum, default, minimum, maximum and pattern tags of f
// to its schema s.
func (r *refiner) applyTags(f reflect.StructField, s *schema) error {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if v, ok := f.Tag.Lookup("enum"); ok {
		target, kind := s, ft.Kind()
		if (kind == reflect.Slice || kind == reflect.Array) && s.items != nil {
			target, kind = s.items, derefKind(ft.Elem())
		}
		for _, word := range strings.Split(v, ",") {
			val, err := parseTagValue(kind, strings.TrimSpace(word))
			if err != nil {
				return fmt.Errorf("enum tag: %w", err)
			}
			target.enum = append(target.enum, val)
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
		s.def = raw
		r.defaults = true
	}
	for _, bound := range []struct {
		tag string
		dst **float64
	}{{"minimum", &s.minimum}, {"maximum", &s.maximum}} {
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
		s.pattern = v
	}
	if s.def != nil {
		v, err := compileValidator(s)
		if err != nil {
			return err
		}
		var d any
		if err := json.Unmarshal(s.def, &d); err != nil {
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

// marshal returns the schema as JSON: keys in a fixed order, properties in
// field order, an empty schema as true.
func (s *schema) marshal() ([]byte, error) {
	return s.appendJSON(nil)
}

func (s *schema) appendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, '{')
	var err error
	key := func(name string) {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	value := func(v any) {
		if err != nil {
			return
		}
		var raw []byte
		if raw, err = json.Marshal(v); err == nil {
			b = append(b, raw...)
		}
	}
	switch {
	case s.typ != "":
		key("type")
		value(s.typ)
	case s.types != nil:
		key("type")
		value(s.types)
	}
	if s.properties != nil {
		key("properties")
		b = append(b, '{')
		for i, name := range s.propertyOrder() {
			if i > 0 {
				b = append(b, ',')
			}
			value(name)
			b = append(b, ':')
			if err == nil {
				b, err = s.properties[name].appendJSON(b)
			}
		}
		b = append(b, '}')
	}
	if s.items != nil && err == nil {
		key("items")
		b, err = s.items.appendJSON(b)
	}
	if s.description != "" {
		key("description")
		value(s.description)
	}
	if len(s.def) > 0 {
		key("default")
		value(s.def)
	}
	if len(s.enum) > 0 {
		key("enum")
		value(s.enum)
	}
	if s.minimum != nil {
		key("minimum")
		value(*s.minimum)
	}
	if s.maximum != nil {
		key("maximum")
		value(*s.maximum)
	}
	if s.pattern != "" {
		key("pattern")
		value(s.pattern)
	}
	if s.minItems != nil {
		key("minItems")
		value(*s.minItems)
	}
	if s.maxItems != nil {
		key("maxItems")
		value(*s.maxItems)
	}
	if len(s.required) > 0 {
		key("required")
		value(s.required)
	}
	switch {
	case s.closed:
		key("additionalProperties")
		b = append(b, "false"...)
	case s.additional != nil && err == nil:
		key("additionalProperties")
		b, err = s.additional.appendJSON(b)
	}
	if err != nil {
		return nil, err
	}
	if len(b) == start+1 {
		return append(b[:start], "true"...), nil
	}
	return append(b, '}'), nil
}

// propertyOrder lists the properties in field order, then any others
// sorted.
func (s *schema) propertyOrder() []string {
	names := slices.Clone(s.order)
	var rest []string
	for name := range s.properties {
		if !slices.Contains(s.order, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}
