package registry

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// Registry holds the current Snapshot. It is safe for concurrent use; reads
// are lock-free.
type Registry struct {
	current atomic.Pointer[Snapshot]
	logger  *slog.Logger
}

// New returns a registry holding an empty snapshot. The logger (nil means
// discard) reports plugins that fail to close when their snapshot retires.
func New(logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{logger: logger}
	empty := newSnapshot(nil, nil)
	empty.claimed.Store(true)
	empty.logger = logger
	r.current.Store(empty)
	return r
}

// Current returns the current snapshot for reading metadata. To call a
// plugin use Acquire, which keeps the plugin open until released.
func (r *Registry) Current() *Snapshot { return r.current.Load() }

// Acquire returns the current snapshot with a lease: its plugins stay open
// until release is called. release is safe to call more than once.
func (r *Registry) Acquire() (snap *Snapshot, release func()) {
	for {
		s := r.current.Load()
		if s.tryRef() {
			return s, sync.OnceFunc(s.unref)
		}
		// s drained between Load and tryRef: a newer snapshot is in place.
	}
}

// Swap makes s the current snapshot. The previous snapshot's plugins are
// closed once its last lease is released (immediately when it has none).
// Passing a snapshot that was already swapped in or closed returns ErrClaimed.
func (r *Registry) Swap(s *Snapshot) error {
	if !s.claimed.CompareAndSwap(false, true) {
		return ErrClaimed
	}
	s.logger = r.logger
	old := r.current.Swap(s)
	old.unref()
	return nil
}

// Close swaps in an empty snapshot, so every plugin closes once the calls
// in flight are done.
func (r *Registry) Close() {
	empty := newSnapshot(nil, nil)
	empty.logger = r.logger
	_ = r.Swap(empty)
}
