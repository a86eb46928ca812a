package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// ABI is a plugin ABI other than ABI v1 that the host can run, such as
// Extism's (package runtime/extism). Config.Extism hands one to the host,
// which then loads such plugins behind the same Plugin API: same manifest,
// limits, per-user pools, counters and error codes. Keeping the ABI outside
// runtime keeps its dependencies out of the core runtime's build.
type ABI interface {
	// Accepts reports whether a module, as compiled by the host, speaks
	// this ABI.
	Accepts(compiled wazero.CompiledModule) bool
	// Compile compiles wasm with the host's compilation cache under the
	// plugin's limits (memory pages, response bytes). wasm is already
	// rewritten with the interrupt check: the ABI offers InterruptImport,
	// implemented by Interrupt, and leaves wazero's own check off.
	Compile(ctx context.Context, wasm []byte, cache wazero.CompilationCache, limits Limits) (ABIModule, error)
}

// ABIModule is a module compiled by an ABI.
type ABIModule interface {
	// Instantiate creates an instance with the host's module configuration
	// (stdout and stderr to the plugin's log, clocks, randomness); logger
	// receives the ABI's own log records.
	Instantiate(ctx context.Context, mc wazero.ModuleConfig, logger *slog.Logger) (ABIInstance, error)
	Close(ctx context.Context) error
}

// ABIInstance is one instance of an ABIModule. It runs one call at a time.
type ABIInstance interface {
	// HasExport reports whether the module exports the function.
	HasExport(name string) bool
	// Call runs an export on input. A non-nil pluginErr is the plugin's own
	// error, and the instance stays in use; a non-nil err is a host
	// failure (a trap, the deadline, a *failure.Error a host function panicked
	// with), and the instance is discarded. The host checks the output.
	Call(ctx context.Context, export string, input []byte) (out []byte, pluginErr *failure.Error, err error)
	// MemoryPages is the current size of the instance's memory in 64 KiB pages.
	MemoryPages() uint64
	Close(ctx context.Context) error
}

// HTTPRequest performs an outbound request for the call running in ctx, as
// the ABI v1 import http_request does (docs/abi.md, section 5): head is its
// JSON request head, and the result is the JSON response head and body, or
// the error to hand to the plugin. An ABI's host function calls it with the
// context it was given; outside a tool call it panics with a *failure.Error,
// which must reach the host as the call's error.
func HTTPRequest(ctx context.Context, head, body []byte) (respHead, respBody []byte, err *failure.Error) {
	st := stateFrom(ctx)
	st.requireTool("http_request")
	return st.plugin.httpRequest(ctx, st, head, body)
}

// abiEngine is the engine of a plugin compiled by an ABI.
type abiEngine struct {
	mod ABIModule
}

// abiGuest is one instance of an abiEngine.
type abiGuest struct {
	in    ABIInstance
	clock *sleeper
}

func (h *Host) compileABI(ctx context.Context, wasm []byte, limits Limits) (engine, error) {
	mod, err := h.cfg.Extism.Compile(ctx, wasm, h.cache, limits)
	if err != nil {
		return nil, err
	}
	return &abiEngine{mod: mod}, nil
}

func (e *abiEngine) instantiate(ctx context.Context, logger *slog.Logger) (guest, error) {
	clock := &sleeper{}
	in, err := e.mod.Instantiate(ctx, moduleConfig(logger, clock), logger)
	if err != nil {
		return nil, err
	}
	return &abiGuest{in: in, clock: clock}, nil
}

// checkExports looks the exports up on a throwaway instance: an ABI
// describes its module only through one.
func (e *abiEngine) checkExports(ctx context.Context, m *manifest.Manifest) error {
	g, err := e.instantiate(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	defer g.close(ctx)
	in := g.(*abiGuest).in
	for _, t := range m.Tools {
		if !in.HasExport(t.ExportName()) {
			return fmt.Errorf("tools: %s: the module has no export %q", t.Slug, t.ExportName())
		}
	}
	for export, field := range m.ContentExports() {
		if !in.HasExport(export) {
			return fmt.Errorf("%s: the module has no export %q", field, export)
		}
	}
	return nil
}

func (e *abiEngine) close(ctx context.Context) error { return e.mod.Close(ctx) }

// run calls the export and checks its output the way nativeGuest.run does
// for ABI v1.
func (g *abiGuest) run(ctx context.Context, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError) {
	if !g.in.HasExport(export) {
		return nil, hostErr(failure.UnknownTool, fmt.Sprintf("the module has no export %q", export))
	}
	g.clock.ctx = ctx
	out, perr, err := g.in.Call(ctx, export, input)
	g.clock.ctx = nil
	switch {
	case err != nil:
		return nil, &hostOrToolError{err: classify(ctx, err), host: true}
	case perr != nil:
		return nil, &hostOrToolError{err: perr}
	case int64(len(out)) > st.tool.limits.OutputBytes:
		return nil, hostErr(failure.OutputTooLarge, fmt.Sprintf("output of %d bytes is over the limit of %d bytes", len(out), st.tool.limits.OutputBytes))
	case len(out) == 0:
		return nil, hostErr(failure.BadOutput, export+" returned success without output")
	case !json.Valid(out):
		return nil, hostErr(failure.BadOutput, export+" produced output that is not valid JSON")
	}
	return out, nil
}

func (g *abiGuest) memoryPages() uint64 { return g.in.MemoryPages() }

func (g *abiGuest) close(ctx context.Context) { g.in.Close(ctx) }
