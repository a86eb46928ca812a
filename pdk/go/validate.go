package pdk

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// validator checks a decoded JSON value (the result of json.Unmarshal into
// an any) against the subset of JSON Schema that schemaFor generates: type,
// enum, minimum, maximum, pattern, minItems, maxItems, properties, required,
// additionalProperties and items. It is the reference for what a tool
// accepts: the single-pass decoder (decode.go) takes the common case, and
// any input it does not take is checked here, which also words the error.
type validator struct {
	types      []string // allowed JSON types; empty allows any
	enum       []any
	minimum    *float64
	maximum    *float64
	pattern    *regexp.Regexp
	minItems   *int
	maxItems   *int
	required   []string
	properties map[string]*validator
	additional *validator // schema of properties not listed; nil allows any
	closed     bool       // additionalProperties: false
	items      *validator
}

// compileValidator compiles s.
func compileValidator(s *schema) (*validator, error) {
	if s == nil {
		return nil, nil
	}
	v := &validator{enum: s.enum, minimum: s.minimum, maximum: s.maximum, minItems: s.minItems,
		maxItems: s.maxItems, required: s.required, closed: s.closed}
	switch {
	case s.typ != "":
		v.types = []string{s.typ}
	case len(s.types) > 0:
		v.types = s.types
	}
	if s.pattern != "" {
		re, err := regexp.Compile(s.pattern)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", s.pattern, err)
		}
		v.pattern = re
	}
	var err error
	if len(s.properties) > 0 {
		v.properties = make(map[string]*validator, len(s.properties))
		for name, ps := range s.properties {
			if v.properties[name], err = compileValidator(ps); err != nil {
				return nil, err
			}
		}
	}
	if v.additional, err = compileValidator(s.additional); err != nil {
		return nil, err
	}
	if v.items, err = compileValidator(s.items); err != nil {
		return nil, err
	}
	return v, nil
}

// check validates value found at path ("" for the input itself).
func (v *validator) check(path string, value any) *Error {
	if v == nil {
		return nil
	}
	got := jsonTypeOf(value)
	if len(v.types) > 0 && !slices.ContainsFunc(v.types, func(t string) bool { return t == got || (t == "number" && got == "integer") }) {
		if path == "" {
			return InvalidArguments("the input must be a JSON object, not %s", article(got))
		}
		return fieldError(path, "expected %s, got %s", strings.Join(v.types, " or "), got)
	}
	if len(v.enum) > 0 && !slices.ContainsFunc(v.enum, func(e any) bool { return sameJSON(e, value) }) {
		words := make([]string, len(v.enum))
		for i, e := range v.enum {
			b, _ := json.Marshal(e)
			words[i] = string(b)
		}
		b, _ := json.Marshal(value)
		return fieldError(path, "must be one of %s; got %s", strings.Join(words, ", "), b)
	}
	switch value := value.(type) {
	case float64:
		if v.minimum != nil && value < *v.minimum {
			return fieldError(path, "must be at least %s, got %s", number(*v.minimum), number(value))
		}
		if v.maximum != nil && value > *v.maximum {
			return fieldError(path, "must be at most %s, got %s", number(*v.maximum), number(value))
		}
	case string:
		if v.pattern != nil && !v.pattern.MatchString(value) {
			return fieldError(path, "%q does not match the pattern %s", value, v.pattern)
		}
	case []any:
		if v.minItems != nil && len(value) < *v.minItems {
			return fieldError(path, "must have at least %d items, got %d", *v.minItems, len(value))
		}
		if v.maxItems != nil && len(value) > *v.maxItems {
			return fieldError(path, "must have at most %d items, got %d", *v.maxItems, len(value))
		}
		for i, item := range value {
			if e := v.items.check(path+"["+strconv.Itoa(i)+"]", item); e != nil {
				return e
			}
		}
	case map[string]any:
		return v.checkObject(path, value)
	}
	return nil
}

func (v *validator) checkObject(path string, obj map[string]any) *Error {
	for _, name := range v.required {
		if _, ok := obj[name]; !ok {
			return fieldError(join(path, name), "missing required field")
		}
	}
	// Report problems in a stable order: the order of the keys is random.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pv, declared := v.properties[k]
		switch {
		case declared:
		case v.closed:
			return fieldError(join(path, k), "unknown field")
		default:
			pv = v.additional
		}
		if e := pv.check(join(path, k), obj[k]); e != nil {
			return e
		}
	}
	return nil
}

// fieldError is INVALID_ARGUMENTS naming the field. "missing required field"
// and "unknown field" read better with the field after them.
func fieldError(path, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	var e *Error
	if msg == "missing required field" || msg == "unknown field" {
		e = InvalidArguments("%s %q", msg, path)
	} else {
		e = InvalidArguments("field %q: %s", path, msg)
	}
	return e.WithDetails(map[string]string{"field": path})
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonTypeOf names the JSON type of a value decoded into any; integral
// numbers are "integer".
func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func article(jsonType string) string {
	switch jsonType {
	case "null":
		return "null"
	case "array", "integer", "object":
		return "an " + jsonType
	}
	return "a " + jsonType
}

// sameJSON compares an enum value (string, int64, float64 or bool from a
// tag) with a decoded JSON value.
func sameJSON(enum, value any) bool {
	switch e := enum.(type) {
	case int64:
		f, ok := value.(float64)
		return ok && f == float64(e)
	case float64:
		f, ok := value.(float64)
		return ok && f == e
	}
	return enum == value
}

// number prints a float the way a person writes it (100, not 100.000000).
func number(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
