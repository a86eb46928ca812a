package interrupt

import (
	"bytes"
	"fmt"
)

// Import is the host function the injected code calls when the budget runs
// out. Its type is () -> i32: it returns the next budget, or ends the call.
type Import struct {
	Module, Name string
}

// Budget is the counter's first value: how many loop iterations and calling
// function entries run before the first call of the import.
const Budget = 1 << 14

// Version changes whenever Inject's output for the same input changes;
// callers that cache rewritten modules key them on it.
const Version = 1

// Section ids, in the order a module must have them (datacount comes
// before code).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// sectionOrder ranks each known non-custom section by its place.
var sectionOrder = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secGlobal: 6,
	secExport: 7, secStart: 8, secElement: 9, secDataCount: 10, secCode: 11, secData: 12,
}

var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// section is one section of the module: its id and its contents.
type section struct {
	id   byte
	body reader
}

// module is the state of one rewrite.
type module struct {
	imp      Import
	sections []section
	types    uint32 // type entries
	imported uint32 // imported functions, which keep their indices
	globals  uint32 // imported and defined globals
	check    []byte // the instructions injected at each check point
	scratch  []byte // reused for function bodies
}

// funcIndex is the new index of function i: the injected import comes after
// the module's own imports, so every defined function moves up by one.
func (m *module) funcIndex(i uint32) uint32 {
	if i >= m.imported {
		return i + 1
	}
	return i
}

// Inject returns a copy of wasm in which every loop header, and the entry
// of every function that calls another, decrements a new mutable i32
// global and calls imp (added as the module's last function import) when
// it reaches zero, storing imp's result as the new budget. Every function
// index is renumbered (calls, ref.func, exports, element segments, global
// initialisers, the start function and the name section); other custom
// sections are dropped. A module it cannot rewrite gives an *Error.
func Inject(wasm []byte, imp Import) ([]byte, error) {
	m := &module{imp: imp}
	if err := m.split(wasm); err != nil {
		return nil, err
	}
	if err := m.count(); err != nil {
		return nil, err
	}
	counter := m.globals
	m.check = appendU32([]byte{0x23}, counter)          // global.get $counter
	m.check = append(m.check, 0x41, 0x01, 0x6b)         // i32.const 1; i32.sub
	m.check = appendU32(append(m.check, 0x24), counter) // global.set $counter
	m.check = appendU32(append(m.check, 0x23), counter) // global.get $counter
	m.check = append(m.check, 0x45, 0x04, 0x40)         // i32.eqz; if
	m.check = appendU32(append(m.check, opCall), m.imported)
	m.check = appendU32(append(m.check, 0x24), counter) // global.set $counter
	m.check = append(m.check, opEnd)
	return m.encode()
}

// split checks the header and cuts the module into sections in order.
func (m *module) split(wasm []byte) error {
	if !bytes.HasPrefix(wasm, header) {
		return &Error{Msg: "not a WebAssembly 1.0 binary (bad magic number or version)"}
	}
	r := &reader{b: wasm, pos: len(header)}
	last := 0
	for !r.done() {
		start := r.pos
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		off := r.pos
		body, err := r.bytes(size)
		if err != nil {
			return err
		}
		if id != secCustom {
			rank, ok := sectionOrder[id]
			if !ok {
				return &Error{Offset: start, Msg: fmt.Sprintf("unsupported section id %d", id)}
			}
			if rank <= last {
				return &Error{Offset: start, Msg: fmt.Sprintf("section %d out of order or repeated", id)}
			}
			last = rank
		}
		m.sections = append(m.sections, section{id: id, body: reader{b: body, off: off}})
	}
	return nil
}

// count reads the numbers of types, imported functions and globals, and
// refuses a module that already imports imp.
func (m *module) count() error {
	for _, s := range m.sections {
		r := s.body
		switch s.id {
		case secType:
			n, err := r.u32()
			if err != nil {
				return err
			}
			m.types = n
		case secImport:
			if err := m.countImports(&r); err != nil {
				return err
			}
		case secGlobal:
			n, err := r.u32()
			if err != nil {
				return err
			}
			m.globals += n
		}
	}
	return nil
}

func (m *module) countImports(r *reader) error {
	n, err := r.vec(4)
	if err != nil {
		return err
	}
	for range n {
		modStart := r.pos
		if err := r.name(); err != nil {
			return err
		}
		nameStart := r.pos
		if err := r.name(); err != nil {
			return err
		}
		if isName(r.b[modStart:nameStart], m.imp.Module) && isName(r.b[nameStart:r.pos], m.imp.Name) {
			return r.errorf("the module already imports %s.%s, which is reserved for the host", m.imp.Module, m.imp.Name)
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00: // function: type index
			m.imported++
			_, err = r.u32()
		case 0x01: // table: reference type and limits
			if _, err = r.byte(); err == nil {
				err = limits(r)
			}
		case 0x02: // memory
			err = limits(r)
		case 0x03: // global: value type and mutability
			m.globals++
			_, err = r.bytes(2)
		default:
			err = r.errorf("unsupported import kind %#02x", kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// isName reports whether the encoded name b (length and bytes) is s.
func isName(b []byte, s string) bool {
	r := reader{b: b}
	n, err := r.u32()
	return err == nil && int(n) == len(s) && string(b[r.pos:]) == s
}

// limits skips the limits of a table or memory: a flag, a minimum and,
// with flag 1, a maximum. Shared (threads) and 64-bit memories are refused.
func limits(r *reader) error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 1 {
		return r.errorf("unsupported limits flag %#02x (shared or 64-bit memory)", flag)
	}
	return u32s(r, int(flag)+1)
}

// encode writes the rewritten module: the sections in order, with the new
// type, import and global added (in new sections where the module has
// none), and the name section, renumbered, last.
func (m *module) encode() ([]byte, error) {
	out := make([]byte, 0, len(header)+m.size()+len(m.sections)*256+64)
	out = append(out, header...)
	have := map[byte]bool{}
	var names *section
	for i := range m.sections {
		s := &m.sections[i]
		if s.id == secCustom {
			if isCustom(s, "name") {
				names = s
			}
			continue
		}
		have[s.id] = true
		// Sections the module lacks are added before the first one that
		// comes after them.
		for _, id := range []byte{secType, secImport, secGlobal} {
			if !have[id] && sectionOrder[id] < sectionOrder[s.id] {
				out = appendSection(out, id, m.added(id, 0, nil))
				have[id] = true
			}
		}
		body, err := m.rewrite(s)
		if err != nil {
			return nil, err
		}
		out = appendSection(out, s.id, body)
	}
	for _, id := range []byte{secType, secImport, secGlobal} {
		if !have[id] {
			out = appendSection(out, id, m.added(id, 0, nil))
		}
	}
	if names != nil {
		if body, ok := m.names(names.body); ok {
			out = appendSection(out, secCustom, body)
		}
	}
	return out, nil
}

func (m *module) size() int {
	n := 0
	for _, s := range m.sections {
		n += len(s.body.b)
	}
	return n
}

func isCustom(s *section, name string) bool {
	r := s.body
	n, err := r.u32()
	return err == nil && int(n) == len(name) && bytes.HasPrefix(r.b[r.pos:], []byte(name))
}

func appendSection(out []byte, id byte, body []byte) []byte {
	return append(appendU32(append(out, id), uint32(len(body))), body...)
}

// added is the body of a type, import or global section: its n entries
// (already rewritten) and the injection's entry after them.
func (m *module) added(id byte, n uint32, entries []byte) []byte {
	out := append(appendU32(nil, n+1), entries...)
	switch id {
	case secType:
		return append(out, 0x60, 0x00, 0x01, 0x7f) // () -> i32
	case secImport:
		out = appendU32(out, uint32(len(m.imp.Module)))
		out = append(out, m.imp.Module...)
		out = appendU32(out, uint32(len(m.imp.Name)))
		out = append(out, m.imp.Name...)
		return appendU32(append(out, 0x00), m.types) // a function of the added type
	default: // mutable i32 = Budget
		out = append(out, 0x7f, 0x01, 0x41)
		return append(appendS32(out, Budget), opEnd)
	}
}
