package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

// Plugin is a loaded plugin: its compiled module, manifest, limits and pool.
type Plugin struct {
	host     *Host
	manifest *manifest.Manifest
	logger   *slog.Logger
	engine   engine
	limits   Limits
	sem      chan struct{}
	tools    map[string]*toolEntry
	content  map[string]*toolEntry // resource and prompt exports by name
	pool     *pool
	egress   *egressRules
	counters *callCounters
	errors   errorLog

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
}

// toolEntry is a tool with its effective limits and counters.
type toolEntry struct {
	*manifest.Tool
	limits   Limits
	sem      chan struct{} // nil when the tool shares the plugin's limit
	counters *callCounters
}

// Load compiles a plugin, reads its manifest and validates it together with
// the module's imports and exports. The error names what is wrong.
func (h *Host) Load(ctx context.Context, wasm []byte) (_ *Plugin, err error) {
	var built closers
	defer built.closeIfFailed(ctx, &err)
	rewritten, err := h.rewrite(wasm)
	if err != nil {
		return nil, err
	}
	e, err := h.compile(ctx, rewritten, h.cfg.Defaults)
	if err != nil {
		return nil, err
	}
	built.add(e.close)
	m, err := h.manifestOf(ctx, e, wasm)
	if err != nil {
		return nil, err
	}
	limits := h.cfg.Defaults.apply(m.Limits, h.cfg.Ceiling)
	if limits.MemoryPages != h.cfg.Defaults.MemoryPages {
		// The page cap is a compile setting: recompile (from the cache)
		// under the plugin's own, then drop the probe.
		probe := e
		if e, err = h.compile(ctx, rewritten, limits); err != nil {
			return nil, err
		}
		built = closers{e.close}
		probe.close(ctx)
	}
	if err := e.checkExports(ctx, m); err != nil {
		return nil, err
	}
	p, err := h.assemble(m, limits, e)
	if err != nil {
		return nil, err
	}
	if err := h.track(p); err != nil {
		return nil, err
	}
	return p, nil
}

// compile compiles the module, as rewritten by rewrite, and picks its
// engine: the Extism ABI's for a module it accepts, ABI v1's for the rest,
// which must then satisfy ABI v1's imports and fixed exports.
func (h *Host) compile(ctx context.Context, wasm []byte, limits Limits) (engine, error) {
	rt, err := h.newRuntime(ctx, limits.MemoryPages)
	if err != nil {
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	switch {
	case err != nil:
		err = fmt.Errorf("compile: %w", err)
	case h.cfg.Extism != nil && h.cfg.Extism.Accepts(compiled):
		rt.Close(ctx)
		return h.compileABI(ctx, wasm, limits)
	default:
		if problems := checkModule(compiled); len(problems) > 0 {
			err = fmt.Errorf("not an ABI v1 plugin: %s", strings.Join(problems, "; "))
		}
	}
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &nativeEngine{rt: rt, compiled: compiled}, nil
}

// assemble builds the plugin around a compiled engine: its effective limits,
// tool entries, call slots, egress rules and instance pool.
func (h *Host) assemble(m *manifest.Manifest, limits Limits, e engine) (*Plugin, error) {
	p := &Plugin{
		host:     h,
		manifest: m,
		logger:   h.logger.With("plugin", m.Name),
		engine:   e,
		limits:   limits,
		sem:      make(chan struct{}, limits.Concurrency),
		tools:    make(map[string]*toolEntry, len(m.Tools)),
		content:  map[string]*toolEntry{},
		counters: newCallCounters(),
	}
	for i := range m.Tools {
		t := &m.Tools[i]
		entry := &toolEntry{Tool: t, limits: limits.apply(t.Limits, h.cfg.Ceiling), counters: newCallCounters()}
		if entry.limits.Concurrency < limits.Concurrency {
			entry.sem = make(chan struct{}, entry.limits.Concurrency)
		}
		p.tools[t.Slug] = entry
	}
	// Resource and prompt exports are callable through Call.Export, under
	// the plugin-wide limits and counters.
	for export := range m.ContentExports() {
		p.content[export] = &toolEntry{Tool: &manifest.Tool{Slug: export, Export: export}, limits: limits, counters: newCallCounters()}
	}
	var err error
	if p.egress, err = newEgressRules(m, h.cfg.Settings); err != nil {
		return nil, err
	}
	p.pool = newPool(h.cfg.Pool, p.newInstance)
	return p, nil
}

// manifestOf reads the module's manifest, from the host's cache directory
// when this exact module was loaded before: a manifest depends only on the
// module's bytes, and reading it means instantiating the module, which for
// a Go plugin costs more than compiling it from the cache.
func (h *Host) manifestOf(ctx context.Context, e engine, wasm []byte) (*manifest.Manifest, error) {
	if h.cfg.CacheDir == "" {
		return readManifest(ctx, e, h.logger)
	}
	sum := sha256.Sum256(wasm)
	path := filepath.Join(h.cfg.CacheDir, "manifests", hex.EncodeToString(sum[:])+".json")
	if b, err := os.ReadFile(path); err == nil {
		if m, err := manifest.Parse(b); err == nil {
			return m, nil
		}
	}
	m, err := readManifest(ctx, e, h.logger)
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(m); err == nil {
		if err := writeFileAtomic(path, b); err != nil {
			h.logger.Warn("cannot cache manifest", "path", path, "error", err)
		}
	}
	return m, nil
}

// writeFileAtomic writes b to path through a temporary file and a rename,
// so a crash never leaves a truncated file behind.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// Manifest returns the plugin's validated manifest. Callers must not modify it.
func (p *Plugin) Manifest() *manifest.Manifest { return p.manifest }

// Limits returns the plugin-wide effective limits.
func (p *Plugin) Limits() Limits { return p.limits }

// ToolLimits returns the effective limits of one tool.
func (p *Plugin) ToolLimits(slug string) (Limits, bool) {
	t, ok := p.tools[slug]
	if !ok {
		return Limits{}, false
	}
	return t.limits, true
}

// Call runs one tool. Every failure, the plugin's own or the host's, is a
// *failure.Error; the host never panics on anything a plugin does.
func (p *Plugin) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	start := time.Now()
	t := p.tools[c.Tool]
	if c.Export != "" {
		t = p.content[c.Export]
	}
	if t == nil {
		name, err := c.Tool, toolError(failure.UnknownTool, fmt.Sprintf("%s has no tool %q", p.manifest.Name, c.Tool))
		if c.Export != "" {
			name, err = c.Export, toolError(failure.UnknownTool, fmt.Sprintf("%s declares no resource or prompt export %q", p.manifest.Name, c.Export))
		}
		p.counters.observe(time.Since(start), err.Code)
		p.errors.add(name, err.Code)
		return nil, err
	}
	out, terr := p.call(ctx, t, c)
	d, code := time.Since(start), failure.Code("")
	if terr != nil {
		code = terr.Code
	}
	p.counters.observe(d, code)
	t.counters.observe(d, code)
	if terr != nil {
		p.errors.add(t.Slug, code)
		return nil, terr
	}
	return out, nil
}

func (p *Plugin) call(ctx context.Context, t *toolEntry, c toolcall.Call) (json.RawMessage, *failure.Error) {
	if len(c.Input) > MaxInputBytes {
		return nil, toolError(failure.InputTooLarge, fmt.Sprintf("input of %d bytes is over the limit of %d bytes", len(c.Input), MaxInputBytes))
	}
	if len(c.Input) > 0 && !json.Valid(c.Input) {
		return nil, toolError(failure.InvalidArguments, "input is not valid JSON")
	}
	if !p.enter() {
		return nil, toolError(failure.PluginClosed, fmt.Sprintf("plugin %s is closed", p.manifest.Name))
	}
	defer p.inflight.Done()

	ctx, cancel := context.WithTimeout(ctx, t.limits.Timeout)
	defer cancel()
	release, terr := p.acquireSlots(ctx, t)
	if terr != nil {
		return nil, terr
	}
	defer release()

	in, err := p.pool.acquire(ctx, c.UserID)
	if err != nil {
		return nil, p.callError(ctx, err, t)
	}
	st := &callState{plugin: p, tool: t, user: c.UserID, progress: c.Progress, client: c.Client}
	out, rerr := runGuest(context.WithValue(ctx, callStateKey{}, st), in, st, t.ExportName(), c.Input)
	p.pool.release(context.WithoutCancel(ctx), in, rerr == nil || !rerr.host)
	if rerr != nil {
		return nil, p.callError(ctx, rerr, t)
	}
	return out, nil
}

// enter registers a call unless the plugin is closed.
func (p *Plugin) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.inflight.Add(1)
	return true
}

// acquireSlots takes the plugin's and the tool's concurrency slots, waiting
// until the call's deadline at most.
func (p *Plugin) acquireSlots(ctx context.Context, t *toolEntry) (func(), *failure.Error) {
	sems := []chan struct{}{p.sem}
	if t.sem != nil {
		sems = append(sems, t.sem)
	}
	for i, sem := range sems {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for _, s := range sems[:i] {
				<-s
			}
			return nil, toolError(failure.Busy, fmt.Sprintf("%s: all %d call slots stayed busy until the deadline", t.Slug, cap(sem)))
		}
	}
	return func() {
		for _, s := range sems {
			<-s
		}
	}, nil
}

// newInstance creates an instance of the plugin for one user.
func (p *Plugin) newInstance(ctx context.Context, user string) (*instance, error) {
	g, err := p.engine.instantiate(ctx, p.logger)
	if err != nil {
		return nil, err
	}
	return &instance{guest: g, user: user, pages: g.memoryPages()}, nil
}

// hostOrToolError is a call's failure that remembers whether the host
// raised it, which decides if the instance may be reused.
type hostOrToolError struct {
	err  *failure.Error
	host bool
}

func (e *hostOrToolError) Error() string { return e.err.Error() }

func hostErr(code failure.Code, msg string) *hostOrToolError {
	return &hostOrToolError{err: toolError(code, msg), host: true}
}

// pluginError decodes the error object a plugin set with status 1.
func pluginError(st *callState) *failure.Error {
	var e failure.Error
	if !st.outputSet || json.Unmarshal(st.output, &e) != nil {
		return toolError(failure.ToolError, "the plugin reported an error without a valid error object")
	}
	if !e.Code.Valid() {
		e.Code = failure.ToolError
	}
	if strings.TrimSpace(e.Message) == "" {
		e.Message = "the plugin reported an error without a message"
	}
	return &e
}

// classify maps an error from wazero or the host imports to a *failure.Error.
func classify(ctx context.Context, err error) *failure.Error {
	var ab *abort
	var te *failure.Error
	var exit *sys.ExitError
	switch {
	case errors.As(err, &ab):
		return ab.err
	case errors.As(err, &te):
		return te
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded,
		errors.Is(ctx.Err(), context.DeadlineExceeded):
		return callEnded(context.DeadlineExceeded)
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled,
		errors.Is(ctx.Err(), context.Canceled):
		return callEnded(context.Canceled)
	case errors.As(err, &exit):
		return toolError(failure.Trap, fmt.Sprintf("the plugin exited with code %d", exit.ExitCode()))
	case errors.Is(err, ErrClosed):
		return toolError(failure.PluginClosed, err.Error())
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = strings.TrimSuffix(strings.TrimPrefix(msg, "wasm error: "), " (recovered by wazero)")
	return toolError(failure.Trap, "the plugin trapped: "+msg)
}

// callError logs host failures and unwraps the *failure.Error.
func (p *Plugin) callError(ctx context.Context, err error, t *toolEntry) *failure.Error {
	var he *hostOrToolError
	te, ok := err.(*failure.Error)
	switch {
	case errors.As(err, &he):
		te = he.err
		if he.host && te.Code != failure.InputRequired {
			p.logger.Warn("tool call failed", "tool", t.Slug, "code", te.Code, "error", te.Message)
		}
	case !ok:
		te = classify(ctx, err)
		p.logger.Warn("instance failed", "tool", t.Slug, "code", te.Code, "error", err)
	}
	return te
}

// Stats returns a snapshot of the plugin's counters.
func (p *Plugin) Stats() Stats {
	s := Stats{CallStats: p.counters.snapshot(), Tools: make(map[string]CallStats, len(p.tools))}
	s.HTTPRequests, s.EgressDenied = p.egress.requests.Load(), p.egress.denied.Load()
	pc := p.pool.counts()
	s.InstancesIdle, s.InstancesBusy, s.PoolUsers, s.MemoryPages, s.MaxPages = pc.idle, pc.busy, pc.users, pc.pages, pc.maxPages
	s.Recent = p.errors.list()
	for slug, t := range p.tools {
		s.Tools[slug] = t.counters.snapshot()
	}
	return s
}

// Close stops new calls, waits for calls in flight until ctx ends, then
// releases every instance and the compiled module.
func (p *Plugin) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.host.untrack(p)
	done := make(chan struct{})
	go func() {
		p.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		p.logger.Warn("closing plugin with calls still in flight", "error", ctx.Err())
	}
	p.pool.close(ctx)
	return p.engine.close(context.WithoutCancel(ctx))
}
