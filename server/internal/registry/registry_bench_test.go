package registry

import (
	"testing"
)

// BenchmarkRegistry_Acquire measures the lease a tool call takes on its
// snapshot (Acquire, slug lookup, release) against a bare lookup on the
// current snapshot, both from parallel goroutines.
func BenchmarkRegistry_Acquire(b *testing.B) {
	dir := b.TempDir()
	reg := newRegistry(b)
	if err := reg.Swap(mustLoad(b, newTestHost(b), Source{Path: echoPlugin(b, dir, "bn.wasm", "bn", "bn_echo")})); err != nil {
		b.Fatal(err)
	}
	defer reg.Close()

	b.Run("lease", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s, release := reg.Acquire()
				if _, ok := s.Tool("bn_echo"); !ok {
					b.Error("tool missing")
				}
				release()
			}
		})
	})
	b.Run("baseline-current", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, ok := reg.Current().Tool("bn_echo"); !ok {
					b.Error("tool missing")
				}
			}
		})
	})
}
