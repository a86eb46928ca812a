package interrupt

import "fmt"

// Opcodes the rewriter acts on.
const (
	opLoop         = 0x03
	opEnd          = 0x0b
	opCall         = 0x10
	opCallIndirect = 0x11
	opRefFunc      = 0xd2
	opMiscPrefix   = 0xfc
	opSIMDPrefix   = 0xfd
)

// unsupported names the proposal of an opcode outside CoreFeaturesV2, for
// the error message.
var unsupported = map[byte]string{
	0x06: "exception handling", 0x07: "exception handling", 0x08: "exception handling",
	0x09: "exception handling", 0x0a: "exception handling", 0x18: "exception handling",
	0x19: "exception handling", 0x1f: "exception handling",
	0x12: "tail calls", 0x13: "tail calls",
	0x14: "typed function references", 0x15: "typed function references",
	0xd3: "typed function references", 0xd4: "typed function references",
	0xd5: "typed function references", 0xd6: "typed function references",
	0xfb: "garbage collection", 0xfe: "threads",
}

// simdGaps are the opcodes below 256 after the SIMD prefix that no
// instruction uses.
var simdGaps = map[uint32]bool{
	154: true, 162: true, 165: true, 166: true, 175: true, 176: true, 178: true,
	179: true, 180: true, 187: true, 194: true, 197: true, 198: true, 207: true,
	208: true, 210: true, 211: true, 212: true, 226: true, 238: true,
}

// instr copies one instruction from r to out with its function index
// renumbered, and returns its opcode (the first byte).
func (m *module) instr(r *reader, out []byte) ([]byte, byte, error) {
	start := r.pos
	op, err := r.byte()
	if err != nil {
		return out, 0, err
	}
	if op == opCall || op == opRefFunc {
		idx, err := r.u32()
		if err != nil {
			return out, op, err
		}
		return appendU32(append(out, op), m.funcIndex(idx)), op, nil
	}
	if err := skipImmediates(r, op, start); err != nil {
		return out, op, err
	}
	return append(out, r.b[start:r.pos]...), op, nil
}

// skipImmediates reads the immediates of the instruction op that starts at
// start, refusing opcodes outside the supported features.
func skipImmediates(r *reader, op byte, start int) error {
	switch {
	case op <= 0x01, op == 0x05, op == opEnd, op == 0x0f, op == 0x1a, op == 0x1b,
		op >= 0x45 && op <= 0xc4, op == 0xd1:
		return nil
	case op >= 0x02 && op <= 0x04:
		return blockType(r)
	case op == 0x0c, op == 0x0d, op >= 0x20 && op <= 0x26, op == 0x3f, op == 0x40:
		_, err := r.u32()
		return err
	case op == 0x0e:
		n, err := r.vec(1)
		for i := uint32(0); err == nil && i <= n; i++ {
			_, err = r.u32()
		}
		return err
	case op == opCallIndirect:
		return u32s(r, 2)
	case op == 0x1c:
		n, err := r.vec(1)
		if err == nil {
			_, err = r.bytes(n)
		}
		return err
	case op >= 0x28 && op <= 0x3e:
		return memarg(r)
	case op == 0x41:
		return r.skipSigned(32)
	case op == 0x42:
		return r.skipSigned(64)
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op == 0xd0:
		_, err := r.byte()
		return err
	case op == opMiscPrefix:
		return miscImmediates(r, start)
	case op == opSIMDPrefix:
		return simdImmediates(r, start)
	}
	msg := fmt.Sprintf("unsupported opcode %#02x", op)
	if p, ok := unsupported[op]; ok {
		msg += " (" + p + ")"
	}
	return &Error{Offset: r.off + start, Msg: msg}
}

func u32s(r *reader, n int) error {
	for range n {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// blockType skips a block type: empty, a value type or a type index.
func blockType(r *reader) error {
	if r.pos < len(r.b) {
		switch r.b[r.pos] {
		case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
			r.pos++
			return nil
		}
	}
	return r.skipSigned(33)
}

// memarg skips an alignment and an offset. An alignment with bit 6 set
// announces a memory index (multi-memory), which is not supported.
func memarg(r *reader) error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align >= 64 {
		return r.errorf("memory index in a memory instruction (multi-memory) is not supported")
	}
	_, err = r.u32()
	return err
}

// miscImmediates skips the immediates of a 0xfc instruction: saturating
// conversions, bulk memory and table instructions.
func miscImmediates(r *reader, start int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7:
		return nil
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
		return u32s(r, 1)
	case sub == 8, sub == 10, sub == 12, sub == 14:
		return u32s(r, 2)
	}
	return &Error{Offset: r.off + start, Msg: fmt.Sprintf("unsupported opcode 0xfc %d", sub)}
}

// simdImmediates skips the immediates of a 0xfd (128-bit SIMD) instruction.
func simdImmediates(r *reader, start int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub > 255 || simdGaps[sub]:
		msg := fmt.Sprintf("unsupported opcode 0xfd %d", sub)
		if sub >= 256 && sub <= 0x113 {
			msg += " (relaxed SIMD)"
		}
		return &Error{Offset: r.off + start, Msg: msg}
	case sub <= 11, sub == 92, sub == 93:
		return memarg(r)
	case sub == 12, sub == 13:
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34:
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91:
		if err := memarg(r); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	}
	return nil
}

// expr copies a constant expression up to and including its end.
func (m *module) expr(r *reader, out []byte) ([]byte, error) {
	for {
		var op byte
		var err error
		if out, op, err = m.instr(r, out); err != nil || op == opEnd {
			return out, err
		}
	}
}

// body copies one function body, inserting the check at every loop header
// and, when the function calls, at its entry.
func (m *module) body(r *reader, out []byte) ([]byte, error) {
	groups, err := r.vec(2)
	if err != nil {
		return out, err
	}
	for range groups {
		if _, err := r.u32(); err != nil {
			return out, err
		}
		if _, err := r.byte(); err != nil {
			return out, err
		}
	}
	locals := r.b[:r.pos]
	code := m.scratch[:0]
	calls := false
	for !r.done() {
		var op byte
		if code, op, err = m.instr(r, code); err != nil {
			return out, err
		}
		switch op {
		case opLoop:
			code = append(code, m.check...)
		case opCall, opCallIndirect:
			calls = true
		}
	}
	m.scratch = code
	size := len(locals) + len(code)
	if calls {
		size += len(m.check)
	}
	out = append(appendU32(out, uint32(size)), locals...)
	if calls {
		out = append(out, m.check...)
	}
	return append(out, code...), nil
}
