package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// The two protocol eras the endpoint serves.
const (
	legacyEra = "2025-11-25"
	newEra    = "2026-07-28"
)

var (
	alice      = metatools.Principal{UserID: "u-alice", TenantID: "t1", Email: "alice@example.com", Scopes: []string{"mcp"}}
	aliceToken = "tok-alice"
)

// env is an endpoint served by Fiber on 127.0.0.1 with Go-function tools.
type env struct {
	url      string
	ep       *mcp.Endpoint
	source   *mcptest.Source
	tokens   *mcptest.Tokens
	conns    *mcptest.Connections
	canceled chan error    // causes of demo_block calls that ended
	blocked  chan struct{} // a demo_block call started

	confirmRuns atomic.Int32 // runs of demo_confirm
}

func demoIntegrations(e *env) []*registry.Integration {
	demo := mcptest.Manifest("demo", manifest.ModeNone,
		mcptest.Tool("demo_echo", "Echo", "Returns its input.", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		mcptest.Tool("demo_block", "Block", "Blocks until canceled.", ""),
		mcptest.Tool("demo_progress", "Progress", "Reports progress.", ""),
		mcptest.Tool("demo_bad_output", "Bad output", "Returns a result its output schema rejects.", ""),
		mcptest.Tool("demo_confirm", "Confirm", "Logs, then asks the user to confirm.", ""),
	)
	demo.Tools[0].OutputSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)
	demo.Tools[3].OutputSchema = json.RawMessage(`{"type":"object","required":["id"]}`)
	funcs := mcptest.NewFuncs(map[string]mcptest.ToolFunc{
		"demo_echo": mcptest.Echo,
		"demo_block": func(ctx context.Context, _ toolcall.Call) (json.RawMessage, error) {
			e.blocked <- struct{}{}
			<-ctx.Done()
			e.canceled <- context.Cause(ctx)
			return nil, &failure.Error{Code: failure.Canceled, Message: "canceled"}
		},
		"demo_progress": func(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
			c.Progress(toolcall.Progress{Done: 1, Total: 2, Message: "half"})
			c.Progress(toolcall.Progress{Done: 2, Total: 2, Message: "whole"})
			return json.RawMessage(`{"ok":true}`), nil
		},
		"demo_bad_output": func(context.Context, toolcall.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"name":"no id"}`), nil
		},
		"demo_confirm": func(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
			c.Client.Log(slog.LevelWarn, "about to delete")
			// As the runtime does for the elicit import.
			e.confirmRuns.Add(1)
			if !c.Client.Supports(toolcall.MethodElicit) {
				return nil, &failure.Error{Code: "UNSUPPORTED", Message: "elicit: the client did not declare the capability",
					Details: json.RawMessage(`{"requiredCapabilities":{"elicitation":{}}}`)}
			}
			res, err := c.Client.Ask(ctx, []toolcall.InputRequest{{Key: "confirm", Method: toolcall.MethodElicit,
				Params: json.RawMessage(`{"message":"Delete it?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}`)}})
			switch {
			case errors.Is(err, toolcall.ErrInputRequired):
				return nil, &failure.Error{Code: failure.InputRequired, Message: "input required"}
			case err != nil:
				return nil, &failure.Error{Code: "CLIENT_ERROR", Message: err.Error()}
			}
			return res["confirm"], nil
		},
	})
	gh := mcptest.Manifest("github", manifest.ModeOAuth2, mcptest.Tool("github_list_pulls", "List pull requests", "Lists pull requests.", ""))
	gh.Proxy = &manifest.Proxy{BaseURL: "https://api.github.com"}
	return []*registry.Integration{
		registry.Native(demo, funcs),
		registry.Native(gh, mcptest.NewFuncs(map[string]mcptest.ToolFunc{"github_list_pulls": mcptest.Echo})),
	}
}

func start(t testing.TB, opts mcp.Options) *env {
	t.Helper()
	e := &env{canceled: make(chan error, 8), blocked: make(chan struct{}, 8)}
	e.source = mcptest.NewSource(demoIntegrations(e)...)
	e.tokens = mcptest.NewTokens(failure.ErrUnauthenticated)
	e.tokens.Add(aliceToken, alice)
	e.conns = mcptest.NewConnections("https://wb.test", "github")
	if opts.Catalog == nil {
		opts.Catalog = e.source
	}
	if opts.Authenticator == nil {
		opts.Authenticator = e.tokens
	}
	if opts.PublicURL == "" {
		opts.PublicURL = "https://wb.example.com"
	}
	if opts.Connections == nil {
		opts.Connections = e.conns
	}
	ep, err := mcp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.ep = ep
	base, cancel := context.WithCancel(context.Background())
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All("/mcp", fiberfix.Bridge(base, ep, 20*time.Millisecond))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		cancel()
		ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		if err := ep.Close(ctx); err != nil {
			t.Error(err)
		}
		_ = app.ShutdownWithTimeout(5 * time.Second)
	})
	e.url = "http://" + ln.Addr().String() + "/mcp"
	return e
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a Go SDK client session at the given protocol version.
func connect(t testing.TB, url, token, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "workbench-test", Version: "1"}, opts)
	transport := &sdk.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
		MaxRetries: -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callJSON(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text.Text), out); err != nil {
			t.Fatalf("%s: %s: %v", name, text.Text, err)
		}
	}
	return res
}

var metaNames = []string{"connect", "curl_session", "execute_tools", "get_auth_url", "get_tool_schema", "list_integrations", "search_tools", "wait_for_connection", "whoami"}

func TestEndpoint_Surfaces(t *testing.T) {
	plugin := []string{"demo_bad_output", "demo_block", "demo_confirm", "demo_echo", "demo_progress", "github_list_pulls"}
	tests := []struct {
		surface mcp.Surface
		want    []string
	}{
		{mcp.SurfaceMeta, metaNames},
		{"", metaNames},
		{mcp.SurfaceDirect, sortedUnion(plugin, []string{"connect", "list_integrations", "wait_for_connection", "whoami"})},
		{mcp.SurfaceBoth, sortedUnion(plugin, metaNames)},
	}
	for _, tt := range tests {
		for _, era := range []string{legacyEra, newEra} {
			t.Run(string(tt.surface)+"/"+era, func(t *testing.T) {
				e := start(t, mcp.Options{Surface: tt.surface})
				cs := connect(t, e.url, aliceToken, era, nil)
				if got := toolNames(t, cs); !slices.Equal(got, tt.want) {
					t.Errorf("tools/list = %v\nwant %v", got, tt.want)
				}
			})
		}
	}
	if _, err := mcp.New(mcp.Options{Catalog: mcptest.NewSource(), Authenticator: mcptest.NewTokens(failure.ErrUnauthenticated), PublicURL: "http://x", Surface: "all"}); err == nil {
		t.Error("an unknown surface must be refused")
	}
}

func sortedUnion(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestEndpoint_MetaTools(t *testing.T) {
	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			e := start(t, mcp.Options{})
			cs := connect(t, e.url, aliceToken, era, nil)

			var who metatools.Principal
			callJSON(t, cs, "whoami", map[string]any{}, &who)
			if who.UserID != alice.UserID || who.Email != alice.Email {
				t.Errorf("whoami = %+v", who)
			}

			var found metatools.SearchOutput
			res := callJSON(t, cs, "search_tools", map[string]any{"query": "echo"}, &found)
			if len(found.Hits) == 0 || found.Hits[0].Slug != "demo_echo" || res.StructuredContent == nil {
				t.Errorf("search = %+v, structured %v", found, res.StructuredContent)
			}

			var exec metatools.ExecuteOutput
			res = callJSON(t, cs, "execute_tools", map[string]any{"executions": []any{
				map[string]any{"tool": "demo_echo", "arguments": map[string]any{"message": "hi"}},
				map[string]any{"tool": "github_list_pulls"},
				map[string]any{"tool": "demo_echo", "arguments": map[string]any{}},
			}}, &exec)
			if res.IsError || len(exec.Results) != 3 || !exec.Results[0].OK || string(exec.Results[0].Result) != `{"message":"hi"}` {
				t.Fatalf("execute = %+v", exec)
			}
			if e := exec.Results[1].Error; e == nil || e.Code != "NOT_CONNECTED" || e.Fix != "connect('github')" {
				t.Errorf("not connected = %+v", exec.Results[1])
			}
			if e := exec.Results[2].Error; e == nil || e.Code != "INVALID_ARGUMENTS" || len(e.Problems) != 1 || e.Problems[0].Path != "$.message" {
				t.Errorf("invalid arguments = %+v", exec.Results[2])
			}

			var failed struct{ Error metatools.Error }
			res = callJSON(t, cs, "get_tool_schema", map[string]any{"tool": "demo_ech"}, &failed)
			if !res.IsError || res.StructuredContent != nil || failed.Error.Code != "UNKNOWN_TOOL" || !slices.Contains(failed.Error.Suggestions, "demo_echo") {
				t.Errorf("unknown tool = %+v (isError %v)", failed, res.IsError)
			}

			// An unknown tool name in tools/call is a protocol error.
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "demo_echo"}); err == nil {
				t.Error("calling a plugin tool by name on the meta surface must fail")
			}
		})
	}
}

func TestEndpoint_Progress(t *testing.T) {
	for _, surface := range []mcp.Surface{mcp.SurfaceMeta, mcp.SurfaceDirect} {
		for _, era := range []string{legacyEra, newEra} {
			t.Run(string(surface)+"/"+era, func(t *testing.T) {
				e := start(t, mcp.Options{Surface: surface})
				var mu sync.Mutex
				var got []float64
				cs := connect(t, e.url, aliceToken, era, &sdk.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
						mu.Lock()
						defer mu.Unlock()
						got = append(got, r.Params.Progress)
					},
				})
				params := &sdk.CallToolParams{Name: "demo_progress", Arguments: map[string]any{}}
				want := []float64{1, 2}
				if surface == mcp.SurfaceMeta {
					params = &sdk.CallToolParams{Name: "execute_tools", Arguments: map[string]any{"executions": []any{
						map[string]any{"tool": "demo_progress"}, map[string]any{"tool": "demo_echo", "arguments": map[string]any{"message": "x"}},
					}}}
				}
				params.SetProgressToken("p-1")
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					t.Fatalf("call = %+v, %v", res, err)
				}
				// Notifications are handled concurrently with the response.
				for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					mu.Lock()
					n, last := len(got), 0.0
					if n > 0 {
						last = got[n-1]
					}
					mu.Unlock()
					if surface == mcp.SurfaceDirect && n >= len(want) || surface == mcp.SurfaceMeta && last == 2 {
						break
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if surface == mcp.SurfaceDirect && !slices.Equal(got, want) {
					t.Errorf("progress = %v, want %v", got, want)
				}
				if surface == mcp.SurfaceMeta && (len(got) < 2 || got[len(got)-1] != 2 || !slices.IsSorted(got)) {
					t.Errorf("progress = %v, want increasing values ending at 2 (both executions done)", got)
				}
			})
		}
	}
}

func TestEndpoint_Direct(t *testing.T) {
	e := start(t, mcp.Options{Surface: mcp.SurfaceDirect})
	cs := connect(t, e.url, aliceToken, legacyEra, nil)
	res := callJSON(t, cs, "demo_echo", map[string]any{"message": "hi"}, nil)
	if structured, _ := json.Marshal(res.StructuredContent); res.IsError || string(structured) != `{"message":"hi"}` {
		t.Errorf("demo_echo = %+v", res)
	}
	var failed struct{ Error metatools.Error }
	res = callJSON(t, cs, "demo_echo", map[string]any{"message": 5}, &failed)
	if !res.IsError || failed.Error.Code != "INVALID_ARGUMENTS" {
		t.Errorf("bad arguments = %+v", failed)
	}
	res = callJSON(t, cs, "github_list_pulls", map[string]any{}, &failed)
	if !res.IsError || failed.Error.Code != "NOT_CONNECTED" || failed.Error.Fix != "connect('github')" {
		t.Errorf("not connected = %+v", failed)
	}
	res = callJSON(t, cs, "demo_bad_output", map[string]any{}, &failed)
	if !res.IsError || failed.Error.Reason != "BAD_OUTPUT" || len(failed.Error.Problems) != 1 || failed.Error.Problems[0].Path != "$.id" {
		t.Errorf("bad output = %+v", failed)
	}
	e.conns.SetConnected(alice.UserID, "github", true)
	if res := callJSON(t, cs, "github_list_pulls", map[string]any{"state": "open"}, nil); res.IsError {
		t.Errorf("after connecting: %+v", res)
	}
}

func TestEndpoint_ListChanged(t *testing.T) {
	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			e := start(t, mcp.Options{Surface: mcp.SurfaceDirect})
			changed := make(chan struct{}, 4)
			cs := connect(t, e.url, aliceToken, era, &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
			})
			before := toolNames(t, cs)
			// Unload github and load another integration.
			extra := mcptest.Manifest("extra", manifest.ModeNone, mcptest.Tool("extra_ping", "Ping", "Pings.", ""))
			ins := demoIntegrations(e)[:1]
			e.source.Set(append(ins, registry.Native(extra, mcptest.NewFuncs(map[string]mcptest.ToolFunc{"extra_ping": mcptest.Echo})))...)
			e.ep.Refresh()
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("no notifications/tools/list_changed after the catalog changed")
			}
			after := toolNames(t, cs)
			if !slices.Contains(after, "extra_ping") || slices.Contains(after, "github_list_pulls") || !slices.Contains(before, "github_list_pulls") {
				t.Errorf("before %v, after %v", before, after)
			}
			// One change may reach the client as several notifications (the
			// SDK sends one per batch of additions and removals); let them
			// settle, then a refresh without a change sends nothing.
			for settled := false; !settled; {
				select {
				case <-changed:
				case <-time.After(300 * time.Millisecond):
					settled = true
				}
			}
			e.ep.Refresh()
			select {
			case <-changed:
				t.Error("list_changed without a change")
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

func TestEndpoint_MetaSurfaceIgnoresSwaps(t *testing.T) {
	e := start(t, mcp.Options{})
	changed := make(chan struct{}, 4)
	cs := connect(t, e.url, aliceToken, legacyEra, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	e.source.Set(demoIntegrations(e)[:1]...)
	e.ep.Refresh()
	select {
	case <-changed:
		t.Error("the meta surface's tools did not change, yet list_changed was sent")
	case <-time.After(200 * time.Millisecond):
	}
	if got := toolNames(t, cs); !slices.Equal(got, metaNames) {
		t.Errorf("tools = %v", got)
	}
}

func TestEndpoint_Resources(t *testing.T) {
	e := start(t, mcp.Options{PageSize: 2})
	cs := connect(t, e.url, aliceToken, legacyEra, nil)
	ctx := context.Background()
	var uris []string
	pages := 0
	var cursor string
	for {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
			if r.MIMEType != "application/json" {
				t.Errorf("%s has MIME type %q", r.URI, r.MIMEType)
			}
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	want := []string{"workbench://integration/demo", "workbench://integration/github", "workbench://tool/demo_bad_output",
		"workbench://tool/demo_block", "workbench://tool/demo_confirm", "workbench://tool/demo_echo", "workbench://tool/demo_progress", "workbench://tool/github_list_pulls"}
	if !slices.Equal(uris, want) || pages != 4 {
		t.Errorf("resources (%d pages) = %v\nwant %v", pages, uris, want)
	}
	if _, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: "not-a-cursor"}); !isRPCError(err, -32602) {
		t.Errorf("bad cursor: %v, want invalid params", err)
	}

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl []string
	for _, rt := range templates.ResourceTemplates {
		tmpl = append(tmpl, rt.URITemplate)
	}
	slices.Sort(tmpl)
	if !slices.Equal(tmpl, []string{"workbench://integration/{name}", "workbench://tool/{slug}"}) {
		t.Errorf("templates = %v", tmpl)
	}

	read := func(uri string) string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, res.Contents)
		}
		return res.Contents[0].Text
	}
	// The same JSON as the matching meta-tool.
	var schema json.RawMessage
	callJSON(t, cs, "get_tool_schema", map[string]any{"tool": "demo_echo"}, &schema)
	if got := read("workbench://tool/demo_echo"); got != string(schema) {
		t.Errorf("tool resource = %s\nget_tool_schema = %s", got, schema)
	}
	var list metatools.IntegrationsOutput
	callJSON(t, cs, "list_integrations", map[string]any{}, &list)
	entry, _ := json.Marshal(list.Integrations[1])
	if got := read("workbench://integration/github"); got != string(entry) {
		t.Errorf("integration resource = %s\nlist entry = %s", got, entry)
	}
	for _, uri := range []string{"workbench://tool/nope", "workbench://integration/nope", "workbench://other/x"} {
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); !isRPCError(err, sdk.CodeResourceNotFound) {
			t.Errorf("read %s: %v, want resource not found", uri, err)
		}
	}
}

// TestEndpoint_ResourcesArePrivate: every resource read answers for the
// calling user (the workbench:// entries carry the user's connected flag,
// plugin resources run with the user's credential), so no read may be
// cached for other users.
func TestEndpoint_ResourcesArePrivate(t *testing.T) {
	e := start(t, mcp.Options{})
	cs := connect(t, e.url, aliceToken, newEra, nil)
	for _, uri := range []string{"workbench://integration/github", "workbench://tool/demo_echo"} {
		res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if res.CacheScope != "private" {
			t.Errorf("read %s: cacheScope %q, want private", uri, res.CacheScope)
		}
	}
}

// isRPCError reports whether err carries the JSON-RPC error code.
func isRPCError(err error, code int64) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == code
}

// TestEndpoint_TalkBack: a plugin's log reaches the client as a log message
// and its elicitation as a request the client answers; a client that did not
// declare elicitation gets a clear error instead.
func TestEndpoint_TalkBack(t *testing.T) {
	e := start(t, mcp.Options{Surface: mcp.SurfaceDirect})
	logs := make(chan string, 4)
	cs := connect(t, e.url, aliceToken, legacyEra, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if r.Params.Message != "Delete it?" {
				return nil, fmt.Errorf("unexpected question %q", r.Params.Message)
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			logs <- fmt.Sprintf("%s %v", r.Params.Level, r.Params.Data)
		},
	})
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	res := callJSON(t, cs, "demo_confirm", map[string]any{}, &got)
	if res.IsError || got["action"] != "accept" || got["content"].(map[string]any)["confirm"] != true {
		t.Fatalf("confirm = %+v %v", res, got)
	}
	select {
	case l := <-logs:
		if l != "warning about to delete" {
			t.Fatalf("log = %q", l)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no log message reached the client")
	}

	plain := connect(t, e.url, aliceToken, legacyEra, nil)
	if _, err := plain.CallTool(context.Background(), &sdk.CallToolParams{Name: "demo_confirm", Arguments: map[string]any{}}); !isRPCError(err, sdk.CodeMissingRequiredClientCapabilities) || !strings.Contains(err.Error(), "did not declare") {
		t.Fatalf("without elicitation: %v", err)
	}
}

// TestEndpoint_InputRequired: in the 2026-07-28 era a tool that asks the
// user ends its round with an input-required result and a signed
// requestState; the client's retry with the answers runs it again to the
// end, and a state that was tampered with, belongs to other arguments or
// another user is refused with invalid params.
func TestEndpoint_InputRequired(t *testing.T) {
	e := start(t, mcp.Options{Surface: mcp.SurfaceBoth})
	e.tokens.Add(bobToken, bob)
	ctx := context.Background()

	// The go-sdk client answers input-required results by itself.
	auto := connect(t, e.url, aliceToken, newEra, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if r.Params.Message != "Delete it?" {
				return nil, fmt.Errorf("unexpected question %q", r.Params.Message)
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	})
	var got map[string]any
	res := callJSON(t, auto, "demo_confirm", map[string]any{}, &got)
	if res.IsError || got["action"] != "accept" || e.confirmRuns.Load() != 2 {
		t.Fatalf("confirm = %+v %v after %d runs, want accept after 2", res, got, e.confirmRuns.Load())
	}

	manual := func(token string, caps *sdk.ClientCapabilities) *sdk.ClientSession {
		return connect(t, e.url, token, newEra, &sdk.ClientOptions{
			MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
			Capabilities:   caps,
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return nil, errors.New("not used")
			},
		})
	}
	cs := manual(aliceToken, nil)
	first, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "demo_confirm", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	ep, ok := first.InputRequests["confirm"].(*sdk.ElicitParams)
	if !first.NeedsInput() || !ok || ep.Message != "Delete it?" || first.RequestState == "" || len(first.Content) != 0 {
		t.Fatalf("round 1 = %+v, want an input-required result asking to confirm", first)
	}
	answer := sdk.InputResponseMap{"confirm": &sdk.ElicitResult{Action: "decline"}}
	tests := []struct {
		name  string
		cs    *sdk.ClientSession
		args  map[string]any
		state string
		code  int64 // 0: the call completes
	}{
		{"tampered", cs, map[string]any{}, first.RequestState + "-TAMPERED", -32602},
		{"other arguments", cs, map[string]any{"x": 1}, first.RequestState, -32602},
		{"other user", manual(bobToken, nil), map[string]any{}, first.RequestState, -32602},
		{"not ours", cs, map[string]any{}, "eyJhIjoxfQ", -32602},
		{"answered", cs, map[string]any{}, first.RequestState, 0},
		{"answered without state", cs, map[string]any{}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.cs.CallTool(ctx, &sdk.CallToolParams{Name: "demo_confirm", Arguments: tt.args, InputResponses: answer, RequestState: tt.state})
			if tt.code != 0 {
				if !isRPCError(err, tt.code) {
					t.Fatalf("got %+v, %v; want JSON-RPC error %d", res, err, tt.code)
				}
				return
			}
			if err != nil || res.NeedsInput() || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "decline") {
				t.Fatalf("got %+v, %v; want the declined answer", res, err)
			}
		})
	}

	// execute_tools cannot end in an input-required result: the plugin is
	// told to have the tool called directly.
	var exec metatools.ExecuteOutput
	callJSON(t, auto, "execute_tools", map[string]any{"executions": []any{map[string]any{"tool": "demo_confirm"}}}, &exec)
	if len(exec.Results) != 1 || exec.Results[0].Error == nil || exec.Results[0].Error.Reason != "CLIENT_ERROR" || !strings.Contains(exec.Results[0].Error.Message, "call the tool directly") {
		t.Fatalf("execute_tools in the 2026-07-28 era = %+v", exec)
	}

	// A client without elicitation is told what to declare.
	plain := connect(t, e.url, aliceToken, newEra, nil)
	if _, err := plain.CallTool(ctx, &sdk.CallToolParams{Name: "demo_confirm", Arguments: map[string]any{}}); !isRPCError(err, sdk.CodeMissingRequiredClientCapabilities) || !strings.Contains(err.Error(), "did not declare") {
		t.Fatalf("without elicitation: %v", err)
	}
}
