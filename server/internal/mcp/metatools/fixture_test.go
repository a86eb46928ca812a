package metatools_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

const repoSchema = `{"type":"object","properties":{"owner":{"type":"string","minLength":1},"repo":{"type":"string"},"per_page":{"type":"integer","minimum":1,"maximum":100}},"required":["owner","repo"],"additionalProperties":false}`

var alice = metatools.Principal{UserID: "u-alice", TenantID: "t1", Email: "alice@example.com", Scopes: []string{"mcp"}}

// fixture is a catalog of three integrations backed by Go functions.
type fixture struct {
	source  *mcptest.Source
	github  *mcptest.Funcs
	conns   *mcptest.Connections
	curl    *mcptest.CurlSessions
	tools   *metatools.Tools
	running atomic.Int32 // github_slow calls in flight
	most    atomic.Int32
}

func newFixture(t testing.TB, opts metatools.Options) *fixture {
	t.Helper()
	f := &fixture{conns: mcptest.NewConnections("https://wb.test", "github", "jira"), curl: &mcptest.CurlSessions{Base: "https://wb.test"}}
	f.github = mcptest.NewFuncs(map[string]mcptest.ToolFunc{
		"github_get_repo": func(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
			var in struct{ Owner, Repo string }
			if err := json.Unmarshal(c.Input, &in); err != nil {
				return nil, &failure.Error{Code: failure.InvalidArguments, Message: err.Error()}
			}
			return json.Marshal(map[string]any{"full_name": in.Owner + "/" + in.Repo, "user": c.UserID})
		},
		"github_create_issue": func(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"number":42}`), nil
		},
		"github_missing":    mcptest.Fail("NOT_FOUND", "repository octo/nope not found"),
		"github_egress":     mcptest.Fail("EGRESS_DENIED", "evil.example is not an allowed host"),
		"github_deadline":   mcptest.Fail(failure.Timeout, "the call did not finish before its deadline"),
		"github_upstream":   mcptest.Fail("UPSTREAM_TIMEOUT", "api.github.com did not answer in time"),
		"github_trap":       mcptest.Fail(failure.Trap, "the plugin trapped: unreachable"),
		"github_no_token":   mcptest.Fail(failure.NotConnected, "you are not connected to github"),
		"github_bad_args":   mcptest.Fail(failure.InvalidArguments, "repo must not be empty"),
		"github_vanished":   mcptest.Fail(failure.UnknownTool, "github has no tool github_vanished"),
		"github_slow":       f.slow,
		"github_progress":   progressTool,
		"github_list_pulls": mcptest.Echo,
	})
	githubTools := []manifest.Tool{
		mcptest.Tool("github_get_repo", "Get a repository", "Returns one repository by owner and name.\nSecond line.", repoSchema),
		mcptest.Tool("github_create_issue", "Create an issue", "Opens a new issue.", ""),
		mcptest.Tool("github_list_pulls", "List pull requests", "Lists pull requests of a repository.", ""),
		mcptest.Tool("github_missing", "", "Fails with NOT_FOUND.", ""),
		mcptest.Tool("github_egress", "", "Fails with EGRESS_DENIED.", ""),
		mcptest.Tool("github_deadline", "", "Fails with TIMEOUT.", ""),
		mcptest.Tool("github_upstream", "", "Fails with UPSTREAM_TIMEOUT.", ""),
		mcptest.Tool("github_trap", "", "Traps.", ""),
		mcptest.Tool("github_no_token", "", "Fails with the runtime's NOT_CONNECTED.", ""),
		mcptest.Tool("github_bad_args", "", "Fails with the plugin's INVALID_ARGUMENTS.", ""),
		mcptest.Tool("github_vanished", "", "Fails with the runtime's UNKNOWN_TOOL.", ""),
		mcptest.Tool("github_slow", "", "Sleeps briefly and counts concurrency.", ""),
		mcptest.Tool("github_progress", "", "Reports progress.", ""),
	}
	gh := mcptest.Manifest("github", manifest.ModeOAuth2, githubTools...)
	gh.Proxy = &manifest.Proxy{BaseURL: "https://api.github.com"}
	gh.Logo = "https://github.githubassets.com/favicon.svg"
	gh.Categories = []string{"developer-tools"}
	jira := mcptest.Manifest("jira", manifest.ModeAPIKey, mcptest.Tool("jira_search", "Search issues", "Runs a JQL query.", ""))
	jira.Logo = "data:image/png;base64,AAAA"
	echo := mcptest.Manifest("echo", manifest.ModeNone, mcptest.Tool("echo_ping", "Ping", "Returns its input.", ""))
	f.source = mcptest.NewSource(
		registry.Native(gh, f.github),
		registry.Native(jira, mcptest.NewFuncs(map[string]mcptest.ToolFunc{"jira_search": mcptest.Echo})),
		registry.Native(echo, mcptest.NewFuncs(map[string]mcptest.ToolFunc{"echo_ping": mcptest.Echo})),
	)
	f.conns.SetConnected(alice.UserID, "github", true)
	opts.Catalog = f.source
	if opts.Connections == nil {
		opts.Connections = f.conns
	}
	if opts.CurlSessions == nil {
		opts.CurlSessions = f.curl
	}
	tools, err := metatools.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.tools = tools
	return f
}

// slow holds a slot for 30 ms and records the most calls that ran at once.
func (f *fixture) slow(ctx context.Context, _ toolcall.Call) (json.RawMessage, error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.most.Load()
		if n <= m || f.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-time.After(30 * time.Millisecond):
		return json.RawMessage(`{"slept":true}`), nil
	case <-ctx.Done():
		return nil, &failure.Error{Code: failure.Canceled, Message: "the call was canceled"}
	}
}

// progressTool reports 1/4, 2/4, a regression to 1/4, then 3/4, and returns.
func progressTool(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
	for _, d := range []float64{1, 2, 1, 3} {
		if c.Progress != nil {
			c.Progress(toolcall.Progress{Done: d, Total: 4, Message: "step"})
		}
	}
	return json.RawMessage(`{"done":true}`), nil
}

// invoke runs a meta-tool and decodes its JSON into out (when non-nil).
func (f *fixture) invoke(t testing.TB, p metatools.Principal, name, args string, out any) metatools.Result {
	t.Helper()
	r, err := f.tools.Invoke(context.Background(), p, name, json.RawMessage(args), metatools.Peer{})
	if err != nil {
		t.Fatalf("Invoke(%s, %s): %v", name, args, err)
	}
	if !json.Valid(r.JSON) {
		t.Fatalf("Invoke(%s) returned invalid JSON %s", name, r.JSON)
	}
	if out != nil {
		if err := json.Unmarshal(r.JSON, out); err != nil {
			t.Fatalf("%s output %s: %v", name, r.JSON, err)
		}
	}
	return r
}

// failed runs a meta-tool that must fail and returns its error.
func (f *fixture) failed(t testing.TB, p metatools.Principal, name, args string) *metatools.Error {
	t.Helper()
	var body struct{ Error *metatools.Error }
	r := f.invoke(t, p, name, args, &body)
	if !r.IsError || r.Structured || body.Error == nil {
		t.Fatalf("Invoke(%s, %s) = %s (isError %v), want a failure", name, args, r.JSON, r.IsError)
	}
	return body.Error
}
