package metatools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/idempotency"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// Execution is one item of execute_tools.
type Execution struct {
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
}

// ExecuteInput is the input of execute_tools.
type ExecuteInput struct {
	Executions []Execution `json:"executions"`
}

// ExecutionResult is the outcome of one execution.
type ExecutionResult struct {
	Index      int             `json:"index"`
	Tool       string          `json:"tool"`
	OK         bool            `json:"ok"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *Error          `json:"error,omitempty"`
	Replayed   bool            `json:"replayed,omitempty"`
	DurationMs int64           `json:"durationMs"`
}

// ExecuteOutput is the output of execute_tools.
type ExecuteOutput struct {
	Results   []ExecutionResult `json:"results"`
	Succeeded int               `json:"succeeded"`
	Failed    int               `json:"failed"`
}

// Execute runs execute_tools: every execution concurrently (at most
// Options.Concurrency at once), results in input order. peer.Progress, when
// non-nil, hears of every finished execution and of the plugins' own
// reports. Execute fails as a whole only on invalid input.
func (t *Tools) Execute(ctx context.Context, p Principal, in ExecuteInput, peer Peer) (*ExecuteOutput, error) {
	n := len(in.Executions)
	if n == 0 || n > MaxExecutions {
		return nil, errorf(failure.InvalidArguments, "executions must hold 1 to %d items, got %d", MaxExecutions, n)
	}
	c, release := t.acquire(ctx, p)
	defer release()
	tracker := newProgressTracker(n, peer.Progress)
	out := &ExecuteOutput{Results: make([]ExecutionResult, n)}
	memo := &connectedMemo{m: map[string]bool{}}
	slots := make(chan struct{}, t.opts.Concurrency)
	var wg sync.WaitGroup
	for i, e := range in.Executions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				out.Results[i] = ExecutionResult{Index: i, Tool: e.Tool, Error: errorf(failure.ToolError, "the request ended before this execution started")}
				out.Results[i].Error.Reason = failure.Canceled
				tracker.finish(i, e.Tool, false)
				return
			}
			defer func() { <-slots }()
			start := time.Now()
			report := func(done, total float64, msg string) { tracker.report(i, done, total, msg) }
			r := t.executeOne(ctx, p, c, memo, e, Peer{Progress: report, Client: peer.Client})
			r.Index, r.Tool, r.DurationMs = i, e.Tool, time.Since(start).Milliseconds()
			out.Results[i] = r
			tracker.finish(i, e.Tool, r.OK)
		}()
	}
	wg.Wait()
	for _, r := range out.Results {
		if r.OK {
			out.Succeeded++
		} else {
			out.Failed++
		}
	}
	return out, nil
}

// Call runs one plugin tool for the direct surface: the same checks, error
// mapping and progress as one execution of execute_tools, without an
// idempotency key.
func (t *Tools) Call(ctx context.Context, p Principal, slug string, args json.RawMessage, peer Peer) (json.RawMessage, *Error) {
	c, release := t.acquire(ctx, p)
	defer release()
	if peer.Progress != nil {
		peer.Progress = monotonic(peer.Progress)
	}
	r := t.executeOne(ctx, p, c, &connectedMemo{m: map[string]bool{}}, Execution{Tool: slug, Arguments: args}, peer)
	if !r.OK {
		return nil, r.Error
	}
	return r.Result, nil
}

// executeOne checks and runs one execution.
func (t *Tools) executeOne(ctx context.Context, p Principal, c *viewCache, memo *connectedMemo, e Execution, peer Peer) ExecutionResult {
	fail := func(err *Error) ExecutionResult { return ExecutionResult{Error: err} }
	tool, ok := c.view.Tool(e.Tool)
	if !ok {
		tool, ok = appTool(c.view, e.Tool)
	}
	if !ok {
		return fail(unknownTool(c, e.Tool))
	}
	if problems := t.checkArguments(c, tool, e); problems != nil {
		return fail(problems)
	}
	args := canonical(e.Arguments)
	if e.IdempotencyKey == "" {
		return t.run(ctx, p, memo, tool, args, peer)
	}
	hash := requestHash(e.Tool, args)
	unlock, err := t.keys.lock(ctx, p.UserID, e.IdempotencyKey)
	if err != nil {
		return fail(&Error{Code: failure.ToolError, Reason: failure.Canceled, Message: "the request ended while another call with the same idempotencyKey was running"})
	}
	defer unlock()
	if r, ok := t.replay(ctx, p, e, hash); ok {
		return r
	}
	release, err := t.opts.Idempotency.Reserve(ctx, p.UserID, e.IdempotencyKey)
	if err != nil {
		return fail(t.unreserved(p, err))
	}
	defer release()
	r := t.run(ctx, p, memo, tool, args, peer)
	if ran(r) {
		t.remember(ctx, p, e, hash, r)
	}
	return r
}

// checkArguments checks an execution's arguments against its tool's input
// schema. A custom app's arguments go to the app as they are: the app
// validates them.
func (t *Tools) checkArguments(c *viewCache, tool registry.Tool, e Execution) *Error {
	if tool.Integration.Custom {
		return nil
	}
	schema, err := t.cacheFor(c.base).inputSchema(tool) // shared by every caller's view
	if err != nil {
		t.logger.Error("tool has an unusable input schema", "tool", e.Tool, "err", err)
		return &Error{Code: failure.ToolError, Reason: failure.BadSchema, Message: "the tool's input schema cannot be used; report this to the operator", Integration: tool.Integration.Name}
	}
	if problems := schema.Check(e.Arguments); problems != nil {
		return &Error{
			Code:        failure.InvalidArguments,
			Message:     fmt.Sprintf("the arguments do not match the input schema of %s (see get_tool_schema); paths start at the arguments object $", e.Tool),
			Problems:    problems,
			Integration: tool.Integration.Name,
		}
	}
	return nil
}

// appTool addresses a tool of a caller's custom app that the app's listing
// lacks (the app cannot be reached, or the tool is new or gone): app tools
// are always <app>__<tool>, and the app answers for them.
func appTool(v *registry.Snapshot, slug string) (registry.Tool, bool) {
	app, _, found := strings.Cut(slug, "__")
	in, ok := v.Integration(app)
	if !found || !ok || !in.Custom {
		return registry.Tool{}, false
	}
	return registry.Tool{Integration: in, Spec: &manifest.Tool{Slug: slug}}, true
}

// run checks the connection and calls the tool.
func (t *Tools) run(ctx context.Context, p Principal, memo *connectedMemo, tool registry.Tool, args []byte, peer Peer) ExecutionResult {
	integration := tool.Integration.Name
	ok, err := memo.connected(ctx, t, p, tool.Integration)
	if err != nil {
		return ExecutionResult{Error: &Error{Code: failure.ToolError, Reason: failure.ConnectionCheck, Integration: integration,
			Message: fmt.Sprintf("could not check your connection to %s; try again", integration)}}
	}
	if !ok {
		return ExecutionResult{Error: notConnected(integration)}
	}
	call := toolcall.Call{Tool: tool.Spec.Slug, UserID: p.UserID, Input: args, Client: peer.Client}
	if peer.Progress != nil {
		call.Progress = func(pr toolcall.Progress) { peer.Progress(pr.Done, pr.Total, pr.Message) }
	}
	out, err := tool.Integration.Caller.Call(ctx, call)
	if err != nil {
		return ExecutionResult{Error: fromToolError(err, integration)}
	}
	return ExecutionResult{OK: true, Result: out}
}

// ran reports whether an outcome came from running the tool (so a retry
// must not run it again), as opposed to a check that failed before it.
func ran(r ExecutionResult) bool {
	if r.OK {
		return true
	}
	switch r.Error.Code {
	case failure.NotConnected, failure.UnknownTool:
		return false
	case failure.ToolError:
		return r.Error.Reason != failure.ConnectionCheck && r.Error.Reason != failure.Canceled
	}
	return true
}

// storedOutcome is what the idempotency store keeps for one key.
type storedOutcome struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

func (t *Tools) replay(ctx context.Context, p Principal, e Execution, hash string) (ExecutionResult, bool) {
	rec, ok, err := t.opts.Idempotency.Get(ctx, p.UserID, e.IdempotencyKey)
	if err != nil {
		t.logger.Warn("reading an idempotency record", "user", p.UserID, "err", err)
		return ExecutionResult{}, false
	}
	if !ok {
		return ExecutionResult{}, false
	}
	if rec.RequestHash != hash {
		return ExecutionResult{Error: &Error{
			Code:    failure.IdempotencyConflict,
			Message: fmt.Sprintf("idempotencyKey %q was already used with a different tool or different arguments; use a new key for a new operation", truncate(e.IdempotencyKey, 64)),
		}}, true
	}
	if rec.Omitted {
		return ExecutionResult{Error: &Error{
			Code: failure.IdempotencyCapacity,
			Message: fmt.Sprintf("idempotencyKey %q was used at %s and the tool ran, but its outcome was over the idempotency store's byte budget and was not kept; it will not run again under this key",
				truncate(e.IdempotencyKey, 64), rec.StoredAt.UTC().Format(time.RFC3339)),
		}}, true
	}
	var s storedOutcome
	if err := json.Unmarshal(rec.Result, &s); err != nil {
		t.logger.Warn("decoding an idempotency record", "user", p.UserID, "err", err)
		return ExecutionResult{}, false
	}
	return ExecutionResult{OK: s.OK, Result: s.Result, Error: s.Error, Replayed: true}, true
}

// unreserved is the refusal of a keyed execution the idempotency store
// has no room for: it does not run, since its outcome could not be kept.
func (t *Tools) unreserved(p Principal, err error) *Error {
	if errors.Is(err, idempotency.ErrCapacity) {
		return &Error{Code: failure.IdempotencyCapacity,
			Message: fmt.Sprintf("%v; the execution did not run: retry it later, or without an idempotencyKey", err)}
	}
	t.logger.Warn("reserving an idempotency key", "user", p.UserID, "err", err)
	return &Error{Code: failure.Unavailable, Message: "the idempotencyKey could not be reserved, so the execution did not run; try again"}
}

func (t *Tools) remember(ctx context.Context, p Principal, e Execution, hash string, r ExecutionResult) {
	b, err := json.Marshal(storedOutcome{OK: r.OK, Result: r.Result, Error: r.Error})
	if err == nil {
		err = t.opts.Idempotency.Put(ctx, p.UserID, e.IdempotencyKey, idempotency.Record{RequestHash: hash, Result: b})
	}
	if err != nil {
		t.logger.Warn("storing an idempotency record", "user", p.UserID, "err", err)
	}
}

// canonical re-encodes arguments with sorted keys, so that equal arguments
// hash equally. Arguments passed the schema check, so they decode.
func canonical(args json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return []byte("{}")
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return trimmed
	}
	b, err := json.Marshal(v)
	if err != nil {
		return trimmed
	}
	return b
}

func requestHash(tool string, args []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(args)
	return hex.EncodeToString(h.Sum(nil))
}

// connectedMemo remembers connection checks for the executions of one
// request, so that ten GitHub executions ask the connection service once.
type connectedMemo struct {
	mu sync.Mutex
	m  map[string]bool
}

func (c *connectedMemo) connected(ctx context.Context, t *Tools, p Principal, in *registry.Integration) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.connected(ctx, p, in, c.m)
}

// keyLocks serialises executions that share a user and idempotency key, so
// that concurrent duplicates run once and the others replay its outcome.
type keyLocks struct {
	mu   sync.Mutex
	held map[lockKey]chan struct{}
}

type lockKey struct{ user, key string }

func (k *keyLocks) lock(ctx context.Context, user, key string) (func(), error) {
	id := lockKey{user, key}
	for {
		k.mu.Lock()
		ch, busy := k.held[id]
		if !busy {
			ch = make(chan struct{})
			k.held[id] = ch
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, id)
				k.mu.Unlock()
				close(ch)
			}, nil
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// progressTracker turns finished executions and plugin reports into one
// increasing progress value: finished executions count one each, a running
// one counts the fraction its plugin reported (capped below one).
type progressTracker struct {
	mu       sync.Mutex
	sink     ProgressFunc
	total    int
	finished int
	partial  []float64
	last     float64
}

func newProgressTracker(total int, report ProgressFunc) *progressTracker {
	return &progressTracker{sink: report, total: total, partial: make([]float64, total)}
}

func (p *progressTracker) report(i int, done, total float64, msg string) {
	if p.sink == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial[i] = min(max(done/total, 0), 0.99)
	p.send(msg)
}

func (p *progressTracker) finish(i int, tool string, ok bool) {
	if p.sink == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial[i] = 0
	p.finished++
	outcome := "succeeded"
	if !ok {
		outcome = "failed"
	}
	p.send(fmt.Sprintf("%d of %d done: %s %s", p.finished, p.total, truncate(tool, 128), outcome))
}

// send reports the current value if it grew; called with mu held.
func (p *progressTracker) send(msg string) {
	v := float64(p.finished)
	for _, f := range p.partial {
		v += f
	}
	if v <= p.last {
		return
	}
	p.last = v
	p.sink(v, float64(p.total), msg)
}

// monotonic wraps a progress report so that only increasing values pass,
// as MCP requires; the first report passes whatever its value (0 included).
func monotonic(report ProgressFunc) ProgressFunc {
	var mu sync.Mutex
	last, sent := 0.0, false
	return func(done, total float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if sent && done <= last {
			return
		}
		last, sent = done, true
		report(done, total, msg)
	}
}
