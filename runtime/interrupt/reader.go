package interrupt

import "fmt"

// Error is a module Inject cannot rewrite: malformed, or using an
// instruction or section outside the supported features.
type Error struct {
	Offset int // offset of the problem in the module, in bytes
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("wasm offset %#x: %s", e.Offset, e.Msg) }

// reader decodes a part of the module. off is the position of b[0] in the
// whole module, for error messages.
type reader struct {
	b   []byte
	pos int
	off int
}

func (r *reader) errorf(format string, args ...any) error {
	return &Error{Offset: r.off + r.pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.errorf("unexpected end")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// bytes returns the next n bytes, aliasing the module.
func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.pos) {
		return nil, r.errorf("%d bytes announced, %d left", n, len(r.b)-r.pos)
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// u32 decodes an unsigned LEB128 number of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				return 0, r.errorf("integer too large for u32")
			}
			return uint32(v), nil
		}
	}
	return 0, r.errorf("integer representation too long")
}

// skipSigned skips a signed LEB128 number of at most bits bits.
func (r *reader) skipSigned(bits int) error {
	for n := 0; n < (bits+6)/7; n++ {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return r.errorf("integer representation too long")
}

// vec reads a vector's length, refusing one that cannot fit in what is
// left (each element takes at least minSize bytes).
func (r *reader) vec(minSize int) (uint32, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(minSize) > uint64(len(r.b)-r.pos) {
		return 0, r.errorf("vector of %d elements is longer than its section", n)
	}
	return n, nil
}

// name skips a name (a byte vector).
func (r *reader) name() error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	_, err = r.bytes(n)
	return err
}

// appendU32 appends v as unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends v as signed LEB128.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
