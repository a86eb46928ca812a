package extism

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
)

// Import modules of Extism plugins (docs/abi.md, section 8).
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
	httpImport = "workbench_http_request"
)

// ABI is the Extism plugin ABI. Its zero value is ready to use.
type ABI struct{}

var _ runtime.ABI = ABI{}

// Accepts reports whether the module imports Extism's kernel, which marks
// it as an Extism plugin rather than an ABI v1 one.
func (ABI) Accepts(compiled wazero.CompiledModule) bool {
	for _, f := range compiled.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod == envModule {
			return true
		}
	}
	return false
}

// Compile compiles an Extism plugin, already rewritten by the host with the
// interrupt check, under the given limits. The check's import is served by
// runtime.Interrupt, so wazero's own check stays off. Extism's own
// http_request is given no allowed host, so it refuses every request:
// go-sdk's client does not apply Workbench's address rules (a declared host
// resolving to a private address would be reachable), so the only way out
// is workbench_http_request, through the egress layer.
func (ABI) Compile(ctx context.Context, wasm []byte, cache wazero.CompilationCache, limits runtime.Limits) (runtime.ABIModule, error) {
	em := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm}},
		Memory: &extism.ManifestMemory{
			MaxPages:             limits.MemoryPages,
			MaxHttpResponseBytes: limits.ResponseBytes,
			MaxVarBytes:          1 << 20,
		},
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(cache).
		WithMemoryLimitPages(limits.MemoryPages)
	httpFn := extism.NewHostFunctionWithStack(httpImport, httpRequest, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	httpFn.SetNamespace(userModule)
	interruptFn := extism.NewHostFunctionWithStack(runtime.InterruptImport.Name, interrupt, nil, []extism.ValueType{extism.ValueTypeI32})
	interruptFn.SetNamespace(runtime.InterruptImport.Module)
	compiled, err := extism.NewCompiledPlugin(ctx, em, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, []extism.HostFunction{httpFn, interruptFn})
	if err != nil {
		return nil, fmt.Errorf("not a loadable Extism plugin: %w", err)
	}
	return module{compiled}, nil
}

// interrupt serves the interrupt check's import (runtime.InterruptImport).
func interrupt(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	stack[0] = uint64(runtime.Interrupt(ctx))
}

// module is a compiled Extism plugin.
type module struct {
	compiled *extism.CompiledPlugin
}

// Instantiate creates an instance with Extism's log wired to logger.
func (m module) Instantiate(ctx context.Context, mc wazero.ModuleConfig, logger *slog.Logger) (runtime.ABIInstance, error) {
	p, err := m.compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, err
	}
	p.SetLogger(func(level extism.LogLevel, msg string) {
		logger.Log(context.Background(), logLevel(level), truncate(msg, runtime.MaxLogRecordBytes), "stream", "extism")
	})
	return instance{p}, nil
}

func (m module) Close(ctx context.Context) error { return m.compiled.Close(ctx) }

// instance is one Extism plugin instance.
type instance struct {
	p *extism.Plugin
}

func (in instance) HasExport(name string) bool { return in.p.FunctionExists(name) }

// Call calls an Extism function: an error message the plugin set is its
// tool error, a non-zero return without one is TOOL_ERROR, and any other
// failure is the host's.
func (in instance) Call(ctx context.Context, export string, input []byte) ([]byte, *failure.Error, error) {
	rc, out, err := in.p.CallWithContext(ctx, export, input)
	if err != nil {
		if msg := in.p.GetErrorWithContext(context.WithoutCancel(ctx)); msg != "" && ctx.Err() == nil && msg == err.Error() {
			return nil, pluginError(msg), nil
		}
		return nil, nil, err
	}
	if rc != 0 {
		return nil, &failure.Error{Code: failure.ToolError, Message: fmt.Sprintf("%s returned %d without an error message", export, rc)}, nil
	}
	return out, nil, nil
}

func (in instance) MemoryPages() uint64 { return uint64(in.p.Memory().Size()) / 65536 }

func (in instance) Close(ctx context.Context) error { return in.p.Close(ctx) }

// pluginError turns an Extism error message into a ToolError: a JSON error
// object keeps its code and message, anything else is TOOL_ERROR.
func pluginError(msg string) *failure.Error {
	var e failure.Error
	if json.Unmarshal([]byte(msg), &e) == nil && strings.TrimSpace(e.Message) != "" {
		if !e.Code.Valid() {
			e.Code = failure.ToolError
		}
		return &e
	}
	return &failure.Error{Code: failure.ToolError, Message: truncate(msg, runtime.MaxLogRecordBytes)}
}

func logLevel(l extism.LogLevel) slog.Level {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return slog.LevelDebug
	case extism.LogLevelWarn:
		return slog.LevelWarn
	case extism.LogLevelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
