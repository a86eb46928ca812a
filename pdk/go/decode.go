package pdk

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file decodes JSON in one pass through a plan (decode_plan.go):
// straight into the Go value, with no reflection and no intermediate any
// per value. In wasm every loop iteration, taken branch and allocation is
// expensive (the host interrupts loops to enforce deadlines, and an
// allocation costs about a microsecond), so strings are scanned eight
// bytes at a time and share one buffer.
//
// The decoder is conservative: it takes the inputs it can decode exactly
// as encoding/json (and, for a tool's input, the schema check) would, and
// gives up on anything else, which the reference path then decides and
// words. Giving up costs a little; every common input costs far less.
// FuzzDecodeFast and FuzzDecodeLenient check that both paths agree.

// decodeFast decodes a tool's input into p (a zero value of the strict
// plan's type), checking it against the input schema and filling defaults.
// It reports false when the reference path has to decide; p may then hold
// a partial value.
//
// The strings of the value share input's memory. The caller must own input
// and never change it again, as with the buffer wb_alloc handed to the
// host: the host writes it once, before the call.
func decodeFast(root *decNode, input []byte, p unsafe.Pointer) bool {
	d := decoder{data: input}
	d.skipSpace()
	if d.pos == len(d.data) {
		// No input is the empty object.
		d.data, d.pos = emptyObject, 0
	}
	return d.value(root, p) && d.end()
}

var emptyObject = []byte("{}")

// decodeLenient decodes data into p (a zero value of the lenient plan's
// type) as json.Unmarshal would. It reports false when encoding/json has
// to decide; p may then hold a partial value. Strings are copied, so data
// stays the caller's.
func decodeLenient(root *decNode, data []byte, p unsafe.Pointer) bool {
	d := decoder{data: data, copyStrings: true}
	return d.value(root, p) && d.end()
}

// decodeJSON is json.Unmarshal(data, v), through a lenient plan when v
// points to a zero value of a type that has one.
func decodeJSON(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().IsZero() {
		if plan := lenientPlan(rv.Type().Elem()); plan != nil {
			if decodeLenient(plan, data, rv.UnsafePointer()) {
				return nil
			}
			rv.Elem().SetZero() // drop what the plan may have written
		}
	}
	return json.Unmarshal(data, v)
}

// decoder is the state of one decoding.
type decoder struct {
	data []byte
	pos  int
	// depth is the nesting of objects and arrays at pos.
	depth int
	// copyStrings: strings may not share data (it is the caller's); they
	// are copied into arena instead, one allocation for many strings.
	copyStrings bool
	arena       []byte
}

// maxDepth bounds nesting; deeper input is left to encoding/json (which
// refuses nesting beyond 10000).
const maxDepth = 1000

// arenaSize is the size of the blocks copied strings share; longer strings
// get their own allocation.
const arenaSize = 4096

// end reports whether only white space is left.
func (d *decoder) end() bool {
	d.skipSpace()
	return d.pos == len(d.data)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end. It is
// small enough to be inlined: most JSON has no space between tokens.
func (d *decoder) peek() byte {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' {
		return d.data[d.pos]
	}
	return d.peekAfterSpace()
}

func (d *decoder) peekAfterSpace() byte {
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// literal consumes word (null, true, false) at the current position.
func (d *decoder) literal(word string) bool {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

// keep returns raw (the content of a string of data) as a string: sharing
// data, or copied into the arena when data is the caller's.
func (d *decoder) keep(raw []byte) string {
	if !d.copyStrings {
		return unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	if len(raw) == 0 {
		return ""
	}
	if len(raw) > arenaSize/4 {
		return string(raw)
	}
	if cap(d.arena)-len(d.arena) < len(raw) {
		d.arena = make([]byte, 0, arenaSize)
	}
	start := len(d.arena)
	d.arena = append(d.arena, raw...)
	return unsafe.String(&d.arena[start], len(raw))
}

// value decodes one JSON value for node n into p. It switches over the
// kinds: in wasm that costs less than calling a function value per node.
func (d *decoder) value(n *decNode, p unsafe.Pointer) bool {
	c := d.peek()
	switch c {
	case 0:
		return false // the end, or a NUL, which is not JSON either
	case 'n':
		// The target is a zero value, which null leaves as it is.
		return n.nullable && d.literal("null")
	}
	switch n.kind {
	case decString:
		if c != '"' {
			return false
		}
		s, ok := d.stringValue()
		if !ok || ((n.hasEnum || n.pattern != nil) && !n.checkString(s)) {
			return false
		}
		*(*string)(p) = s
		return true
	case decInt:
		return d.intValue(n, p)
	case decUint:
		return d.uintValue(n, p)
	case decFloat:
		return d.floatValue(n, p)
	case decBool:
		var b bool
		switch {
		case c == 't' && d.literal("true"):
			b = true
		case c == 'f' && d.literal("false"):
		default:
			return false
		}
		if n.hasEnum && !slices.Contains(n.enumBools, b) {
			return false
		}
		*(*bool)(p) = b
		return true
	case decStruct:
		return c == '{' && d.object(n, p)
	case decSlice:
		return c == '[' && d.slice(n, p)
	case decArray:
		return c == '[' && d.array(n, p)
	case decMap:
		return c == '{' && d.mapValue(n, p)
	case decPointer:
		target := reflect.New(n.elem.typ).UnsafePointer()
		if !d.value(n.elem, target) {
			return false
		}
		*(*unsafe.Pointer)(p) = target
		return true
	case decAny:
		v, ok := d.anyValue()
		if ok {
			*(*any)(p) = v
		}
		return ok
	}
	return false
}

// checkString applies enum and pattern to a decoded string.
func (n *decNode) checkString(s string) bool {
	if n.hasEnum && !slices.Contains(n.enumStrings, s) {
		return false
	}
	return n.pattern == nil || n.pattern.MatchString(s)
}

// checkNumber applies enum, minimum and maximum to a number as the
// validator sees it (a float64).
func (n *decNode) checkNumber(f float64) bool {
	if n.hasEnum && !slices.Contains(n.enumNumbers, f) {
		return false
	}
	return (n.minimum == nil || f >= *n.minimum) && (n.maximum == nil || f <= *n.maximum)
}

// number consumes a JSON number and returns its text.
func (d *decoder) number() ([]byte, bool) {
	start := d.pos
	i := d.pos
	data := d.data
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		for i++; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
	default:
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		digits := i
		for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
		if i == digits {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		digits := i
		for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
		if i == digits {
			return nil, false
		}
	}
	d.pos = i
	return data[start:i], true
}

// digits consumes the digits of an integer literal (after any '-') and
// returns their value. It fails on what encoding/json would not put in an
// integer field (a fraction, an exponent) or would reject as JSON (no
// digits, a leading zero), and on more than 19 digits.
func (d *decoder) digits() (uint64, bool) {
	data := d.data
	i := d.pos
	var u uint64
	for ; i < len(data); i++ {
		c := data[i] - '0'
		if c > 9 {
			break
		}
		u = u*10 + uint64(c)
	}
	n := i - d.pos
	if n == 0 || n > 19 || (n > 1 && data[d.pos] == '0') {
		return 0, false
	}
	if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
		return 0, false
	}
	d.pos = i
	return u, true
}

// intValue decodes an integer literal into a signed integer of n.bits.
func (d *decoder) intValue(n *decNode, p unsafe.Pointer) bool {
	neg := d.data[d.pos] == '-'
	if neg {
		d.pos++
	}
	u, ok := d.digits()
	limit := uint64(1) << (n.bits - 1)
	if !ok || u > limit || (u == limit && !neg) {
		return false
	}
	v := int64(u)
	if neg {
		v = -v
	}
	if (n.hasEnum || n.minimum != nil || n.maximum != nil) && !n.checkNumber(float64(v)) {
		return false
	}
	switch n.bits {
	case 8:
		*(*int8)(p) = int8(v)
	case 16:
		*(*int16)(p) = int16(v)
	case 32:
		*(*int32)(p) = int32(v)
	default:
		*(*int64)(p) = v
	}
	return true
}

// uintValue decodes an integer literal into an unsigned integer of n.bits.
func (d *decoder) uintValue(n *decNode, p unsafe.Pointer) bool {
	u, ok := d.digits() // a '-' fails here
	if !ok || (n.bits < 64 && u >= uint64(1)<<n.bits) {
		return false
	}
	if (n.hasEnum || n.minimum != nil || n.maximum != nil) && !n.checkNumber(float64(u)) {
		return false
	}
	switch n.bits {
	case 8:
		*(*uint8)(p) = uint8(u)
	case 16:
		*(*uint16)(p) = uint16(u)
	case 32:
		*(*uint32)(p) = uint32(u)
	default:
		*(*uint64)(p) = u
	}
	return true
}

// floatValue decodes a number into a float of n.bits.
func (d *decoder) floatValue(n *decNode, p unsafe.Pointer) bool {
	text, ok := d.number()
	if !ok {
		return false
	}
	s := unsafe.String(unsafe.SliceData(text), len(text))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !n.checkNumber(f) {
		return false
	}
	if n.bits == 32 {
		f32, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return false
		}
		*(*float32)(p) = float32(f32)
		return true
	}
	*(*float64)(p) = f
	return true
}

// stringValue decodes the JSON string at the current position ('"').
func (d *decoder) stringValue() (string, bool) {
	data := d.data
	start := d.pos + 1
	i, high := scanString(data, start)
	if i < len(data) && data[i] == '"' {
		// The common case: no escapes.
		raw := data[start:i]
		if high != 0 && !utf8.Valid(raw) {
			return "", false
		}
		d.pos = i + 1
		return d.keep(raw), true
	}
	raw, _, escaped, ok := d.stringBytes()
	if !ok {
		return "", false
	}
	if escaped {
		// New memory that nothing else refers to.
		return unsafe.String(unsafe.SliceData(raw), len(raw)), true
	}
	return d.keep(raw), true
}

// Word-at-a-time scanning: wasm makes every loop iteration costly, so
// strings are scanned eight bytes per iteration.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// stringStops marks (in the high bit of each byte, the lowest mark exact)
// the bytes of x that end a plain run inside a JSON string: '"', '\\' and
// control characters.
func stringStops(x uint64) uint64 {
	q := x ^ (lowBits * '"')
	b := x ^ (lowBits * '\\')
	return ((q-lowBits)&^q | (b-lowBits)&^b | (x-lowBits*0x20)&^x) & highBits
}

// scanString returns the index of the first '"', '\\' or control
// character at or after i (len(data) when there is none) and the high bits
// of the bytes before it: non-zero when some are not ASCII.
func scanString(data []byte, i int) (int, uint64) {
	var high uint64
	for i+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[i:])
		if stop := stringStops(x); stop != 0 {
			n := bits.TrailingZeros64(stop) >> 3
			return i + n, high | x&(highBits>>(64-8*n))
		}
		high |= x & highBits
		i += 8
	}
	for ; i < len(data); i++ {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		high |= uint64(c)
	}
	return i, high & highBits
}

// stringBytes consumes a JSON string and returns its content: a part of
// data, or (escaped) its unescaped copy in new memory; nonASCII reports
// bytes above 0x7f. Invalid UTF-8 and lone surrogates, which encoding/json
// replaces, are left to encoding/json.
func (d *decoder) stringBytes() (raw []byte, nonASCII, escaped, ok bool) {
	data := d.data
	start := d.pos + 1
	i, high := scanString(data, start)
	switch {
	case i >= len(data) || data[i] < 0x20:
		return nil, false, false, false
	case data[i] == '\\':
		raw, high, ok = d.escapedString(start, i, high)
		return raw, high != 0, true, ok
	}
	d.pos = i + 1
	s := data[start:i]
	if high != 0 && !utf8.Valid(s) {
		return nil, false, false, false
	}
	return s, high != 0, false, true
}

// escapedString decodes a string whose content starts at start and whose
// first escape is at i, into new memory. high gathers the high bits of the
// bytes, as scanString's.
func (d *decoder) escapedString(start, i int, high uint64) ([]byte, uint64, bool) {
	data := d.data
	out := make([]byte, 0, i-start+16)
	out = append(out, data[start:i]...)
	for i < len(data) {
		switch c := data[i]; {
		case c == '"':
			d.pos = i + 1
			if high != 0 && !utf8.Valid(out) {
				return nil, 0, false
			}
			return out, high, true
		case c < 0x20 || i+1 >= len(data):
			return nil, 0, false
		}
		// data[i] is '\\'.
		switch data[i+1] {
		case '"', '\\', '/':
			out = append(out, data[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(data, i+2)
			if !ok || utf16.IsSurrogate(r) {
				return nil, 0, false // encoding/json pairs or replaces surrogates
			}
			if r >= utf8.RuneSelf {
				high |= highBits
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return nil, 0, false
		}
		i += 2
		j, h := scanString(data, i)
		out = append(out, data[i:j]...)
		high |= h
		i = j
	}
	return nil, 0, false
}

// hex4 reads the four hex digits of a \u escape at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipString consumes a JSON string without decoding it. Like
// encoding/json, it does not check UTF-8 there.
func (d *decoder) skipString() bool {
	data := d.data
	i := d.pos + 1
	for {
		i, _ = scanString(data, i)
		switch {
		case i >= len(data) || data[i] < 0x20:
			return false
		case data[i] == '"':
			d.pos = i + 1
			return true
		case i+1 >= len(data):
			return false
		}
		switch data[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if _, ok := hex4(data, i+2); !ok {
				return false
			}
			i += 6
		default:
			return false
		}
	}
}

// skipValue consumes any JSON value, checking its syntax.
func (d *decoder) skipValue() bool {
	switch c := d.peek(); {
	case c == '"':
		if i, _ := scanString(d.data, d.pos+1); i < len(d.data) && d.data[i] == '"' {
			d.pos = i + 1
			return true
		}
		return d.skipString()
	case c == '{':
		if d.depth++; d.depth > maxDepth {
			return false
		}
		d.pos++
		if d.peek() == '}' {
			d.pos++
			d.depth--
			return true
		}
		for {
			if d.peek() != '"' || !d.skipString() || d.peek() != ':' {
				return false
			}
			d.pos++
			if !d.skipValue() {
				return false
			}
			c := d.peek()
			d.pos++
			if c == '}' {
				d.depth--
				return true
			}
			if c != ',' {
				return false
			}
		}
	case c == '[':
		if d.depth++; d.depth > maxDepth {
			return false
		}
		d.pos++
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return true
		}
		for {
			if !d.skipValue() {
				return false
			}
			if !d.comma() && !d.nextItem() {
				d.depth--
				return d.pos >= 0
			}
		}
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		_, ok := d.number()
		return ok
	}
	return false
}

// object decodes a JSON object into the struct at p.
func (d *decoder) object(n *decNode, p unsafe.Pointer) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.pos++ // '{'
	var seen uint64
	if d.peek() == '}' {
		d.pos++
	} else {
		next := 0 // keys usually come in field order: try that one first
		for {
			if d.peek() != '"' {
				return false
			}
			i := -1
			// Compare the expected name in place: field names hold no '"'
			// or '\\', so a match followed by '"' is that key.
			if next < len(n.fields) {
				name := n.fields[next].name
				end := d.pos + 1 + len(name)
				if end < len(d.data) && d.data[end] == '"' && d.data[d.pos+1] == name[0] && string(d.data[d.pos+1:end]) == name {
					i = next
					d.pos = end + 1
				}
			}
			if i < 0 {
				key, nonASCII, _, ok := d.stringBytes()
				if !ok {
					return false
				}
				var folds bool
				if i, folds = n.keys.find(key); i < 0 {
					// encoding/json skips an unknown key, unless it
					// matches a field regardless of case (by Unicode
					// rules for a key that is not ASCII); a tool's input
					// has none.
					if !n.lenient || folds || nonASCII || d.peek() != ':' {
						return false
					}
					d.pos++
					if !d.skipValue() {
						return false
					}
					if !d.comma() && !d.nextKey() {
						if d.pos < 0 {
							return false
						}
						break
					}
					continue
				}
			}
			if d.peek() != ':' || seen&(1<<i) != 0 {
				return false // a repeated key merges in encoding/json
			}
			d.pos++
			seen |= 1 << i
			next = i + 1
			f := &n.fields[i]
			if !d.value(f.node, unsafe.Add(p, f.offset)) {
				return false
			}
			if !d.comma() && !d.nextKey() {
				if d.pos < 0 {
					return false
				}
				break
			}
		}
	}
	d.depth--
	if n.required&^seen != 0 {
		return false
	}
	if missing := n.defaulted &^ seen; missing != 0 {
		for i := range n.fields {
			if missing&(1<<i) != 0 {
				n.fields[i].def.set(unsafe.Add(p, n.fields[i].offset))
			}
		}
	}
	return true
}

// comma consumes a ',' right at the current position: the common case of
// nextKey and nextItem, small enough to be inlined before them.
func (d *decoder) comma() bool {
	if d.pos < len(d.data) && d.data[d.pos] == ',' {
		d.pos++
		return true
	}
	return false
}

// nextKey consumes the ',' or '}' after an object member: true for ',',
// false for '}', and false with pos -1 for anything else.
func (d *decoder) nextKey() bool {
	c := d.peek()
	d.pos++
	if c == ',' {
		return true
	}
	if c != '}' {
		d.pos = -1
	}
	return false
}

// nextItem consumes the ',' or ']' after an array item: true for ',',
// false for ']', and false with pos -1 for anything else.
func (d *decoder) nextItem() bool {
	c := d.peek()
	d.pos++
	if c == ',' {
		return true
	}
	if c != ']' {
		d.pos = -1
	}
	return false
}

// set writes the default into the field at p.
func (fd *fieldDefault) set(p unsafe.Pointer) {
	switch fd.kind {
	case decString:
		*(*string)(p) = fd.str
	case decBool:
		*(*bool)(p) = fd.truth
	case decInt:
		switch fd.bits {
		case 8:
			*(*int8)(p) = int8(fd.num)
		case 16:
			*(*int16)(p) = int16(fd.num)
		case 32:
			*(*int32)(p) = int32(fd.num)
		default:
			*(*int64)(p) = fd.num
		}
	case decUint:
		switch fd.bits {
		case 8:
			*(*uint8)(p) = uint8(fd.unum)
		case 16:
			*(*uint16)(p) = uint16(fd.unum)
		case 32:
			*(*uint32)(p) = uint32(fd.unum)
		default:
			*(*uint64)(p) = fd.unum
		}
	case decFloat:
		if fd.bits == 32 {
			*(*float32)(p) = float32(fd.float)
		} else {
			*(*float64)(p) = fd.float
		}
	case decPointer:
		*(*unsafe.Pointer)(p) = fresh(fd.value).UnsafePointer()
	}
}

// sliceHeader is the memory layout of a Go slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// slice decodes a JSON array into the slice at p.
func (d *decoder) slice(n *decNode, p unsafe.Pointer) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.pos++ // '['
	elem := n.elem
	if elem.kind == decString && elem.typ == stringType {
		return d.stringSlice(n, (*[]string)(p))
	}
	size := elem.typ.Size()
	var buf reflect.Value
	count := 0
	if d.peek() == ']' {
		d.pos++
	} else {
		for {
			if count == 0 || count == buf.Len() {
				// buf's length is its capacity; count says how much of
				// it holds items.
				size := max(4, 2*count)
				grown := reflect.MakeSlice(n.typ, size, size)
				if count > 0 {
					reflect.Copy(grown, buf)
				}
				buf = grown
			}
			if !d.value(elem, unsafe.Add(buf.UnsafePointer(), uintptr(count)*size)) {
				return false
			}
			count++
			if !d.comma() && !d.nextItem() {
				if d.pos < 0 {
					return false
				}
				break
			}
		}
	}
	d.depth--
	if !n.countOK(count) {
		return false
	}
	if count == 0 {
		buf = reflect.MakeSlice(n.typ, 0, 0) // [] is an empty slice, not nil
	}
	*(*sliceHeader)(p) = sliceHeader{data: buf.UnsafePointer(), len: count, cap: buf.Len()}
	return true
}

var stringType = reflect.TypeFor[string]()

// stringSlice decodes a JSON array of strings.
func (d *decoder) stringSlice(n *decNode, p *[]string) bool {
	out := []string{}
	if d.peek() == ']' {
		d.pos++
	} else {
		for {
			if d.peek() != '"' {
				return false
			}
			s, ok := d.stringValue()
			if !ok || ((n.elem.hasEnum || n.elem.pattern != nil) && !n.elem.checkString(s)) {
				return false
			}
			out = append(out, s)
			if !d.comma() && !d.nextItem() {
				if d.pos < 0 {
					return false
				}
				break
			}
		}
	}
	d.depth--
	if !n.countOK(len(out)) {
		return false
	}
	*p = out
	return true
}

func (n *decNode) countOK(count int) bool {
	return (n.minItems < 0 || count >= n.minItems) && (n.maxItems < 0 || count <= n.maxItems)
}

// array decodes a JSON array into the Go array at p. encoding/json drops
// the items past the array's length.
func (d *decoder) array(n *decNode, p unsafe.Pointer) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.pos++ // '['
	size := n.elem.typ.Size()
	count := 0
	if d.peek() == ']' {
		d.pos++
	} else {
		for {
			switch {
			case count < n.length:
				if !d.value(n.elem, unsafe.Add(p, uintptr(count)*size)) {
					return false
				}
			case !n.lenient || !d.skipValue():
				return false
			}
			count++
			if !d.comma() && !d.nextItem() {
				if d.pos < 0 {
					return false
				}
				break
			}
		}
	}
	d.depth--
	return n.countOK(count)
}

// mapValue decodes a JSON object into the map at p.
func (d *decoder) mapValue(n *decNode, p unsafe.Pointer) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.pos++ // '{'
	m := reflect.MakeMap(n.typ)
	keyType := n.typ.Key()
	if d.peek() == '}' {
		d.pos++
	} else {
		for {
			if d.peek() != '"' {
				return false
			}
			key, ok := d.stringValue()
			if !ok || d.peek() != ':' {
				return false
			}
			d.pos++
			elem := reflect.New(n.elem.typ)
			if !d.value(n.elem, elem.UnsafePointer()) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(key).Convert(keyType), elem.Elem())
			if !d.comma() && !d.nextKey() {
				if d.pos < 0 {
					return false
				}
				break
			}
		}
	}
	d.depth--
	*(*unsafe.Pointer)(p) = m.UnsafePointer()
	return true
}

// anyValue decodes any JSON value the way encoding/json decodes into an
// any.
func (d *decoder) anyValue() (any, bool) {
	switch c := d.peek(); {
	case c == '"':
		return d.stringValue()
	case c == 'n':
		return nil, d.literal("null")
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == '-' || ('0' <= c && c <= '9'):
		text, ok := d.number()
		if !ok {
			return nil, false
		}
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
		return f, err == nil && !math.IsInf(f, 0)
	case c == '[':
		if d.depth++; d.depth > maxDepth {
			return nil, false
		}
		d.pos++
		list := make([]any, 0)
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return list, true
		}
		for {
			v, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			list = append(list, v)
			if !d.comma() && !d.nextItem() {
				d.depth--
				return list, d.pos >= 0
			}
		}
	case c == '{':
		if d.depth++; d.depth > maxDepth {
			return nil, false
		}
		d.pos++
		obj := make(map[string]any)
		if d.peek() == '}' {
			d.pos++
			d.depth--
			return obj, true
		}
		for {
			if d.peek() != '"' {
				return nil, false
			}
			key, ok := d.stringValue()
			if !ok || d.peek() != ':' {
				return nil, false
			}
			d.pos++
			v, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			obj[key] = v
			if !d.comma() && !d.nextKey() {
				d.depth--
				return obj, d.pos >= 0
			}
		}
	}
	return nil, false
}
