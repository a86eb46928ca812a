package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/failure"
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

// instance is one instantiated plugin module. It serves one call at a time
// and, once used, only the user it was created for.
type instance struct {
	mod      api.Module     // nil for an Extism instance
	ext      *extism.Plugin // set only for an Extism instance (extism.go)
	alloc    api.Function
	fns      map[string]api.Function // export handles, looked up once
	user     string
	lastUsed time.Time
	pages    uint64 // memory size in pages when last released
	stack    [2]uint64
}

// instantiate creates an instance, wires stdout and stderr to the plugin's log
// and runs _initialize when the module exports it.
func instantiate(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule, logger *slog.Logger, user string) (*instance, error) {
	stdout, stderr := newLineLogger(logger, slog.LevelInfo), newLineLogger(logger, slog.LevelWarn)
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(stdout).
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	mod, err := rt.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		return nil, err
	}
	in := &instance{mod: mod, fns: map[string]api.Function{}, user: user}
	if init := mod.ExportedFunction(exportInitialize); init != nil {
		if _, err := init.Call(ctx); err != nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("%s: %w", exportInitialize, err)
		}
	}
	if in.alloc = mod.ExportedFunction(exportAlloc); in.alloc == nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("missing export %q", exportAlloc)
	}
	if mod.Memory() == nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("missing export %q", exportMemory)
	}
	in.pages = in.memoryPages()
	return in, nil
}

// function returns the cached handle of an export.
func (in *instance) function(name string) api.Function {
	fn, ok := in.fns[name]
	if !ok {
		fn = in.mod.ExportedFunction(name)
		in.fns[name] = fn
	}
	return fn
}

// invoke passes input to the export through wb_alloc and returns the status.
// An export without parameters (manifest) gets no input.
func (in *instance) invoke(ctx context.Context, export string, input []byte) (uint32, error) {
	fn := in.function(export)
	if fn == nil {
		return 0, toolError(failure.UnknownTool, fmt.Sprintf("the module has no export %q", export))
	}
	if len(fn.Definition().ParamTypes()) == 0 {
		if err := fn.CallWithStack(ctx, in.stack[:]); err != nil {
			return 0, err
		}
		return uint32(in.stack[0]), nil
	}
	var ptr uint32
	if len(input) > 0 {
		in.stack[0] = uint64(len(input))
		if err := in.alloc.CallWithStack(ctx, in.stack[:]); err != nil {
			return 0, err
		}
		ptr = uint32(in.stack[0])
		if ptr == 0 {
			return 0, toolError(failure.OutOfMemory, fmt.Sprintf("wb_alloc could not allocate %d bytes for the input", len(input)))
		}
		if !in.mod.Memory().Write(ptr, input) {
			return 0, toolError(failure.BadPointer, fmt.Sprintf("wb_alloc returned %d, which cannot hold %d bytes", ptr, len(input)))
		}
	}
	in.stack[0], in.stack[1] = uint64(ptr), uint64(len(input))
	if err := fn.CallWithStack(ctx, in.stack[:]); err != nil {
		return 0, err
	}
	return uint32(in.stack[0]), nil
}

func (in *instance) memoryPages() uint64 {
	if in.ext != nil {
		return uint64(in.ext.Memory().Size()) / 65536
	}
	return uint64(in.mod.Memory().Size()) / 65536
}

func (in *instance) close(ctx context.Context) {
	if in.ext != nil {
		in.ext.Close(ctx)
		return
	}
	in.mod.Close(ctx)
}

// lineLogger turns a plugin's stdout or stderr into log records, one per
// line, each cut to maxLogRecordBytes. An instance runs one call at a time,
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
		room := maxLogRecordBytes - len(l.line)
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
