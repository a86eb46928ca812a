package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// engine compiles one plugin's module and creates its guests: wazero with
// the workbench_v1 imports for ABI v1 (nativeEngine), or another ABI such as
// Extism's (abiEngine). Compiling and instantiating stay
// behind it, so a change to how guests are interrupted or reset touches
// only the engines, never the Plugin.
type engine interface {
	// instantiate creates a guest whose stdout and stderr go to logger.
	instantiate(ctx context.Context, logger *slog.Logger) (guest, error)
	// checkExports reports the first tool, resource or prompt export of m
	// that the module lacks or exports with the wrong type.
	checkExports(ctx context.Context, m *manifest.Manifest) error
	// close releases the compiled module.
	close(ctx context.Context) error
}

// guest is one instance of an engine's module. It runs one call at a time.
type guest interface {
	// run invokes an export on input and returns its JSON output. A host
	// error means the guest must not be used again.
	run(ctx context.Context, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError)
	// memoryPages is the current size of the guest's memory in 64 KiB pages.
	memoryPages() uint64
	close(ctx context.Context)
}

// closers collects what a partly built plugin must release if a later step
// fails, and releases it all at once, newest first.
type closers []func(context.Context) error

func (c *closers) add(close func(context.Context) error) { *c = append(*c, close) }

// closeIfFailed runs every closer when *err is set; defer it.
func (c *closers) closeIfFailed(ctx context.Context, err *error) {
	if *err == nil {
		return
	}
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i](ctx)
	}
}

// runGuest runs an export on g. A guest that traps or exits with its memory
// grown to within an eighth of limit pages (an allocator asks for memory in
// steps; Go's in 4 MiB ones) most likely failed to allocate: that trap is
// OUT_OF_MEMORY. A zero limit (the manifest probe) skips the check.
func runGuest(ctx context.Context, g guest, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError) {
	out, err := g.run(ctx, st, export, input)
	if err != nil && err.host && err.err.Code == failure.Trap {
		if limit := uint64(st.tool.limits.MemoryPages); limit > 0 && g.memoryPages() >= limit-limit/8 {
			err = hostErr(failure.OutOfMemory, fmt.Sprintf("the plugin ran out of memory (%d of its %d pages in use): %s", g.memoryPages(), limit, err.err.Message))
		}
	}
	return out, err
}

// readManifest calls the manifest export on a throwaway guest and validates
// the result.
func readManifest(ctx context.Context, e engine, logger *slog.Logger) (*manifest.Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultLimits.Timeout)
	defer cancel()
	g, err := e.instantiate(ctx, logger)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	defer g.close(ctx)
	st := &callState{plugin: &Plugin{logger: logger}, tool: &toolEntry{Tool: &manifest.Tool{Slug: exportManifest}, limits: Limits{OutputBytes: manifest.MaxManifestBytes}}}
	out, terr := runGuest(context.WithValue(ctx, callStateKey{}, st), g, st, exportManifest, nil)
	if terr != nil {
		return nil, fmt.Errorf("manifest export: %w", terr)
	}
	return manifest.Parse(out)
}
