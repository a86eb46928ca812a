package pdk

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// This file is the fast path of a tool's result: a plan compiled once per
// type writes the value as JSON without reflection per call, byte for byte
// what json.Marshal writes. Types it does not cover (methods that marshal a
// value through a pointer, []byte, json.Number, the ",string" option, ...)
// and values it cannot write (NaN, deep nesting) go to json.Marshal, which
// then also words any error.

// encKind is what a plan node encodes from.
type encKind uint8

const (
	encString encKind = iota
	encBool
	encInt
	encUint
	encFloat
	encStruct
	encSlice
	encArray
	encMap
	encPointer
	encAny
	encMarshaler // a type with its own MarshalJSON or MarshalText
)

// encNode is the plan for one Go type.
type encNode struct {
	kind   encKind
	typ    reflect.Type
	bits   int
	fields []encField // struct, in encoding order
	elem   *encNode   // slice, array, map value, pointer target
	length int        // array length
	// stringMap: the map is a map[string]string or map[string]any, read
	// without reflection.
	stringMap bool
}

// encField is one field of a struct plan.
type encField struct {
	key       string // `,"name":`, written without the comma when first
	offset    uintptr
	node      *encNode
	omits     bool // omitEmpty || omitZero
	omitEmpty bool
	omitZero  bool
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

// encPlans caches the plans of types met at run time (in interfaces).
var encPlans = struct {
	mu    sync.Mutex
	plans map[reflect.Type]*encNode // nil value: not supported
}{plans: map[reflect.Type]*encNode{}}

// encoderFor returns the cached plan of t, or nil when t is left to
// json.Marshal.
func encoderFor(t reflect.Type) *encNode {
	encPlans.mu.Lock()
	defer encPlans.mu.Unlock()
	n, done := encPlans.plans[t]
	if !done {
		n, _ = compileEncoder(t, map[reflect.Type]*encNode{})
		encPlans.plans[t] = n
	}
	return n
}

// compileEncoder returns the plan of t, or false when json.Marshal has to
// encode it. building holds the plans under construction, for recursive
// types.
func compileEncoder(t reflect.Type, building map[reflect.Type]*encNode) (*encNode, bool) {
	if n, ok := building[t]; ok {
		return n, true
	}
	n := &encNode{typ: t}
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
		n.kind = encMarshaler
		return n, true
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		return nil, false // encoding/json calls it only on addressable values
	}
	if t == jsonNumberType {
		return nil, false
	}
	building[t] = n
	ok := true
	switch t.Kind() {
	case reflect.String:
		n.kind = encString
	case reflect.Bool:
		n.kind = encBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits = encInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n.kind, n.bits = encUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		n.kind, n.bits = encFloat, t.Bits()
	case reflect.Pointer:
		n.kind = encPointer
		n.elem, ok = compileEncoder(t.Elem(), building)
	case reflect.Interface:
		n.kind = encAny
	case reflect.Slice:
		n.kind = encSlice
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		n.elem, ok = compileEncoder(t.Elem(), building)
	case reflect.Array:
		n.kind, n.length = encArray, t.Len()
		n.elem, ok = compileEncoder(t.Elem(), building)
	case reflect.Map:
		n.kind = encMap
		if t.Key().Kind() != reflect.String {
			return nil, false
		}
		n.elem, ok = compileEncoder(t.Elem(), building)
		n.stringMap = t.Key() == reflect.TypeFor[string]() &&
			(t.Elem() == reflect.TypeFor[string]() || t.Elem() == reflect.TypeFor[any]())
	case reflect.Struct:
		n.kind = encStruct
		ok = n.compileStruct(t, building)
	default:
		return nil, false
	}
	if !ok {
		return nil, false
	}
	return n, true
}

func (n *encNode) compileStruct(t reflect.Type, building map[reflect.Type]*encNode) bool {
	fields, ok := structFields(t, 0, nil)
	if !ok {
		return false
	}
	for _, f := range fields {
		node, ok := compileEncoder(f.typ, building)
		if !ok {
			return false
		}
		ef := encField{
			key:       "," + string(appendJSONString(nil, f.name)) + ":",
			offset:    f.offset,
			node:      node,
			omitEmpty: hasTagOption(f.opts, "omitempty"),
			omitZero:  hasTagOption(f.opts, "omitzero"),
		}
		if ef.omitZero {
			switch k := f.typ.Kind(); {
			case f.typ.Implements(isZeroerType) || reflect.PointerTo(f.typ).Implements(isZeroerType):
				return false
			case k == reflect.Struct || k == reflect.Array || k == reflect.Complex64 || k == reflect.Complex128:
				return false
			}
		}
		ef.omits = ef.omitEmpty || ef.omitZero
		n.fields = append(n.fields, ef)
	}
	return true
}

// encodeJSON is json.Marshal(v), through a plan when v's type has one.
func encodeJSON(v any) ([]byte, error) {
	e := encoder{}
	if e.anyValue(v, 0) {
		return e.buf, nil
	}
	return json.Marshal(v)
}

// maxEncodeDepth bounds the nesting the plan writes; deeper values (and
// cycles) are left to json.Marshal.
const maxEncodeDepth = 1000

// encoder is the state of one encoding.
type encoder struct {
	buf []byte
}

// encode appends the value of n's type at p; false means json.Marshal has
// to do it. It switches over the kinds: in wasm that costs less than calling
// a function value per node.
func (e *encoder) encode(n *encNode, p unsafe.Pointer, depth int) bool {
	switch n.kind {
	case encString:
		e.buf = appendJSONString(e.buf, *(*string)(p))
	case encBool:
		if *(*bool)(p) {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case encInt:
		var v int64
		switch n.bits {
		case 8:
			v = int64(*(*int8)(p))
		case 16:
			v = int64(*(*int16)(p))
		case 32:
			v = int64(*(*int32)(p))
		default:
			v = *(*int64)(p)
		}
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case encUint:
		var v uint64
		switch n.bits {
		case 8:
			v = uint64(*(*uint8)(p))
		case 16:
			v = uint64(*(*uint16)(p))
		case 32:
			v = uint64(*(*uint32)(p))
		default:
			v = *(*uint64)(p)
		}
		e.buf = strconv.AppendUint(e.buf, v, 10)
	case encFloat:
		var f float64
		if n.bits == 32 {
			f = float64(*(*float32)(p))
		} else {
			f = *(*float64)(p)
		}
		return e.float(f, n.bits)
	case encStruct:
		return e.structValue(n, p, depth)
	case encPointer:
		target := *(*unsafe.Pointer)(p)
		if target == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		return depth < maxEncodeDepth && e.encode(n.elem, target, depth+1)
	case encSlice:
		h := (*sliceHeader)(p)
		if h.data == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		return depth < maxEncodeDepth && e.list(n.elem, h.data, h.len, depth+1)
	case encArray:
		return e.list(n.elem, p, n.length, depth)
	case encMap:
		return depth < maxEncodeDepth && e.mapValue(n, p, depth+1)
	case encAny:
		return depth < maxEncodeDepth && e.anyValue(*(*any)(p), depth+1)
	case encMarshaler:
		b, err := json.Marshal(reflect.NewAt(n.typ, p).Elem().Interface())
		if err != nil {
			return false
		}
		e.buf = append(e.buf, b...)
	}
	return true
}

// float appends f the way encoding/json does.
func (e *encoder) float(f float64, bits int) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9
		b := e.buf
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			e.buf = b[:n-1]
		}
	}
	return true
}

func (e *encoder) structValue(n *encNode, p unsafe.Pointer, depth int) bool {
	e.buf = append(e.buf, '{')
	comma := 1 // skip the comma of the first field written
	for i := range n.fields {
		f := &n.fields[i]
		fp := unsafe.Add(p, f.offset)
		if f.omits && ((f.omitEmpty && isEmpty(f.node, fp)) || (f.omitZero && isZero(f.node, fp))) {
			continue
		}
		e.buf = append(e.buf, f.key[comma:]...)
		comma = 0
		// Strings, the commonest fields, skip a call and a switch.
		if f.node.kind == encString {
			e.buf = appendJSONString(e.buf, *(*string)(fp))
		} else if !e.encode(f.node, fp, depth) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

func (e *encoder) list(elem *encNode, data unsafe.Pointer, count, depth int) bool {
	e.buf = append(e.buf, '[')
	size := elem.typ.Size()
	for i := 0; i < count; i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if !e.encode(elem, unsafe.Add(data, uintptr(i)*size), depth) {
			return false
		}
	}
	e.buf = append(e.buf, ']')
	return true
}

func (e *encoder) mapValue(n *encNode, p unsafe.Pointer, depth int) bool {
	if *(*unsafe.Pointer)(p) == nil {
		e.buf = append(e.buf, "null"...)
		return true
	}
	if n.stringMap {
		if n.elem.kind == encAny {
			return e.anyMap(*(*map[string]any)(p), depth)
		}
		m := *(*map[string]string)(p)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = appendJSONString(e.buf, k)
			e.buf = append(e.buf, ':')
			e.buf = appendJSONString(e.buf, m[k])
		}
		e.buf = append(e.buf, '}')
		return true
	}
	m := reflect.NewAt(n.typ, p).Elem()
	type entry struct {
		key   string
		value reflect.Value
	}
	entries := make([]entry, 0, m.Len())
	for it := m.MapRange(); it.Next(); {
		entries = append(entries, entry{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	tmp := reflect.New(n.typ.Elem())
	e.buf = append(e.buf, '{')
	for i, en := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendJSONString(e.buf, en.key)
		e.buf = append(e.buf, ':')
		tmp.Elem().Set(en.value)
		if !e.encode(n.elem, tmp.UnsafePointer(), depth) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

func (e *encoder) anyMap(m map[string]any, depth int) bool {
	type entry struct {
		key   string
		value any
	}
	entries := make([]entry, 0, len(m))
	for k, v := range m {
		entries = append(entries, entry{k, v})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	e.buf = append(e.buf, '{')
	for i, en := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendJSONString(e.buf, en.key)
		e.buf = append(e.buf, ':')
		if !e.anyValue(en.value, depth) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

// anyValue appends the value held by an interface.
func (e *encoder) anyValue(v any, depth int) bool {
	if depth > maxEncodeDepth {
		return false
	}
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendJSONString(e.buf, v)
	case bool:
		if v {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case float64:
		return e.float(v, 64)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case map[string]any:
		if v == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		return e.anyMap(v, depth+1)
	case []any:
		if v == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		e.buf = append(e.buf, '[')
		for i, item := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if !e.anyValue(item, depth+1) {
				return false
			}
		}
		e.buf = append(e.buf, ']')
	default:
		rv := reflect.ValueOf(v)
		n := encoderFor(rv.Type())
		if n == nil {
			return false
		}
		// The plan reads memory: give it an addressable copy.
		tmp := reflect.New(rv.Type())
		tmp.Elem().Set(rv)
		return e.encode(n, tmp.UnsafePointer(), depth)
	}
	return true
}

// isEmpty is encoding/json's test for omitempty.
func isEmpty(n *encNode, p unsafe.Pointer) bool {
	switch n.kind {
	case encString:
		return len(*(*string)(p)) == 0
	case encSlice:
		return (*sliceHeader)(p).len == 0
	case encArray:
		return n.length == 0
	case encMap:
		m := *(*unsafe.Pointer)(p)
		return m == nil || reflect.NewAt(n.typ, p).Elem().Len() == 0
	case encStruct:
		return false
	case encMarshaler:
		return isEmptyKind(n.typ, p)
	}
	return isZero(n, p)
}

// isEmptyKind is isEmpty for a type with its own marshaling: emptiness
// still follows its kind.
func isEmptyKind(t reflect.Type, p unsafe.Pointer) bool {
	v := reflect.NewAt(t, p).Elem()
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

// isZero is reflect.Value.IsZero for the kinds omitzero plans allow.
func isZero(n *encNode, p unsafe.Pointer) bool {
	switch n.kind {
	case encString:
		return len(*(*string)(p)) == 0
	case encBool:
		return !*(*bool)(p)
	case encInt, encUint:
		switch n.bits {
		case 8:
			return *(*uint8)(p) == 0
		case 16:
			return *(*uint16)(p) == 0
		case 32:
			return *(*uint32)(p) == 0
		}
		return *(*uint64)(p) == 0
	case encFloat:
		if n.bits == 32 {
			return *(*float32)(p) == 0
		}
		return *(*float64)(p) == 0
	case encPointer, encMap:
		return *(*unsafe.Pointer)(p) == nil
	case encSlice:
		return (*sliceHeader)(p).data == nil
	case encAny:
		return *(*any)(p) == nil
	}
	return reflect.NewAt(n.typ, p).Elem().IsZero()
}

// escapeStops marks (in the high bit of each byte, the lowest mark exact)
// the bytes of x that appendJSONString cannot copy as they are: '"', '\\',
// '<', '>', '&', control characters and non-ASCII bytes.
func escapeStops(x uint64) uint64 {
	q := x ^ (lowBits * '"')
	b := x ^ (lowBits * '\\')
	lt := x ^ (lowBits * '<')
	gt := x ^ (lowBits * '>')
	amp := x ^ (lowBits * '&')
	return ((q-lowBits)&^q | (b-lowBits)&^b | (lt-lowBits)&^lt | (gt-lowBits)&^gt |
		(amp-lowBits)&^amp | (x-lowBits*0x20)&^x | x) & highBits
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: HTML characters, control characters, U+2028 and U+2029
// escaped, invalid UTF-8 replaced.
//
// Most strings need no escaping, and a loop over bytes is slow in wasm: the
// string is copied first and the copy checked eight bytes at a time (the
// buffer keeps eight spare bytes so the last word can be loaded; what lies
// past the string is masked off). Only a string that needs escaping is
// written again from its first special byte.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	head := len(b)
	b = append(b, s...)
	end := len(b)
	if cap(b)-end < 8 {
		b = slices.Grow(b, 8)
	}
	words := b[:end+8]
	for i := head; i < end; i += 8 {
		stop := escapeStops(binary.LittleEndian.Uint64(words[i:]))
		stop &= ^uint64(0) >> (64 - 8*min(end-i, 8))
		if stop != 0 {
			at := i - head + bits.TrailingZeros64(stop)>>3
			return appendEscaped(b[:head+at], s, at)
		}
	}
	return append(b, '"')
}

// appendEscaped appends s from its byte at, escaping what needs it, and the
// closing quote.
func appendEscaped(b []byte, s string, at int) []byte {
	const hex = "0123456789abcdef"
	start := at
	for i := at; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
		default:
			i += size
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
