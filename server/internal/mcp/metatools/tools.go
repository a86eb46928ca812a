package metatools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
	"github.com/workbench-dev/workbench/server/internal/mcp/idempotency"
	"github.com/workbench-dev/workbench/server/internal/mcp/search"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// DefaultConcurrency is how many executions of one execute_tools call run at
// once: all of them. Executions mostly wait on upstream APIs; the CPU they
// use is bounded by the runtime's per-tool call slots, not here.
const DefaultConcurrency = MaxExecutions

// Catalog is where the meta-tools find integrations and tools: the
// registry's snapshot, the one index of the catalog. *registry.Registry is
// one.
type Catalog interface {
	// Current returns the current snapshot for reading metadata.
	Current() *registry.Snapshot
	// Acquire returns the current snapshot with a lease that keeps its
	// tools callable until release is called.
	Acquire() (snap *registry.Snapshot, release func())
}

var _ Catalog = (*registry.Registry)(nil)

// Apps resolves a caller's own integrations (custom apps), which the
// meta-tools show beside the shared snapshot to that caller only.
type Apps interface {
	// Integrations returns the user's own integrations, each marked
	// Custom; nil when there are none.
	Integrations(ctx context.Context, userID string) ([]*registry.Integration, error)
}

// maxUserViews bounds the per-caller views kept (one per user with apps).
const maxUserViews = 1024

// Options configure Tools. Every zero value has a documented default.
type Options struct {
	// Catalog supplies the integrations and tools. Required.
	Catalog Catalog
	// Apps supplies each caller's custom apps; nil means callers have none.
	Apps Apps
	// Connections is the connection service. Nil means no connections
	// exist: only integrations with auth mode none are usable, and connect
	// and wait_for_connection answer UNAVAILABLE.
	Connections Connections
	// CurlSessions mints curl sessions. Nil makes curl_session answer
	// UNAVAILABLE.
	CurlSessions CurlSessions
	// Idempotency stores keyed outcomes; nil means an in-memory store with
	// the defaults of idempotency.MemoryOptions.
	Idempotency idempotency.Store
	// Concurrency bounds the executions of one execute_tools call that run
	// at once; zero means DefaultConcurrency.
	Concurrency int
	// Logger reports service failures; nil discards.
	Logger *slog.Logger
}

// Tools implements the meta-tools. It is safe for concurrent use.
type Tools struct {
	opts   Options
	logger *slog.Logger
	cache  atomic.Pointer[viewCache]
	keys   keyLocks

	viewsMu sync.Mutex
	views   map[string]*viewCache // by user: the shared snapshot plus the user's apps
}

// viewCache holds what is derived from one catalog view: the search index
// and the compiled input schemas of its tools.
type viewCache struct {
	view    *registry.Snapshot
	base    *registry.Snapshot      // the shared snapshot view extends; view itself when no apps
	apps    []*registry.Integration // the caller's apps in view
	once    sync.Once
	index   *search.Index
	schemas sync.Map // slug -> *compiledSchema
}

type compiledSchema struct {
	schema *argcheck.Schema
	err    error
}

// ProgressFunc receives progress of a running call: progress increases with
// every report; total is 0 when unknown.
type ProgressFunc func(progress, total float64, message string)

// Peer is how a running call talks back to the MCP client. Zero fields mean
// the client gets nothing of that kind.
type Peer struct {
	// Progress receives progress reports; nil when the client sent no
	// progress token.
	Progress ProgressFunc
	// Client carries the plugins' log records, elicitation and sampling
	// requests (toolcall.Call.Client).
	Client toolcall.Client
}

// New returns the meta-tools over opts.Catalog.
func New(opts Options) (*Tools, error) {
	if opts.Catalog == nil {
		return nil, errors.New("metatools: Options.Catalog is required")
	}
	if opts.Idempotency == nil {
		opts.Idempotency = idempotency.NewMemory(idempotency.MemoryOptions{})
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tools{opts: opts, logger: logger, keys: keyLocks{held: map[lockKey]chan struct{}{}}, views: map[string]*viewCache{}}, nil
}

// Result is the outcome of Invoke.
type Result struct {
	// JSON is the output, or {"error": {...}} when the tool failed as a
	// whole. It goes to the client as text content.
	JSON json.RawMessage
	// IsError marks a failed call.
	IsError bool
	// Structured reports that JSON follows the tool's output schema, so it
	// is also sent as structuredContent.
	Structured bool
}

// Invoke runs the meta-tool name for p with raw arguments (a JSON object;
// empty means {}), talking back through peer. An unknown name is a Go error (the
// caller's bug or a protocol error); every failure of the tool itself is an
// IsError result.
func (t *Tools) Invoke(ctx context.Context, p Principal, name string, args json.RawMessage, peer Peer) (Result, error) {
	s, ok := inputSchemas[name]
	if !ok {
		return Result{}, fmt.Errorf("metatools: no meta-tool %q", name)
	}
	if problems := s.Check(args); problems != nil {
		return failed(&Error{
			Code:     failure.InvalidArguments,
			Message:  fmt.Sprintf("the arguments of %s do not match its input schema", name),
			Problems: problems,
		}), nil
	}
	var out any
	var err error
	switch name {
	case SearchTools:
		out, err = decodeAnd(args, func(in SearchInput) (any, error) { return t.Search(ctx, p, in) })
	case GetToolSchema:
		out, err = decodeAnd(args, func(in GetToolSchemaInput) (any, error) { return t.GetToolSchema(ctx, p, in.Tool) })
	case ExecuteTools:
		var exec *ExecuteOutput
		exec, err = decodeAs[ExecuteInput](args, func(in ExecuteInput) (*ExecuteOutput, error) { return t.Execute(ctx, p, in, peer) })
		if err == nil {
			return structured(exec, exec.Succeeded == 0), nil
		}
	case Whoami:
		out = t.Whoami(p)
	case ListIntegrations:
		out, err = t.ListIntegrations(ctx, p)
	case Connect, GetAuthURL:
		out, err = decodeAnd(args, func(in ConnectInput) (any, error) { return t.Connect(ctx, p, in) })
	case WaitForConnection:
		out, err = decodeAnd(args, func(in WaitInput) (any, error) { return t.WaitForConnection(ctx, p, in) })
	case CurlSessionTool:
		out, err = decodeAnd(args, func(in CurlInput) (any, error) { return t.CurlSession(ctx, p, in) })
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return failed(e), nil
		}
		t.logger.Error("meta-tool failed", "tool", name, "user", p.UserID, "err", err)
		return failed(&Error{Code: failure.ToolError, Reason: failure.Internal, Message: name + " failed inside Workbench; try again later"}), nil
	}
	return structured(out, false), nil
}

func decodeAs[In, Out any](args json.RawMessage, fn func(In) (Out, error)) (Out, error) {
	var in In
	if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
		if err := json.Unmarshal(args, &in); err != nil {
			var zero Out
			return zero, &Error{Code: failure.InvalidArguments, Message: "arguments could not be decoded: " + err.Error()}
		}
	}
	return fn(in)
}

func decodeAnd[In any](args json.RawMessage, fn func(In) (any, error)) (any, error) {
	return decodeAs(args, fn)
}

// structured is a successful (or, for execute_tools, possibly all-failed)
// output that follows the output schema.
func structured(v any, isError bool) Result {
	b, err := json.Marshal(v)
	if err != nil {
		return failed(&Error{Code: failure.ToolError, Reason: failure.Internal, Message: "the result could not be encoded: " + err.Error()})
	}
	return Result{JSON: b, IsError: isError, Structured: true}
}

// failed is the {"error": ...} result of a failed call.
func failed(e *Error) Result {
	b, _ := json.Marshal(struct {
		Error *Error `json:"error"`
	}{e})
	return Result{JSON: b, IsError: true}
}

// viewCache returns the cache of v, building it when v is new.
func (t *Tools) cacheFor(v *registry.Snapshot) *viewCache {
	if c := t.cache.Load(); c != nil && c.view == v {
		return c
	}
	c := &viewCache{view: v, base: v}
	if v == t.opts.Catalog.Current() {
		t.cache.Store(c)
	}
	return c
}

// current is the catalog p sees now, for reading metadata.
func (t *Tools) current(ctx context.Context, p Principal) *viewCache {
	return t.view(ctx, p, t.opts.Catalog.Current())
}

// acquire is the catalog p sees now with a lease that keeps its tools
// callable until release is called.
func (t *Tools) acquire(ctx context.Context, p Principal) (c *viewCache, release func()) {
	base, release := t.opts.Catalog.Acquire()
	return t.view(ctx, p, base), release
}

// view is the one place a caller's catalog is resolved: the shared
// snapshot base plus p's apps, with what is derived from them, reused while
// neither changes. A caller without apps shares base's cache. Apps that
// clash with base (an integration took an app's name since it was added)
// are left out and logged; failing to read p's apps shows base alone.
func (t *Tools) view(ctx context.Context, p Principal, base *registry.Snapshot) *viewCache {
	if t.opts.Apps == nil {
		return t.cacheFor(base)
	}
	apps, err := t.opts.Apps.Integrations(ctx, p.UserID)
	if err != nil {
		t.logger.Warn("resolving a caller's custom apps", "user", p.UserID, "err", err)
	}
	if len(apps) == 0 {
		return t.cacheFor(base)
	}
	t.viewsMu.Lock()
	c := t.views[p.UserID]
	t.viewsMu.Unlock()
	if c != nil && c.base == base && slices.Equal(c.apps, apps) {
		return c
	}
	v, err := base.With(apps...)
	if err != nil {
		var kept []*registry.Integration
		for _, in := range apps {
			if _, err := base.With(append(kept, in)...); err != nil {
				t.logger.Warn("custom app left out of the catalog", "user", p.UserID, "app", in.Name, "err", err)
				continue
			}
			kept = append(kept, in)
		}
		if v, err = base.With(kept...); err != nil {
			return t.cacheFor(base)
		}
	}
	c = &viewCache{view: v, base: base, apps: apps}
	t.viewsMu.Lock()
	if len(t.views) >= maxUserViews {
		clear(t.views) // rebuilt on the next call of each user
	}
	t.views[p.UserID] = c
	t.viewsMu.Unlock()
	return c
}

// searchIndex returns the search index of the cache's view.
func (c *viewCache) searchIndex() *search.Index {
	c.once.Do(func() {
		docs := make([]search.Doc, 0, len(c.view.Tools()))
		for _, tool := range c.view.Tools() {
			docs = append(docs, search.Doc{
				Slug:        tool.Spec.Slug,
				Integration: tool.Integration.Name,
				Title:       tool.Spec.Title,
				Description: tool.Spec.Description,
			})
		}
		c.index = search.NewIndex(docs)
	})
	return c.index
}

// inputSchema returns the compiled input schema of a tool.
func (c *viewCache) inputSchema(tool registry.Tool) (*argcheck.Schema, error) {
	if v, ok := c.schemas.Load(tool.Spec.Slug); ok {
		cs := v.(*compiledSchema)
		return cs.schema, cs.err
	}
	s, err := argcheck.Compile(tool.Spec.InputSchema)
	v, _ := c.schemas.LoadOrStore(tool.Spec.Slug, &compiledSchema{schema: s, err: err})
	cs := v.(*compiledSchema)
	return cs.schema, cs.err
}

// Warm builds the search index of the current view ahead of the first
// search. The endpoint calls it after the catalog changed.
func (t *Tools) Warm() {
	t.cacheFor(t.opts.Catalog.Current()).searchIndex()
}
