package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits of one check.
const (
	// MaxProblems caps the problems reported for one value; the last one
	// says how many more there were.
	MaxProblems = 20
	// MaxDepth caps how deep the walker descends into nested arguments.
	MaxDepth = 64
)

// ErrSchema is wrapped by Compile when the schema cannot be used.
var ErrSchema = errors.New("unusable input schema")

// Problem is one way arguments fail their schema.
type Problem struct {
	// Path locates the failing value: "$" is the whole arguments object,
	// "$.owner" a property, "$.labels[2]" an array item, "$['a b']" a
	// property whose name is not an identifier.
	Path string `json:"path"`
	// Message says what is wrong with the value at Path.
	Message string `json:"message"`
}

// Schema is a compiled input schema. It is safe for concurrent use.
type Schema struct {
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	draft7   bool
	patterns map[*jsonschema.Schema]*regexp.Regexp
	props    map[*jsonschema.Schema][]patternProp
}

type patternProp struct {
	re     *regexp.Regexp
	schema *jsonschema.Schema
}

const draft7URI = "http://json-schema.org/draft-07/schema"

// Compile parses and resolves a JSON Schema for arguments. An empty or null
// schema means any object.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	resolved, err := root.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	s := &Schema{
		root:     &root,
		resolved: resolved,
		draft7:   strings.TrimSuffix(root.Schema, "#") == draft7URI,
		patterns: map[*jsonschema.Schema]*regexp.Regexp{},
		props:    map[*jsonschema.Schema][]patternProp{},
	}
	for _, sub := range walked(&root) {
		if sub.Pattern != "" {
			re, err := regexp.Compile(sub.Pattern)
			if err != nil {
				return nil, fmt.Errorf("%w: pattern %q: %v", ErrSchema, sub.Pattern, err)
			}
			s.patterns[sub] = re
		}
		keys := make([]string, 0, len(sub.PatternProperties))
		for k := range sub.PatternProperties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			re, err := regexp.Compile(k)
			if err != nil {
				return nil, fmt.Errorf("%w: patternProperties %q: %v", ErrSchema, k, err)
			}
			s.props[sub] = append(s.props[sub], patternProp{re: re, schema: sub.PatternProperties[k]})
		}
	}
	return s, nil
}

// walked lists the schemas the walker may visit: root and, recursively, its
// allOf, properties, patternProperties, additionalProperties and items.
func walked(root *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	var visit func(s *jsonschema.Schema, depth int)
	visit = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > MaxDepth {
			return
		}
		out = append(out, s)
		children := slices.Concat(s.AllOf, s.PrefixItems, s.ItemsArray,
			[]*jsonschema.Schema{s.Items, s.AdditionalItems, s.AdditionalProperties})
		for _, c := range children {
			visit(c, depth+1)
		}
		for _, c := range s.Properties {
			visit(c, depth+1)
		}
		for _, c := range s.PatternProperties {
			visit(c, depth+1)
		}
	}
	visit(root, 0)
	return out
}

// Check validates arguments, which must be a JSON object (empty or null
// means {}), and returns every problem found in a stable order, or nil when
// the arguments are valid.
func (s *Schema) Check(args json.RawMessage) []Problem {
	instance, problem := decode(args)
	if problem != nil {
		return []Problem{*problem}
	}
	return s.CheckValue(instance)
}

// CheckValue is Check for arguments already decoded with encoding/json into
// map[string]any.
func (s *Schema) CheckValue(instance any) []Problem {
	w := &walker{s: s}
	w.walk("$", instance, s.root, 0)
	if len(w.problems) > 0 {
		return w.finish()
	}
	if err := s.resolved.Validate(instance); err != nil {
		return []Problem{authorityProblem(err)}
	}
	return nil
}

// decode turns raw arguments into the value the validators see.
func decode(args json.RawMessage) (any, *Problem) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return nil, &Problem{Path: "$", Message: "arguments are not valid JSON: " + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &Problem{Path: "$", Message: fmt.Sprintf("arguments must be a JSON object, got %s", typeOf(v))}
	}
	return v, nil
}

// authorityProblem turns a jsonschema-go error into a problem. Its first
// line reads "validating root: validating /properties/x: <keyword>: <what>";
// the deepest schema location that names properties or items becomes the
// path, and the lines after it (the alternatives of an anyOf or oneOf) are
// summarised after the message.
func authorityProblem(err error) Problem {
	lines := strings.Split(err.Error(), "\n")
	path, msg := splitValidating(lines[0])
	msg = strings.TrimSuffix(msg, ":")
	if i := strings.Index(msg, " any of ["); i >= 0 {
		msg = msg[:i] + " any of the allowed alternatives"
	}
	var details []string
	for _, l := range lines[1:] {
		if _, d := splitValidating(l); d != "" {
			details = append(details, d)
		}
	}
	if len(details) > 0 {
		msg += " (" + strings.Join(details, "; ") + ")"
	}
	if len(msg) > 400 {
		msg = msg[:397] + "..."
	}
	return Problem{Path: path, Message: msg}
}

// splitValidating splits "validating A: validating B: msg" into the instance
// path of the deepest usable schema location and msg.
func splitValidating(line string) (path, msg string) {
	path, msg = "$", line
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return path, msg
		}
		loc, after, ok := strings.Cut(rest, ": ")
		if !ok {
			return path, msg
		}
		if p, ok := instancePath(loc); ok {
			path = p
		}
		msg = after
	}
}

// instancePath maps a schema location such as /properties/a/items to the
// instance path $.a[*]. Locations through $defs, combinators or other
// keywords do not map.
func instancePath(loc string) (string, bool) {
	if loc == "root" {
		return "$", true
	}
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	path := "$"
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 >= len(parts) {
				return "", false
			}
			i++
			path = member(path, strings.ReplaceAll(strings.ReplaceAll(parts[i], "~1", "/"), "~0", "~"))
		case "items", "additionalItems":
			path += "[*]"
		case "prefixItems":
			if i+1 >= len(parts) {
				return "", false
			}
			i++
			path += "[" + parts[i] + "]"
		default:
			return "", false
		}
	}
	return path, true
}

type walker struct {
	s        *Schema
	problems []Problem
	dropped  int
}

func (w *walker) add(path, format string, args ...any) {
	if len(w.problems) >= MaxProblems-1 {
		w.dropped++
		return
	}
	w.problems = append(w.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (w *walker) finish() []Problem {
	if w.dropped > 0 {
		w.problems = append(w.problems, Problem{Path: "$", Message: fmt.Sprintf("%d more problems not shown", w.dropped)})
	}
	return w.problems
}

// walk checks the keywords of schema that it can attribute to a path and
// descends into properties and items. Keywords it cannot attribute (anyOf,
// oneOf, not, if/then/else, $ref, unevaluated*, uniqueItems, contains,
// multipleOf, dependent*, propertyNames) are left to the full validator.
func (w *walker) walk(path string, v any, schema *jsonschema.Schema, depth int) {
	if schema == nil || depth > MaxDepth {
		return
	}
	if isFalse(schema) {
		w.add(path, "no value is allowed here")
		return
	}
	if schema.Ref != "" || schema.DynamicRef != "" {
		// In draft-07 a $ref replaces its siblings; in 2020-12 it does not,
		// but the referenced schema is the full validator's job either way.
		if w.s.draft7 {
			return
		}
	}
	for _, sub := range schema.AllOf {
		w.walk(path, v, sub, depth+1)
	}
	if !w.checkType(path, v, schema) {
		return
	}
	if len(schema.Enum) > 0 && !slices.ContainsFunc(schema.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		w.add(path, "must be one of %s, got %s", compact(schema.Enum), compact(v))
	}
	if schema.Const != nil && !jsonEqual(*schema.Const, v) {
		w.add(path, "must be %s, got %s", compact(*schema.Const), compact(v))
	}
	switch x := v.(type) {
	case float64:
		w.checkNumber(path, x, schema)
	case string:
		w.checkString(path, x, schema)
	case []any:
		w.checkArray(path, x, schema, depth)
	case map[string]any:
		w.checkObject(path, x, schema, depth)
	}
}

// checkType reports a type mismatch and whether the value's type fits.
func (w *walker) checkType(path string, v any, schema *jsonschema.Schema) bool {
	want := schema.Types
	if schema.Type != "" {
		want = []string{schema.Type}
	}
	if len(want) == 0 {
		return true
	}
	got := typeOf(v)
	for _, t := range want {
		if t == got || (t == "number" && got == "integer") {
			return true
		}
	}
	w.add(path, "must be %s, got %s", strings.Join(want, " or "), got)
	return false
}

func (w *walker) checkNumber(path string, n float64, schema *jsonschema.Schema) {
	switch {
	case schema.Minimum != nil && n < *schema.Minimum:
		w.add(path, "must be at least %s, got %s", num(*schema.Minimum), num(n))
	case schema.ExclusiveMinimum != nil && n <= *schema.ExclusiveMinimum:
		w.add(path, "must be greater than %s, got %s", num(*schema.ExclusiveMinimum), num(n))
	}
	switch {
	case schema.Maximum != nil && n > *schema.Maximum:
		w.add(path, "must be at most %s, got %s", num(*schema.Maximum), num(n))
	case schema.ExclusiveMaximum != nil && n >= *schema.ExclusiveMaximum:
		w.add(path, "must be less than %s, got %s", num(*schema.ExclusiveMaximum), num(n))
	}
}

func (w *walker) checkString(path, str string, schema *jsonschema.Schema) {
	n := utf8.RuneCountInString(str)
	if schema.MinLength != nil && n < *schema.MinLength {
		w.add(path, "must be at least %d characters long, got %d", *schema.MinLength, n)
	}
	if schema.MaxLength != nil && n > *schema.MaxLength {
		w.add(path, "must be at most %d characters long, got %d", *schema.MaxLength, n)
	}
	if re := w.s.patterns[schema]; re != nil && !re.MatchString(str) {
		w.add(path, "must match the pattern %s", schema.Pattern)
	}
}

func (w *walker) checkArray(path string, items []any, schema *jsonschema.Schema, depth int) {
	if schema.MinItems != nil && len(items) < *schema.MinItems {
		w.add(path, "must have at least %d items, got %d", *schema.MinItems, len(items))
	}
	if schema.MaxItems != nil && len(items) > *schema.MaxItems {
		w.add(path, "must have at most %d items, got %d", *schema.MaxItems, len(items))
	}
	prefix := schema.PrefixItems
	if w.s.draft7 {
		prefix = schema.ItemsArray
	}
	for i, item := range items {
		var sub *jsonschema.Schema
		switch {
		case i < len(prefix):
			sub = prefix[i]
		case w.s.draft7 && schema.ItemsArray != nil:
			sub = schema.AdditionalItems
		default:
			sub = schema.Items
		}
		if sub != nil {
			w.walk(path+"["+strconv.Itoa(i)+"]", item, sub, depth+1)
		}
	}
}

func (w *walker) checkObject(path string, obj map[string]any, schema *jsonschema.Schema, depth int) {
	for _, name := range schema.Required {
		if _, ok := obj[name]; !ok {
			w.add(member(path, name), "is required")
		}
	}
	if schema.MinProperties != nil && len(obj) < *schema.MinProperties {
		w.add(path, "must have at least %d properties, got %d", *schema.MinProperties, len(obj))
	}
	if schema.MaxProperties != nil && len(obj) > *schema.MaxProperties {
		w.add(path, "must have at most %d properties, got %d", *schema.MaxProperties, len(obj))
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	patterns := w.s.props[schema]
	for _, name := range names {
		p := member(path, name)
		evaluated := false
		if sub, ok := schema.Properties[name]; ok {
			w.walk(p, obj[name], sub, depth+1)
			evaluated = true
		}
		for _, pp := range patterns {
			if pp.re.MatchString(name) {
				w.walk(p, obj[name], pp.schema, depth+1)
				evaluated = true
			}
		}
		if evaluated || schema.AdditionalProperties == nil {
			continue
		}
		if isFalse(schema.AdditionalProperties) {
			w.add(p, "is not a known property%s", knownProperties(schema))
			continue
		}
		w.walk(p, obj[name], schema.AdditionalProperties, depth+1)
	}
}

// knownProperties lists a schema's declared properties for an error message.
func knownProperties(schema *jsonschema.Schema) string {
	if len(schema.Properties) == 0 {
		return ""
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > 12 {
		names = append(names[:12], "...")
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}

// isFalse reports the schema `false`, which jsonschema-go reads as {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// member is the path of a property of the value at path.
func member(path, name string) string {
	if identRe.MatchString(name) {
		return path + "." + name
	}
	q, _ := json.Marshal(name)
	return path + "[" + string(q) + "]"
}

// typeOf names the JSON type of a value decoded by encoding/json.
func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, f := math.Modf(x); f == 0 {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// jsonEqual compares two values decoded by encoding/json.
func jsonEqual(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// normalize maps the numeric types a schema's enum may hold to float64.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x
		}
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

// compact renders a value for a message, at most 80 bytes.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
