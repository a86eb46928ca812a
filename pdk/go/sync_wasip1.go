//go:build wasip1

package pdk

// In wasm an instance runs one thread and serves one call at a time, and
// only the exports touch what exportMutex and spare guard: they need no
// atomic operations, which cost a runtime call each there.

// exportMutex guards state the exports share; in wasm it does nothing.
type exportMutex struct{}

func (*exportMutex) Lock()   {}
func (*exportMutex) Unlock() {}

// spare holds one value kept between calls.
type spare[T any] struct{ p *T }

// Swap stores p and returns the value held before.
func (s *spare[T]) Swap(p *T) *T {
	old := s.p
	s.p = p
	return old
}

// Store stores p.
func (s *spare[T]) Store(p *T) { s.p = p }
