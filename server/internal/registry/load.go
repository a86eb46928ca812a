package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sync"

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
	plugin *runtime.Plugin
	err    error
}

// Load compiles every source in parallel (at most GOMAXPROCS at a time) and
// assembles a snapshot in source order, so the outcome does not depend on
// which compilation finished first: when two plugins claim the same
// integration name or tool slug, the later source fails and the error names
// both plugins. A plugin that fails to load is left out and listed in
// Snapshot.Failed with its reason.
//
// Load returns an error only when ctx ends first; then every plugin it loaded
// is closed. The caller owns the snapshot: pass it to Registry.Swap or Close it.
func Load(ctx context.Context, loader Loader, sources []Source) (*Snapshot, error) {
	results := compileAll(ctx, loader, sources)
	if err := ctx.Err(); err != nil {
		for _, r := range results {
			if r.plugin != nil {
				_ = r.plugin.Close(context.WithoutCancel(ctx))
			}
		}
		return nil, fmt.Errorf("loading plugins: %w", err)
	}

	var (
		integrations []*Integration
		failed       []Failure
		byName       = map[string]*Integration{}
		bySlug       = map[string]*Integration{}
	)
	for i, src := range sources {
		r := results[i]
		if r.err != nil {
			failed = append(failed, Failure{Path: src.Path, Builtin: src.Builtin, Err: r.err})
			continue
		}
		m := r.plugin.Manifest()
		if err := conflict(m.Name, r.plugin, byName, bySlug); err != nil {
			_ = r.plugin.Close(ctx)
			failed = append(failed, Failure{Path: src.Path, Builtin: src.Builtin, Name: m.Name, Err: err})
			continue
		}
		in := &Integration{Name: m.Name, Path: src.Path, Builtin: src.Builtin, Plugin: r.plugin}
		integrations = append(integrations, in)
		byName[in.Name] = in
		for _, t := range m.Tools {
			bySlug[t.Slug] = in
		}
	}
	return newSnapshot(integrations, failed), nil
}

// conflict reports the first way a plugin clashes with the ones accepted
// before it: its integration name, then its tool slugs in manifest order.
func conflict(name string, p *runtime.Plugin, byName, bySlug map[string]*Integration) error {
	if prev, ok := byName[name]; ok {
		return fmt.Errorf("%w: integration %q is already provided by %s", ErrDuplicateName, name, prev.Path)
	}
	for _, t := range p.Manifest().Tools {
		if prev, ok := bySlug[t.Slug]; ok {
			return fmt.Errorf("%w: tool %q of integration %s is already provided by integration %s (%s)",
				ErrSlugCollision, t.Slug, name, prev.Name, prev.Path)
		}
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
	p, err := loader.Load(ctx, wasm)
	if err != nil {
		return compiled{err: err}
	}
	return compiled{plugin: p}
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
