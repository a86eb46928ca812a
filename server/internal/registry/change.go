package registry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors of Install, Reload and Remove.
var (
	// ErrUnknown: no integration has the given name.
	ErrUnknown = errors.New("no integration by that name")
	// ErrNative: the integration is built into the server; it cannot be
	// reloaded, replaced or removed.
	ErrNative = errors.New("native integration")
	// ErrWrongName: a reloaded module declares another integration name.
	ErrWrongName = errors.New("the module declares another integration")
)

// Change is what Install, Reload or Remove did to the catalog.
type Change struct {
	// Old is the plugin replaced or removed; nil when Install added a new
	// integration. Calls that leased it before the change finish on it.
	Old *Integration
	// New is the plugin installed; nil after Remove.
	New *Integration
}

// Install compiles wasm as the plugin of src beside the plugins serving now,
// then swaps in a snapshot of the current one where it takes the place of
// the plugin with the same integration name, or joins the others. When name
// is not empty the module must declare that integration (ErrWrongName).
//
// A module that does not compile or validate, that takes a native's name,
// or whose tools collide with another integration's is refused: the current
// snapshot keeps serving, and the error (wrapping ErrDuplicateName or
// ErrSlugCollision) names both plugins. Calls in flight finish on the plugin
// they started on; later calls use the new one.
func (r *Registry) Install(ctx context.Context, loader Loader, src Source, wasm []byte, name string) (Change, error) {
	if len(wasm) > MaxPluginBytes {
		return Change{}, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, MaxPluginBytes)
	}
	in, err := compile(ctx, loader, src, wasm)
	if err != nil {
		return Change{}, err
	}
	if name != "" && in.Name != name {
		_ = in.Plugin.Close(ctx)
		return Change{}, fmt.Errorf("%w: it declares %q, not %q", ErrWrongName, in.Name, name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.current.Load()
	old, _ := cur.Integration(in.Name)
	if old != nil && old.Plugin == nil {
		old = nil // a native: index.add refuses the name
	}
	next, err := derive(cur, old, in, keepFailures(cur.failed, in.Name, src.Path))
	if err != nil {
		_ = in.Plugin.Close(ctx)
		return Change{}, err
	}
	r.install(next)
	return Change{Old: old, New: in}, nil
}

// Reload reads the file of the named plugin again and installs it (see
// Install). When that fails the current plugin keeps serving and the
// failure is listed in the current snapshot's Failed, until the plugin is
// reloaded, replaced or removed.
func (r *Registry) Reload(ctx context.Context, loader Loader, name string) (Change, error) {
	in, ok := r.Current().Integration(name)
	switch {
	case !ok:
		return Change{}, fmt.Errorf("%w: %q", ErrUnknown, name)
	case in.Plugin == nil:
		return Change{}, fmt.Errorf("%w: %s is built into the server", ErrNative, name)
	}
	wasm, err := readPlugin(in.Path)
	if err != nil {
		r.fail(Failure{Path: in.Path, Builtin: in.Builtin, Name: name, Err: err, At: time.Now()})
		return Change{}, err
	}
	ch, err := r.Install(ctx, loader, in.source(), wasm, name)
	if err != nil {
		r.fail(Failure{Path: in.Path, Builtin: in.Builtin, Name: name, Err: err, At: time.Now()})
	}
	return ch, err
}

// Remove swaps in a snapshot of the current one without the named plugin.
// Calls that leased it finish on it; it closes after the last one.
func (r *Registry) Remove(name string) (Change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.current.Load()
	in, ok := cur.Integration(name)
	switch {
	case !ok:
		return Change{}, fmt.Errorf("%w: %q", ErrUnknown, name)
	case in.Plugin == nil:
		return Change{}, fmt.Errorf("%w: %s is built into the server", ErrNative, name)
	}
	next, err := derive(cur, in, nil, keepFailures(cur.failed, name, in.Path))
	if err != nil {
		return Change{}, err // removing never clashes
	}
	r.install(next)
	return Change{Old: in}, nil
}

// fail swaps in a snapshot with the current integrations that lists f in
// place of earlier failures of the same plugin.
func (r *Registry) fail(f Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.current.Load()
	next := newSnapshot(cur.integrations, append(keepFailures(cur.failed, f.Name, f.Path), f))
	next.claimed.Store(true)
	r.install(next)
}

// derive indexes cur's integrations without drop, then add; a clash of add
// with the others is an error naming both.
func derive(cur *Snapshot, drop, add *Integration, failed []Failure) (*Snapshot, error) {
	idx := newIndex()
	for _, in := range cur.integrations {
		if in == drop {
			continue
		}
		if err := idx.add(in); err != nil {
			return nil, err // cur was consistent
		}
	}
	if add != nil {
		if err := idx.add(add); err != nil {
			return nil, err
		}
	}
	next := newSnapshot(idx.integrations, failed)
	next.claimed.Store(true)
	return next, nil
}

// keepFailures returns the failures that concern neither the integration
// name nor the path: a change to a plugin supersedes its earlier failures.
func keepFailures(failed []Failure, name, path string) []Failure {
	var out []Failure
	for _, f := range failed {
		if (name != "" && f.Name == name) || (path != "" && f.Path == path) {
			continue
		}
		out = append(out, f)
	}
	return out
}
