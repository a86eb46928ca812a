package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Names of the exports ABI v1 requires (docs/abi.md, section 2).
const (
	exportMemory     = "memory"
	exportAlloc      = "wb_alloc"
	exportManifest   = "manifest"
	exportInitialize = "_initialize"
)

// Statuses a tool export returns.
const (
	statusOK    = 0
	statusError = 1
)

// nativeEngine runs ABI v1 modules on wazero with the workbench_v1 imports.
type nativeEngine struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

// nativeGuest is one instance of an ABI v1 module.
type nativeGuest struct {
	mod   api.Module
	clock *sleeper
	alloc api.Function
	fns   map[string]api.Function // export handles, looked up once
	stack [2]uint64
}

// instantiate creates a guest, wires stdout and stderr to the plugin's log
// and runs _initialize when the module exports it.
func (e *nativeEngine) instantiate(ctx context.Context, logger *slog.Logger) (guest, error) {
	clock := &sleeper{ctx: ctx}
	defer func() { clock.ctx = nil }()
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, moduleConfig(logger, clock).WithName("").WithStartFunctions())
	if err != nil {
		return nil, err
	}
	g := &nativeGuest{mod: mod, clock: clock, fns: map[string]api.Function{}}
	if err := g.init(ctx); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return g, nil
}

// init runs _initialize and looks up what every call needs.
func (g *nativeGuest) init(ctx context.Context) error {
	if init := g.mod.ExportedFunction(exportInitialize); init != nil {
		if _, err := init.Call(ctx); err != nil {
			return fmt.Errorf("%s: %w", exportInitialize, err)
		}
	}
	if g.alloc = g.mod.ExportedFunction(exportAlloc); g.alloc == nil {
		return fmt.Errorf("missing export %q", exportAlloc)
	}
	if g.mod.Memory() == nil {
		return fmt.Errorf("missing export %q", exportMemory)
	}
	return nil
}

func (e *nativeEngine) checkExports(_ context.Context, m *manifest.Manifest) error {
	return checkToolExports(e.compiled, m)
}

func (e *nativeEngine) close(ctx context.Context) error { return e.rt.Close(ctx) }

// function returns the cached handle of an export.
func (g *nativeGuest) function(name string) api.Function {
	fn, ok := g.fns[name]
	if !ok {
		fn = g.mod.ExportedFunction(name)
		g.fns[name] = fn
	}
	return fn
}

// run invokes an export and turns its status and output into a result.
func (g *nativeGuest) run(ctx context.Context, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError) {
	g.clock.ctx = ctx
	status, err := g.invoke(ctx, export, input)
	g.clock.ctx = nil
	if err != nil {
		return nil, &hostOrToolError{err: classify(ctx, err), host: true}
	}
	switch status {
	case statusOK:
		if !st.outputSet {
			return nil, hostErr(failure.BadOutput, export+" returned success without calling output_set")
		}
		if !json.Valid(st.output) {
			return nil, hostErr(failure.BadOutput, export+" produced output that is not valid JSON")
		}
		return st.output, nil
	case statusError:
		return nil, &hostOrToolError{err: pluginError(st)}
	default:
		return nil, hostErr(failure.BadOutput, fmt.Sprintf("%s returned status %d; ABI v1 allows 0 and 1", export, status))
	}
}

// invoke passes input to the export through wb_alloc and returns the status.
// An export without parameters (manifest) gets no input.
func (g *nativeGuest) invoke(ctx context.Context, export string, input []byte) (uint32, error) {
	fn := g.function(export)
	if fn == nil {
		return 0, toolError(failure.UnknownTool, fmt.Sprintf("the module has no export %q", export))
	}
	if len(fn.Definition().ParamTypes()) == 0 {
		if err := fn.CallWithStack(ctx, g.stack[:]); err != nil {
			return 0, err
		}
		return uint32(g.stack[0]), nil
	}
	var ptr uint32
	if len(input) > 0 {
		g.stack[0] = uint64(len(input))
		if err := g.alloc.CallWithStack(ctx, g.stack[:]); err != nil {
			return 0, err
		}
		ptr = uint32(g.stack[0])
		if ptr == 0 {
			return 0, toolError(failure.OutOfMemory, fmt.Sprintf("wb_alloc could not allocate %d bytes for the input", len(input)))
		}
		if !g.mod.Memory().Write(ptr, input) {
			return 0, toolError(failure.BadPointer, fmt.Sprintf("wb_alloc returned %d, which cannot hold %d bytes", ptr, len(input)))
		}
	}
	g.stack[0], g.stack[1] = uint64(ptr), uint64(len(input))
	if err := fn.CallWithStack(ctx, g.stack[:]); err != nil {
		return 0, err
	}
	return uint32(g.stack[0]), nil
}

func (g *nativeGuest) memoryPages() uint64 { return uint64(g.mod.Memory().Size()) / 65536 }

func (g *nativeGuest) close(ctx context.Context) { g.mod.Close(ctx) }

// moduleConfig gives a guest clocks, sleeps through clock, randomness, and
// stdout and stderr that go to the plugin's log; nothing else of the host.
func moduleConfig(logger *slog.Logger, clock *sleeper) wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithStdout(newLineLogger(logger, slog.LevelInfo)).
		WithStderr(newLineLogger(logger, slog.LevelWarn)).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(clock.sleep).
		WithRandSource(rand.Reader)
}

// lineLogger turns a plugin's stdout or stderr into log records, one per
// line, each cut to MaxLogRecordBytes. An instance runs one call at a time,
// so it needs no lock.
type lineLogger struct {
	logger *slog.Logger
	level  slog.Level
	line   []byte
}

func newLineLogger(logger *slog.Logger, level slog.Level) *lineLogger {
	return &lineLogger{logger: logger, level: level}
}

func (l *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		chunk := p
		if end >= 0 {
			chunk = p[:end]
		}
		room := MaxLogRecordBytes - len(l.line)
		l.line = append(l.line, chunk[:min(len(chunk), room)]...)
		if end < 0 {
			break
		}
		l.logger.Log(context.Background(), l.level, string(l.line), "stream", "stdio")
		l.line = l.line[:0]
		p = p[end+1:]
	}
	return n, nil
}
