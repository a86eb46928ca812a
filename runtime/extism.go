package runtime

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Import modules of Extism plugins (docs/abi.md, section 8).
const (
	extismEnvModule  = "extism:host/env"
	extismUserModule = "extism:host/user"
	extismHTTPImport = "workbench_http_request"
)

// isExtismModule reports whether a compiled module imports Extism's kernel,
// which marks it as an Extism plugin rather than an ABI v1 one.
func isExtismModule(compiled wazero.CompiledModule) bool {
	for _, f := range compiled.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod == extismEnvModule {
			return true
		}
	}
	return false
}

// compileExtism compiles an Extism plugin under the given memory cap.
// Extism's own http_request is given no allowed host, so it refuses every
// request: go-sdk's client does not apply Workbench's address rules (a
// declared host resolving to a private address would be reachable), so the
// only way out is workbench_http_request, through the egress layer.
func (h *Host) compileExtism(ctx context.Context, wasm []byte, limits Limits) (engine, error) {
	em := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm}},
		Memory: &extism.ManifestMemory{
			MaxPages:             limits.MemoryPages,
			MaxHttpResponseBytes: limits.ResponseBytes,
			MaxVarBytes:          1 << 20,
		},
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(h.cache).
		WithMemoryLimitPages(limits.MemoryPages).
		WithCloseOnContextDone(true)
	httpFn := extism.NewHostFunctionWithStack(extismHTTPImport, extismHTTPRequest, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	httpFn.SetNamespace(extismUserModule)
	compiled, err := extism.NewCompiledPlugin(ctx, em, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, []extism.HostFunction{httpFn})
	if err != nil {
		return nil, fmt.Errorf("not a loadable Extism plugin: %w", err)
	}
	return &extismEngine{compiled: compiled}, nil
}

// extismEngine runs Extism plugins through go-sdk.
type extismEngine struct {
	compiled *extism.CompiledPlugin
}

// extismGuest is one Extism plugin instance.
type extismGuest struct {
	ext *extism.Plugin
}

// instantiate creates a guest with stdout, stderr and Extism's log wired
// to the plugin's log.
func (e *extismEngine) instantiate(ctx context.Context, logger *slog.Logger) (guest, error) {
	mc := wazero.NewModuleConfig().
		WithStdout(newLineLogger(logger, slog.LevelInfo)).
		WithStderr(newLineLogger(logger, slog.LevelWarn)).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	ext, err := e.compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, err
	}
	ext.SetLogger(func(level extism.LogLevel, msg string) {
		logger.Log(context.Background(), extismLogLevel(level), truncate(msg, maxLogRecordBytes), "stream", "extism")
	})
	return &extismGuest{ext: ext}, nil
}

// checkExports looks the exports up on a throwaway instance: go-sdk
// describes the module only through one.
func (e *extismEngine) checkExports(ctx context.Context, m *manifest.Manifest) error {
	g, err := e.instantiate(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	defer g.close(ctx)
	ext := g.(*extismGuest).ext
	for _, t := range m.Tools {
		if !ext.FunctionExists(t.ExportName()) {
			return fmt.Errorf("tools: %s: the module has no export %q", t.Slug, t.ExportName())
		}
	}
	for export, field := range m.ContentExports() {
		if !ext.FunctionExists(export) {
			return fmt.Errorf("%s: the module has no export %q", field, export)
		}
	}
	return nil
}

func (e *extismEngine) close(ctx context.Context) error { return e.compiled.Close(ctx) }

func (g *extismGuest) memoryPages() uint64 { return uint64(g.ext.Memory().Size()) / 65536 }

func (g *extismGuest) close(ctx context.Context) { g.ext.Close(ctx) }

func extismLogLevel(l extism.LogLevel) slog.Level {
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

// run calls an Extism function and maps its return code, output and error
// to a result the same way nativeGuest.run does for ABI v1.
func (g *extismGuest) run(ctx context.Context, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError) {
	if !g.ext.FunctionExists(export) {
		return nil, hostErr(failure.UnknownTool, fmt.Sprintf("the module has no export %q", export))
	}
	rc, out, err := g.ext.CallWithContext(ctx, export, input)
	if err != nil {
		if msg := g.ext.GetErrorWithContext(context.WithoutCancel(ctx)); msg != "" && ctx.Err() == nil && msg == err.Error() {
			return nil, &hostOrToolError{ToolError: extismPluginError(msg)}
		}
		return nil, &hostOrToolError{ToolError: classify(ctx, err), host: true}
	}
	if int64(len(out)) > st.tool.limits.OutputBytes {
		return nil, hostErr(failure.OutputTooLarge, fmt.Sprintf("output of %d bytes is over the limit of %d bytes", len(out), st.tool.limits.OutputBytes))
	}
	switch {
	case rc != 0:
		return nil, &hostOrToolError{ToolError: toolError(failure.ToolError, fmt.Sprintf("%s returned %d without an error message", export, rc))}
	case len(out) == 0:
		return nil, hostErr(failure.BadOutput, export+" returned success without output")
	case !json.Valid(out):
		return nil, hostErr(failure.BadOutput, export+" produced output that is not valid JSON")
	}
	return out, nil
}

// extismPluginError turns an Extism error message into a ToolError: a JSON
// error object keeps its code and message, anything else is TOOL_ERROR.
func extismPluginError(msg string) *ToolError {
	var e ToolError
	if json.Unmarshal([]byte(msg), &e) == nil && strings.TrimSpace(e.Message) != "" {
		if !e.Code.Valid() {
			e.Code = failure.ToolError
		}
		return &e
	}
	return toolError(failure.ToolError, truncate(msg, maxLogRecordBytes))
}

// extismHTTPBody is the request and response of workbench_http_request:
// the ABI v1 head with the body inline as base64.
type extismHTTPRequestBody struct {
	Method    string       `json:"method"`
	URL       string       `json:"url"`
	Headers   headerValues `json:"headers"`
	TimeoutMs int          `json:"timeoutMs"`
	Body      []byte       `json:"body"`
}

type extismHTTPResponse struct {
	Status  int                 `json:"status,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	URL     string              `json:"url,omitempty"`
	Body    []byte              `json:"body,omitempty"`
	Error   *ToolError          `json:"error,omitempty"`
}

// extismHTTPRequest is the extism:host/user workbench_http_request host
// function: request JSON in, response JSON out, both Extism memory handles.
func extismHTTPRequest(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	st := stateFrom(ctx)
	st.requireTool(extismHTTPImport)
	raw, err := cp.ReadBytes(stack[0])
	if err != nil {
		panic(&abort{toolError(failure.BadPointer, extismHTTPImport+": "+err.Error())})
	}
	resp := st.plugin.extismHTTP(ctx, st, raw)
	b, err := json.Marshal(resp)
	if err != nil {
		panic(&abort{toolError(failure.BadOutput, extismHTTPImport+": "+err.Error())})
	}
	off, err := cp.WriteBytes(b)
	if err != nil {
		panic(&abort{toolError(failure.OutOfMemory, extismHTTPImport+": "+err.Error())})
	}
	stack[0] = off
}

// extismHTTP decodes the request, runs it through the same path as ABI v1's
// http_request (credential injection, egress policy, limits) and builds the
// response object.
func (p *Plugin) extismHTTP(ctx context.Context, st *callState, raw []byte) *extismHTTPResponse {
	if len(raw) > maxRequestHeadBytes+MaxInputBytes {
		return &extismHTTPResponse{Error: toolError(failure.InvalidRequest, fmt.Sprintf("request of %d bytes is too large", len(raw)))}
	}
	var req extismHTTPRequestBody
	if err := json.Unmarshal(raw, &req); err != nil {
		return &extismHTTPResponse{Error: toolError(failure.InvalidRequest, "request is not valid: "+err.Error())}
	}
	head, err := json.Marshal(outboundRequest{Method: req.Method, URL: req.URL, Headers: req.Headers, TimeoutMs: req.TimeoutMs})
	if err != nil {
		return &extismHTTPResponse{Error: toolError(failure.InvalidRequest, err.Error())}
	}
	outHead, body, terr := p.httpRequest(ctx, st, head, req.Body)
	if terr != nil {
		return &extismHTTPResponse{Error: terr}
	}
	var h outboundHead
	if err := json.Unmarshal(outHead, &h); err != nil {
		return &extismHTTPResponse{Error: toolError(failure.InvalidRequest, err.Error())}
	}
	return &extismHTTPResponse{Status: h.Status, Headers: h.Headers, URL: h.URL, Body: body}
}
