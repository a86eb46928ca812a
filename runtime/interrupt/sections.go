package interrupt

// rewrite returns the new body of a non-custom section.
func (m *module) rewrite(s *section) ([]byte, error) {
	r := s.body
	switch s.id {
	case secType, secImport:
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		return m.added(s.id, n, r.b[r.pos:]), nil
	case secGlobal:
		return m.globalSection(&r)
	case secExport:
		return m.exportSection(&r)
	case secStart:
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		return appendU32(nil, m.funcIndex(idx)), nil
	case secElement:
		return m.elementSection(&r)
	case secCode:
		return m.codeSection(&r)
	}
	return r.b, nil
}

// globalSection renumbers ref.func in the initialisers and adds the counter.
func (m *module) globalSection(r *reader) ([]byte, error) {
	n, err := r.vec(3)
	if err != nil {
		return nil, err
	}
	var out []byte
	for range n {
		t, err := r.bytes(2) // value type and mutability
		if err != nil {
			return nil, err
		}
		if out, err = m.expr(r, append(out, t...)); err != nil {
			return nil, err
		}
	}
	return m.added(secGlobal, n, out), nil
}

// exportSection renumbers function exports.
func (m *module) exportSection(r *reader) ([]byte, error) {
	n, err := r.vec(3)
	if err != nil {
		return nil, err
	}
	out := appendU32(nil, n)
	for range n {
		start := r.pos
		if err := r.name(); err != nil {
			return nil, err
		}
		name := r.b[start:r.pos]
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		if kind == 0x00 {
			idx = m.funcIndex(idx)
		}
		out = appendU32(append(append(out, name...), kind), idx)
	}
	return out, nil
}

// elementSection renumbers the function indices and ref.func expressions
// of every element segment (all eight forms of the reference types
// proposal: bit 0 passive or declarative, bit 1 explicit table index,
// bit 2 expressions instead of function indices).
func (m *module) elementSection(r *reader) ([]byte, error) {
	n, err := r.vec(2)
	if err != nil {
		return nil, err
	}
	out := appendU32(nil, n)
	for range n {
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, r.errorf("unsupported element segment flags %d", flags)
		}
		out = appendU32(out, flags)
		if flags&1 == 0 {
			if flags&2 != 0 {
				table, err := r.u32()
				if err != nil {
					return nil, err
				}
				out = appendU32(out, table)
			}
			if out, err = m.expr(r, out); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 {
			kind, err := r.byte() // element kind or reference type
			if err != nil {
				return nil, err
			}
			out = append(out, kind)
		}
		items, err := r.vec(1)
		if err != nil {
			return nil, err
		}
		out = appendU32(out, items)
		for range items {
			if flags&4 != 0 {
				out, err = m.expr(r, out)
			} else {
				var idx uint32
				if idx, err = r.u32(); err == nil {
					out = appendU32(out, m.funcIndex(idx))
				}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// codeSection rewrites every function body.
func (m *module) codeSection(r *reader) ([]byte, error) {
	n, err := r.vec(2)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(r.b)+int(n)*2*len(m.check))
	out = appendU32(out, n)
	for range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		off := r.off + r.pos
		b, err := r.bytes(size)
		if err != nil {
			return nil, err
		}
		if out, err = m.body(&reader{b: b, off: off}, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// names renumbers the function, local and label names of a name section
// (subsections 1, 2 and 3, keyed by function index) and keeps the other
// subsections. A malformed name section is dropped (ok false): names are
// for debugging, and the engine reads them only for stack traces.
func (m *module) names(r reader) (_ []byte, ok bool) {
	if _, err := r.bytes(5); err != nil { // the name "name"
		return nil, false
	}
	out := appendU32(nil, 4)
	out = append(out, "name"...)
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, false
		}
		size, err := r.u32()
		if err != nil {
			return nil, false
		}
		b, err := r.bytes(size)
		if err != nil {
			return nil, false
		}
		if id >= 1 && id <= 3 {
			if b, err = m.nameMap(&reader{b: b}, id != 1); err != nil {
				return nil, false
			}
		}
		out = append(appendU32(append(out, id), uint32(len(b))), b...)
	}
	return out, true
}

// nameMap renumbers the function indices of a name map, or of an indirect
// name map (whose entries are name maps of locals or labels, kept as is).
func (m *module) nameMap(r *reader, indirect bool) ([]byte, error) {
	n, err := r.vec(2)
	if err != nil {
		return nil, err
	}
	out := appendU32(nil, n)
	for range n {
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		start := r.pos
		if indirect {
			err = skipNameMap(r)
		} else {
			err = r.name()
		}
		if err != nil {
			return nil, err
		}
		out = append(appendU32(out, m.funcIndex(idx)), r.b[start:r.pos]...)
	}
	if !r.done() {
		return nil, r.errorf("trailing bytes in a name map")
	}
	return out, nil
}

// skipNameMap skips a name map of indices and names.
func skipNameMap(r *reader) error {
	n, err := r.vec(2)
	for i := uint32(0); err == nil && i < n; i++ {
		if _, err = r.u32(); err == nil {
			err = r.name()
		}
	}
	return err
}
