package registry

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Registry holds the current Snapshot. It is safe for concurrent use; reads
// are lock-free.
type Registry struct {
	current atomic.Pointer[Snapshot]
	natives []*Integration
	logger  *slog.Logger

	mu sync.Mutex // serialises the writers: Swap, Install, Reload, Remove, Close
}

// New returns a registry holding a snapshot of the native integrations,
// which every snapshot Load builds includes too. Natives that clash are an
// error. The logger (nil means discard) reports plugins that fail to close
// when their snapshot retires.
func New(logger *slog.Logger, natives ...*Integration) (*Registry, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	first, err := NewSnapshot(natives...)
	if err != nil {
		return nil, fmt.Errorf("registry: native integrations: %w", err)
	}
	r := &Registry{natives: natives, logger: logger}
	first.claimed.Store(true)
	first.logger = logger
	r.current.Store(first)
	return r, nil
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

// Swap makes s the current snapshot, replacing everything the current one
// holds (including what Install added). The previous snapshot's plugins are
// closed once its last lease is released (immediately when it has none),
// unless s holds them too. Passing a snapshot that was already swapped in or
// closed returns ErrClaimed.
func (r *Registry) Swap(s *Snapshot) error {
	if !s.claimed.CompareAndSwap(false, true) {
		return ErrClaimed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.install(s)
	return nil
}

// install makes the claimed snapshot s current; r.mu is held.
func (r *Registry) install(s *Snapshot) {
	s.logger = r.logger
	old := r.current.Swap(s)
	old.unref()
}

// Close swaps in a snapshot of the natives alone, so every plugin closes
// once the calls in flight are done.
func (r *Registry) Close() {
	natives := newSnapshot(r.natives, nil)
	natives.claimed.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.install(natives)
}

// Manifest returns the manifest of the current snapshot's integration with
// the given name.
func (r *Registry) Manifest(name string) (*manifest.Manifest, bool) {
	in, ok := r.Current().Integration(name)
	if !ok {
		return nil, false
	}
	return in.Manifest(), true
}

// Manifests returns the manifests of the current snapshot's integrations,
// by name.
func (r *Registry) Manifests() []*manifest.Manifest {
	ins := r.Current().Integrations()
	out := make([]*manifest.Manifest, len(ins))
	for i, in := range ins {
		out[i] = in.Manifest()
	}
	return out
}
