package runtime

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
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

// errExtismModule tells Load that the module it probed speaks the Extism
// ABI and must be loaded through go-sdk.
var errExtismModule = errors.New("an Extism plugin")

// loadExtism loads an Extism plugin behind the same Plugin API as a native
// one: its instances live in the per-user pool and its calls run under the
// same limits. Only the instance type differs.
func (h *Host) loadExtism(ctx context.Context, wasm []byte) (*Plugin, error) {
	p := &Plugin{host: h, logger: h.logger, counters: newCallCounters()}
	compiled, err := h.compileExtism(ctx, wasm, h.cfg.Defaults)
	if err != nil {
		return nil, err
	}
	m, err := readExtismManifest(ctx, compiled, h.logger)
	compiled.Close(ctx)
	if err != nil {
		return nil, err
	}
	p.manifest = m
	p.logger = h.logger.With("plugin", m.Name)
	p.limits = h.cfg.Defaults.apply(m.Limits, h.cfg.Ceiling)
	if p.egress, err = newEgressRules(m, h.cfg.Settings); err != nil {
		return nil, err
	}
	p.tools = make(map[string]*toolEntry, len(m.Tools))
	for i := range m.Tools {
		t := &m.Tools[i]
		e := &toolEntry{Tool: t, limits: p.limits.apply(t.Limits, h.cfg.Ceiling), counters: newCallCounters()}
		if e.limits.Concurrency < p.limits.Concurrency {
			e.sem = make(chan struct{}, e.limits.Concurrency)
		}
		p.tools[t.Slug] = e
	}
	p.indexContent(m)
	if p.extism, err = h.compileExtism(ctx, wasm, p.limits); err != nil {
		return nil, err
	}
	probe, err := newExtismInstance(ctx, p.extism, p.logger, "")
	if err != nil {
		p.extism.Close(ctx)
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	for _, t := range m.Tools {
		if !probe.ext.FunctionExists(t.ExportName()) {
			probe.close(ctx)
			p.extism.Close(ctx)
			return nil, fmt.Errorf("tools: %s: the module has no export %q", t.Slug, t.ExportName())
		}
	}
	for export, field := range m.ContentExports() {
		if !probe.ext.FunctionExists(export) {
			probe.close(ctx)
			p.extism.Close(ctx)
			return nil, fmt.Errorf("%s: the module has no export %q", field, export)
		}
	}
	probe.close(ctx)
	p.sem = make(chan struct{}, p.limits.Concurrency)
	p.pool = newPool(h.cfg.Pool, p.newInstance)
	if err := h.track(p); err != nil {
		p.extism.Close(ctx)
		return nil, err
	}
	return p, nil
}

// compileExtism compiles an Extism plugin under the given memory cap.
// Extism's own http_request is given no allowed host, so it refuses every
// request: go-sdk's client does not apply Workbench's address rules (a
// declared host resolving to a private address would be reachable), so the
// only way out is workbench_http_request, through the egress layer.
func (h *Host) compileExtism(ctx context.Context, wasm []byte, limits Limits) (*extism.CompiledPlugin, error) {
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
	return compiled, nil
}

// newExtismInstance creates a pooled instance around one Extism plugin
// instance, with stdout, stderr and Extism's log wired to the plugin's log.
func newExtismInstance(ctx context.Context, compiled *extism.CompiledPlugin, logger *slog.Logger, user string) (*instance, error) {
	mc := wazero.NewModuleConfig().
		WithStdout(newLineLogger(logger, slog.LevelInfo)).
		WithStderr(newLineLogger(logger, slog.LevelWarn)).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
	ext, err := compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, err
	}
	ext.SetLogger(func(level extism.LogLevel, msg string) {
		logger.Log(context.Background(), extismLogLevel(level), truncate(msg, maxLogRecordBytes), "stream", "extism")
	})
	in := &instance{ext: ext, user: user}
	in.pages = in.memoryPages()
	return in, nil
}

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

// readExtismManifest calls the manifest function on a throwaway instance.
func readExtismManifest(ctx context.Context, compiled *extism.CompiledPlugin, logger *slog.Logger) (*manifest.Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultLimits.Timeout)
	defer cancel()
	in, err := newExtismInstance(ctx, compiled, logger, "")
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	defer in.close(ctx)
	st := &callState{plugin: &Plugin{logger: logger}, tool: &toolEntry{Tool: &manifest.Tool{Slug: exportManifest}, limits: Limits{OutputBytes: manifest.MaxManifestBytes}}}
	out, terr := runExtism(context.WithValue(ctx, callStateKey{}, st), in, st, exportManifest, nil)
	if terr != nil {
		return nil, fmt.Errorf("manifest export: %w", terr)
	}
	return manifest.Parse(out)
}

// runExtism calls an Extism function and maps its return code, output and
// error to a result the same way runExport does for ABI v1.
func runExtism(ctx context.Context, in *instance, st *callState, export string, input []byte) (json.RawMessage, *hostOrToolError) {
	if !in.ext.FunctionExists(export) {
		return nil, hostErr(failure.UnknownTool, fmt.Sprintf("the module has no export %q", export))
	}
	rc, out, err := in.ext.CallWithContext(ctx, export, input)
	if err != nil {
		if msg := in.ext.GetErrorWithContext(context.WithoutCancel(ctx)); msg != "" && ctx.Err() == nil && msg == err.Error() {
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
