package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/runtime"
)

// MaxPluginBytes caps the size of one plugin file.
const MaxPluginBytes = 128 << 20

// Errors wrapped by a Failure.
var (
	// ErrSlugCollision: a tool slug is already provided by an earlier plugin.
	ErrSlugCollision = errors.New("tool slug collision")
	// ErrDuplicateName: the integration name is already provided by an earlier plugin.
	ErrDuplicateName = errors.New("duplicate integration name")
	// ErrTooLarge: the plugin file is larger than MaxPluginBytes.
	ErrTooLarge = errors.New("plugin file too large")
)

// Loader compiles one plugin; *runtime.Host implements it.
type Loader interface {
	Load(ctx context.Context, wasm []byte) (*runtime.Plugin, error)
}

var _ Loader = (*runtime.Host)(nil)

// compiled is the outcome of loading one source.
type compiled struct {
	integration *Integration
	err         error
}

// Load compiles every source in parallel (at most GOMAXPROCS at a time) and
// assembles a snapshot of the registry's native integrations and the
// plugins in source order, so the outcome does not depend on which
// compilation finished first: when a plugin claims an integration name or
// tool slug already taken (by a native or an earlier source), it fails and
// the error names both. A plugin that fails to load is left out and listed
// in Snapshot.Failed with its reason.
//
// Load returns an error only when ctx ends first; then every plugin it loaded
// is closed. The caller owns the snapshot: pass it to Swap or Close it.
func (r *Registry) Load(ctx context.Context, loader Loader, sources []Source) (*Snapshot, error) {
	results := compileAll(ctx, loader, sources)
	if err := ctx.Err(); err != nil {
		for _, res := range results {
			if res.integration != nil {
				_ = res.integration.Plugin.Close(context.WithoutCancel(ctx))
			}
		}
		return nil, fmt.Errorf("loading plugins: %w", err)
	}
	idx := newIndex()
	for _, in := range r.natives {
		if err := idx.add(in); err != nil {
			return nil, err // New checked the natives
		}
	}
	var failed []Failure
	for i, src := range sources {
		res := results[i]
		if res.err != nil {
			failed = append(failed, Failure{Path: src.Path, Builtin: src.Builtin, Err: res.err, At: time.Now()})
			continue
		}
		in := res.integration
		if err := idx.add(in); err != nil {
			_ = in.Plugin.Close(ctx)
			failed = append(failed, Failure{Path: src.Path, Builtin: src.Builtin, Name: in.Name, Err: err, At: time.Now()})
		}
	}
	return newSnapshot(idx.integrations, failed), nil
}

// NewSnapshot indexes integrations (natives, in tests any) into a snapshot,
// refusing a clash of names or slugs.
func NewSnapshot(integrations ...*Integration) (*Snapshot, error) {
	idx := newIndex()
	for _, in := range integrations {
		if err := idx.add(in); err != nil {
			return nil, err
		}
	}
	return newSnapshot(idx.integrations, nil), nil
}

// With returns the catalog one caller sees: s's integrations and extra (a
// user's custom apps), refusing a name or slug that clashes. The result
// shares s's integrations and holds no reference of its own: read and call
// it only while holding a lease on s (or reading s's metadata), and never
// Swap or Close it (both return ErrClaimed).
func (s *Snapshot) With(extra ...*Integration) (*Snapshot, error) {
	idx := newIndex()
	for _, in := range append(s.Integrations(), extra...) {
		if err := idx.add(in); err != nil {
			return nil, err
		}
	}
	v := newSnapshot(idx.integrations, s.failed)
	v.claimed.Store(true)
	return v, nil
}

// index collects integrations, refusing one that clashes with those before.
type index struct {
	integrations []*Integration
	byName       map[string]*Integration
	bySlug       map[string]*Integration
}

func newIndex() *index {
	return &index{byName: map[string]*Integration{}, bySlug: map[string]*Integration{}}
}

// add reports the first way in clashes with the integrations accepted
// before it (its name, then its tool slugs in manifest order), or accepts it.
func (x *index) add(in *Integration) error {
	if prev, ok := x.byName[in.Name]; ok {
		return fmt.Errorf("%w: integration %q is already provided by %s", ErrDuplicateName, in.Name, prev.origin())
	}
	tools := in.Manifest().Tools
	for _, t := range tools {
		if prev, ok := x.bySlug[t.Slug]; ok {
			return fmt.Errorf("%w: tool %q of integration %s is already provided by integration %s (%s)",
				ErrSlugCollision, t.Slug, in.Name, prev.Name, prev.origin())
		}
	}
	x.integrations = append(x.integrations, in)
	x.byName[in.Name] = in
	for _, t := range tools {
		x.bySlug[t.Slug] = in
	}
	return nil
}

// compileAll reads and loads every source, at most GOMAXPROCS at a time.
// Results are indexed like sources; sources not started because ctx ended
// carry ctx's error.
func compileAll(ctx context.Context, loader Loader, sources []Source) []compiled {
	results := make([]compiled, len(sources))
	slots := make(chan struct{}, goruntime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, src := range sources {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			results[i].err = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[i] = compileOne(ctx, loader, src)
		}()
	}
	wg.Wait()
	return results
}

func compileOne(ctx context.Context, loader Loader, src Source) compiled {
	wasm, err := readPlugin(src.Path)
	if err != nil {
		return compiled{err: err}
	}
	in, err := compile(ctx, loader, src, wasm)
	return compiled{integration: in, err: err}
}

// compile loads wasm as the plugin of src.
func compile(ctx context.Context, loader Loader, src Source, wasm []byte) (*Integration, error) {
	p, err := loader.Load(ctx, wasm)
	if err != nil {
		return nil, err
	}
	return plugin(p, src, wasm, time.Now()), nil
}

// readPlugin reads a plugin file of at most MaxPluginBytes.
func readPlugin(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPluginBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxPluginBytes {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrTooLarge, MaxPluginBytes)
	}
	return b, nil
}
