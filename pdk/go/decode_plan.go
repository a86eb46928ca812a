package pdk

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"sync"
)

// This file compiles decoding plans: for each Go type, what decode.go
// needs to write JSON straight into it without reflection per value.
//
// A strict plan belongs to a tool's input and carries its schema's
// constraints (decodeFast); a lenient plan decodes like json.Unmarshal:
// unknown keys are skipped and nothing is required (decodeLenient). Types a
// plan cannot decode exactly like encoding/json get no plan, and their
// values go through encoding/json.

// decKind is what a plan node decodes into.
type decKind uint8

const (
	decNone decKind = iota // no default
	decString
	decBool
	decInt
	decUint
	decFloat
	decStruct
	decSlice
	decArray
	decMap
	decPointer
	decAny
)

// decNode is the plan for one Go type (at one place in the input schema,
// for a strict plan).
type decNode struct {
	kind    decKind
	typ     reflect.Type
	bits    int  // integer and float width
	lenient bool // json.Unmarshal's rules, not a schema's

	// nullable: a JSON null is valid here (it leaves the zero value).
	nullable bool
	// Constraints of the schema at this place (strict plans).
	enumStrings []string
	enumNumbers []float64
	enumBools   []bool
	hasEnum     bool
	minimum     *float64
	maximum     *float64
	pattern     *regexp.Regexp
	minItems    int // -1: none
	maxItems    int // -1: none

	fields    []decField // struct
	keys      keyTable   // struct: the fields by name
	required  uint64     // bit i: fields[i] must be present
	defaulted uint64     // bit i: fields[i] has a default
	elem      *decNode   // slice, array, map value, pointer target
	length    int        // array length
}

// decField is one property of a struct plan.
type decField struct {
	name   string
	offset uintptr
	node   *decNode
	def    fieldDefault
}

// fieldDefault is the value a default tag gives a field.
type fieldDefault struct {
	kind  decKind // decNone: no default; decString ... decFloat: a plain field; decPointer: a pointer
	bits  int
	str   string
	num   int64
	unum  uint64
	float float64
	truth bool
	value reflect.Value // decPointer: the default, copied for each use
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// maxPlanFields is the most fields a struct plan tracks (one bit each).
const maxPlanFields = 64

// newDecNode starts the plan of t: its kind, or false when no plan can
// decode t like encoding/json (a type with its own unmarshaling,
// json.Number, []byte, a non-empty interface, a map without string keys,
// channels and the like).
func newDecNode(t reflect.Type) (*decNode, bool) {
	n := &decNode{typ: t, minItems: -1, maxItems: -1}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		return nil, false
	}
	if t == jsonNumberType {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		n.kind = decString
	case reflect.Bool:
		n.kind = decBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits = decInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n.kind, n.bits = decUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		n.kind, n.bits = decFloat, t.Bits()
	case reflect.Pointer:
		n.kind = decPointer
	case reflect.Interface:
		n.kind = decAny
		if t.NumMethod() != 0 {
			return nil, false
		}
	case reflect.Slice:
		n.kind = decSlice
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // []byte is base64 in encoding/json
		}
	case reflect.Array:
		n.kind, n.length = decArray, t.Len()
	case reflect.Map:
		n.kind = decMap
		if kt := t.Key(); kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
			return nil, false
		}
	case reflect.Struct:
		n.kind = decStruct
	default:
		return nil, false
	}
	return n, true
}

// compileDecoder returns the strict plan for decoding t where the input
// schema is s, or false when the fast path cannot take the type: then every
// input goes through the reference path.
func compileDecoder(t reflect.Type, s *schema) (*decNode, bool) {
	if s == nil {
		return nil, false
	}
	n, ok := newDecNode(t)
	if !ok {
		return nil, false
	}
	n.minimum, n.maximum = s.minimum, s.maximum
	n.nullable = s.typ == "" && (len(s.types) == 0 || slices.Contains(s.types, "null"))
	if s.pattern != "" {
		re, err := regexp.Compile(s.pattern)
		if err != nil {
			return nil, false
		}
		n.pattern = re
	}
	if s.minItems != nil {
		n.minItems = *s.minItems
	}
	if s.maxItems != nil {
		n.maxItems = *s.maxItems
	}
	if len(s.enum) > 0 {
		n.hasEnum = true
		// null is never in an enum made from tags, so an enum rules it out.
		n.nullable = false
		for _, e := range s.enum {
			switch e := e.(type) {
			case string:
				n.enumStrings = append(n.enumStrings, e)
			case bool:
				n.enumBools = append(n.enumBools, e)
			case int64:
				n.enumNumbers = append(n.enumNumbers, float64(e))
			case float64:
				n.enumNumbers = append(n.enumNumbers, e)
			default:
				return nil, false
			}
		}
	}
	switch n.kind {
	case decPointer:
		// A pointer shares its target's schema; null is decided here.
		if n.elem, ok = compileDecoder(t.Elem(), s); ok {
			n.elem.nullable = false
		}
	case decAny:
		// Constraints on an any would need the reference validator.
		ok = !n.hasEnum && n.minimum == nil && n.maximum == nil && n.pattern == nil && n.minItems < 0 && n.maxItems < 0
	case decSlice:
		n.elem, ok = compileDecoder(t.Elem(), s.items)
	case decArray:
		n.elem, ok = compileDecoder(t.Elem(), s.items)
		ok = ok && n.maxItems >= 0 && n.maxItems <= n.length
	case decMap:
		n.elem, ok = compileDecoder(t.Elem(), s.additional)
	case decStruct:
		ok = n.compileStruct(t, s)
	}
	if !ok {
		return nil, false
	}
	return n, true
}

// lenientPlans caches the lenient plans of the types passed to
// decodeJSON.
var lenientPlans = struct {
	mu    sync.Mutex
	plans map[reflect.Type]*decNode // nil value: no plan
}{plans: map[reflect.Type]*decNode{}}

// lenientPlan returns the cached lenient plan of t, or nil.
func lenientPlan(t reflect.Type) *decNode {
	lenientPlans.mu.Lock()
	defer lenientPlans.mu.Unlock()
	n, done := lenientPlans.plans[t]
	if !done {
		n, _ = compileLenient(t, map[reflect.Type]*decNode{})
		lenientPlans.plans[t] = n
	}
	return n
}

// compileLenient returns the lenient plan of t. building holds the plans
// under construction, for recursive types.
func compileLenient(t reflect.Type, building map[reflect.Type]*decNode) (*decNode, bool) {
	if n, ok := building[t]; ok {
		return n, true
	}
	n, ok := newDecNode(t)
	if !ok {
		return nil, false
	}
	n.lenient, n.nullable = true, true
	building[t] = n
	switch n.kind {
	case decPointer, decSlice, decArray, decMap:
		n.elem, ok = compileLenient(t.Elem(), building)
	case decStruct:
		var fields []planField
		if fields, ok = structFields(t, 0, nil); !ok || len(fields) > maxPlanFields {
			return nil, false
		}
		for _, f := range fields {
			if !asciiName(f.name) {
				return nil, false // encoding/json folds keys with Unicode rules
			}
			node, ok := compileLenient(f.typ, building)
			if !ok {
				return nil, false
			}
			n.fields = append(n.fields, decField{name: f.name, offset: f.offset, node: node})
		}
		n.keys = newKeyTable(n.fields)
	}
	if !ok {
		return nil, false
	}
	return n, true
}

func asciiName(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	return true
}

// planField is a field encoding/json would fill, found by walking the
// struct and its embedded structs.
type planField struct {
	name   string
	opts   string // json tag options
	offset uintptr
	typ    reflect.Type
}

// structFields lists the fields encoding/json decodes into or encodes from
// for struct t, flattening embedded structs. It returns false for what the
// plans leave to encoding/json: embedded pointers or tagged embedded
// structs, tag names encoding/json would not accept, the ",string" option,
// and two fields of the same JSON name anywhere in the tree (which
// encoding/json resolves by depth and tags).
func structFields(t reflect.Type, base uintptr, out []planField) ([]planField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		_, tagged := f.Tag.Lookup("json")
		if f.Anonymous {
			if tagged || f.Type.Kind() == reflect.Pointer {
				return nil, false
			}
			if f.Type.Kind() == reflect.Struct {
				var ok bool
				if out, ok = structFields(f.Type, base+f.Offset, out); !ok {
					return nil, false
				}
				continue
			}
			if f.IsExported() {
				return nil, false // an embedded named scalar is a field to encoding/json
			}
			continue
		}
		name, opts, ok := fieldJSONName(f)
		if !ok {
			continue
		}
		if tagged && (!plainTagName(name) || hasTagOption(opts, "string")) {
			return nil, false
		}
		for _, o := range out {
			if o.name == name {
				return nil, false
			}
		}
		out = append(out, planField{name: name, opts: opts, offset: base + f.Offset, typ: f.Type})
	}
	return out, true
}

// plainTagName reports whether name is a json tag name that encoding/json
// certainly accepts: ASCII letters, digits and common punctuation. Such a
// name holds no '"' or '\\', so it can be compared with raw key bytes.
func plainTagName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == '$' || c == '@' || c == '/' || c == ':' || c == ' ':
		default:
			return false
		}
	}
	return true
}

// compileStruct fills the strict plan of struct type t with schema s.
func (n *decNode) compileStruct(t reflect.Type, s *schema) bool {
	if !s.closed || s.additional != nil {
		return false
	}
	fields, ok := structFields(t, 0, nil)
	if !ok {
		return false
	}
	for _, f := range fields {
		ps := s.properties[f.name]
		if ps == nil {
			continue // hidden from the schema: the key is refused
		}
		node, ok := compileDecoder(f.typ, ps)
		if !ok {
			return false
		}
		df := decField{name: f.name, offset: f.offset, node: node}
		if ps.def != nil {
			if df.def, ok = compileDefault(f.typ, ps.def); !ok {
				return false
			}
		}
		n.fields = append(n.fields, df)
	}
	if len(n.fields) > maxPlanFields || len(s.properties) != len(n.fields) {
		return false
	}
	n.keys = newKeyTable(n.fields)
	for _, name := range s.required {
		i := n.fieldIndex(name)
		if i < 0 {
			return false
		}
		n.required |= 1 << i
	}
	for i, f := range n.fields {
		if f.def.kind != decNone {
			n.defaulted |= 1 << i
		}
	}
	return true
}

// keyTable finds a struct's field by a key's bytes: a hash of the key's
// length and first and last bytes, folded to lower case so that a key that
// matches a field only regardless of case lands on it too (encoding/json
// matches such keys). A lookup compares one or two names instead of
// looping over every field.
type keyTable struct {
	heads [64]int8 // first field of each bucket, -1 for none
	chain []int8   // next field in the same bucket, -1 for none
	names []string
}

func newKeyTable(fields []decField) keyTable {
	t := keyTable{chain: make([]int8, len(fields)), names: make([]string, len(fields))}
	for i := range t.heads {
		t.heads[i] = -1
	}
	for i := len(fields) - 1; i >= 0; i-- {
		name := fields[i].name
		h := keyHash(name[0], name[len(name)-1], len(name))
		t.chain[i], t.heads[h], t.names[i] = t.heads[h], int8(i), name
	}
	return t
}

// keyHash folds ASCII letters to lower case (and maps a few other bytes
// together, which only makes buckets share).
func keyHash(first, last byte, n int) int {
	return (n*7 + int(first|0x20)*3 + int(last|0x20)) & 63
}

// find returns the index of the field named key, or -1, and whether a
// field's name equals key regardless of ASCII case.
func (t *keyTable) find(key []byte) (index int, folds bool) {
	if len(key) == 0 {
		return -1, false
	}
	for i := t.heads[keyHash(key[0], key[len(key)-1], len(key))]; i >= 0; i = t.chain[i] {
		name := t.names[i]
		if len(name) != len(key) {
			continue
		}
		if name == string(key) {
			return int(i), false
		}
		folds = folds || asciiEqualFold(name, key)
	}
	return -1, folds
}

// fieldIndex returns the index of the field named name, or -1.
func (n *decNode) fieldIndex(name string) int {
	for i := range n.fields {
		if n.fields[i].name == name {
			return i
		}
	}
	return -1
}

func asciiEqualFold(name string, key []byte) bool {
	for i := 0; i < len(name); i++ {
		a, b := name[i], key[i]
		if 'a' <= a && a <= 'z' {
			a -= 'a' - 'A'
		}
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// compileDefault decodes a default tag's JSON into a value of type t.
func compileDefault(t reflect.Type, raw json.RawMessage) (fieldDefault, bool) {
	v := reflect.New(t)
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		return fieldDefault{}, false
	}
	v = v.Elem()
	d := fieldDefault{kind: decPointer, value: v}
	switch t.Kind() {
	case reflect.String:
		d.kind, d.str = decString, v.String()
	case reflect.Bool:
		d.kind, d.truth = decBool, v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind, d.bits, d.num = decInt, t.Bits(), v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.kind, d.bits, d.unum = decUint, t.Bits(), v.Uint()
	case reflect.Float32, reflect.Float64:
		d.kind, d.bits, d.float = decFloat, t.Bits(), v.Float()
	case reflect.Pointer:
	default:
		return fieldDefault{}, false
	}
	return d, true
}
