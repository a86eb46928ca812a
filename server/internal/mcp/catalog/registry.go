package catalog

import (
	"sync/atomic"

	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Registry adapts a *registry.Registry to Source, adding the integrations
// built into the server (jots, browser). Each registry snapshot is converted
// to a View once; the newest conversion is cached.
type Registry struct {
	reg     *registry.Registry
	natives []*Integration
	cached  atomic.Pointer[converted]
}

type converted struct {
	snap *registry.Snapshot
	view *View
}

var _ Source = (*Registry)(nil)

// FromRegistry returns a Source over reg and the server's native
// integrations. Manifest validation reserves the natives' names, so no
// plugin can collide with them.
func FromRegistry(reg *registry.Registry, natives ...*Integration) *Registry {
	return &Registry{reg: reg, natives: natives}
}

// Current implements Source.
func (r *Registry) Current() *View { return r.viewOf(r.reg.Current()) }

// Acquire implements Source.
func (r *Registry) Acquire() (*View, func()) {
	snap, release := r.reg.Acquire()
	return r.viewOf(snap), release
}

func (r *Registry) viewOf(snap *registry.Snapshot) *View {
	if c := r.cached.Load(); c != nil && c.snap == snap {
		return c.view
	}
	ins := snap.Integrations()
	list := make([]*Integration, 0, len(ins)+len(r.natives))
	list = append(list, r.natives...)
	for _, in := range ins {
		list = append(list, &Integration{Manifest: in.Manifest(), Builtin: in.Builtin, Caller: in.Plugin})
	}
	v, err := NewView(list)
	if err != nil {
		// The registry refuses duplicate names and slugs when it loads, so
		// a snapshot always converts; an empty view is the safe answer if
		// that ever changes.
		v = &View{byName: map[string]*Integration{}, bySlug: map[string]Tool{}}
	}
	// Cache only the newest snapshot, so that a lease on an older one does
	// not evict it.
	if snap == r.reg.Current() {
		r.cached.Store(&converted{snap: snap, view: v})
	}
	return v
}
