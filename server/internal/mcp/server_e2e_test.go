package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// realServer is the real Workbench server (server.New and Run) on
// 127.0.0.1 with the fixture plugin built in.
type realServer struct {
	addr   string
	mcpURL string
	logs   *syncBuffer
	tokens *mcptest.Tokens
}

func startRealServer(t *testing.T, surface server.ToolSurface, plugins ...string) *realServer {
	t.Helper()
	return startServerWith(t, surface, true, io.Discard, plugins...)
}

// startServerWith starts the real server; with fakeTokens, /mcp accepts the
// test's fake tokens, otherwise the API tokens of the store, and the
// first-start notice (the admin's token) goes to announce.
func startServerWith(t *testing.T, surface server.ToolSurface, fakeTokens bool, announce io.Writer, plugins ...string) *realServer {
	t.Helper()
	builtin := filepath.Join(t.TempDir(), "builtin")
	if len(plugins) == 0 {
		plugins = []string{"fixture"}
	}
	for _, name := range plugins {
		mcptest.FixturePlugin(t, builtin, name)
	}
	return serveBuiltin(t, surface, fakeTokens, announce, builtin, len(plugins))
}

// serveBuiltin starts the real server with the built-in plugins found in
// builtin (laid out as <name>/<name>.wasm) and waits until the expected
// number of them loaded.
func serveBuiltin(t *testing.T, surface server.ToolSurface, fakeTokens bool, announce io.Writer, builtin string, plugins int) *realServer {
	t.Helper()
	root := t.TempDir()
	tokens := mcptest.NewTokens(failure.ErrUnauthenticated)
	tokens.Add(aliceToken, alice)
	logs := &syncBuffer{}
	cfg := server.Config{
		ListenAddr:        "127.0.0.1:0",
		DataDir:           filepath.Join(root, "data"),
		BuiltinPluginsDir: builtin,
		ToolSurface:       surface,
	}
	if fakeTokens {
		cfg.MCPAuthenticator = tokens
	}
	cfg.Announce = announce
	srv, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run: %v\n%s", err, logs)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not listen")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	rs := &realServer{addr: srv.Addr(), mcpURL: "http://" + srv.Addr() + "/mcp", logs: logs, tokens: tokens}
	// Go plugins (the conformance fixtures) take a while to compile,
	// longer under -race.
	deadline := time.Now().Add(2 * time.Minute)
	for srv.PluginHealth().Loading || srv.PluginHealth().Loaded < plugins {
		if time.Now().After(deadline) {
			t.Fatalf("plugins did not load: %+v\n%s", srv.PluginHealth(), logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return rs
}

// TestServer_MCP drives the real server with the Go SDK client in both
// protocol eras: the nine tools, search, schema, execution with progress,
// every kind of failure from a real wasm plugin, and resources.
func TestServer_MCP(t *testing.T) {
	rs := startRealServer(t, server.SurfaceMeta)

	resp, _ := post(t, rs.mcpURL, nil, initialize)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource") {
		t.Errorf("without a token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	for _, era := range []string{legacyEra, newEra} {
		t.Run(era, func(t *testing.T) {
			var mu sync.Mutex
			var progress []string
			cs := connect(t, rs.mcpURL, aliceToken, era, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, fmt.Sprintf("%g/%g %s", r.Params.Progress, r.Params.Total, r.Params.Message))
				},
			})
			if got := toolNames(t, cs); !slices.Equal(got, metaNames) {
				t.Fatalf("tools/list = %v", got)
			}

			var found metatools.SearchOutput
			callJSON(t, cs, "search_tools", map[string]any{"query": "echo a message"}, &found)
			if len(found.Hits) == 0 || found.Hits[0].Slug != "fixture_echo" || !found.Hits[0].Connected {
				t.Errorf("search = %+v", found)
			}
			var schema metatools.ToolSchema
			callJSON(t, cs, "get_tool_schema", map[string]any{"tool": "fixture_echo"}, &schema)
			if schema.Integration != "fixture" || !schema.Annotations.ReadOnly || !strings.Contains(string(schema.InputSchema), `"required":["message"]`) {
				t.Errorf("schema = %+v", schema)
			}

			params := &sdk.CallToolParams{Name: "execute_tools", Arguments: map[string]any{"executions": []any{
				map[string]any{"tool": "fixture_echo", "arguments": map[string]any{"message": "hello"}},
				map[string]any{"tool": "fixture_progress"},
				map[string]any{"tool": "fixture_fail"},
				map[string]any{"tool": "fixture_spin"},
				map[string]any{"tool": "fixture_fetch", "arguments": map[string]any{"url": "https://denied.example.com/secrets"}},
				map[string]any{"tool": "fixture_echo", "arguments": map[string]any{"message": ""}},
				map[string]any{"tool": "fixture_ech"},
			}}}
			params.SetProgressToken("e2e")
			res, err := cs.CallTool(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			var out metatools.ExecuteOutput
			if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
				t.Fatal(err)
			}
			if res.IsError || out.Succeeded != 2 || out.Failed != 5 {
				t.Errorf("execute: isError %v, %d ok, %d failed", res.IsError, out.Succeeded, out.Failed)
			}
			if r := out.Results[0]; !r.OK || string(r.Result) != `{"message":"hello"}` {
				t.Errorf("echo = %+v", r)
			}
			if r := out.Results[1]; !r.OK || string(r.Result) != `{"progressed":true}` {
				t.Errorf("progress tool = %+v", r)
			}
			wantErrors := []struct{ code, reason, detail string }{
				{"TOOL_ERROR", "NOT_FOUND", `{"id":7}`},
				{"TIMEOUT", "", ""},
				{"EGRESS_DENIED", "", ""},
				{"INVALID_ARGUMENTS", "", ""},
				{"UNKNOWN_TOOL", "", ""},
			}
			for i, want := range wantErrors {
				r := out.Results[2+i]
				if r.OK || string(r.Error.Code) != want.code || string(r.Error.Reason) != want.reason || string(r.Error.Details) != want.detail {
					t.Errorf("execution %d (%s) = %+v, want %+v", 2+i, r.Tool, r.Error, want)
				}
			}
			if e := out.Results[4].Error; e != nil && !strings.Contains(e.Message, "denied.example.com") {
				t.Errorf("egress message %q does not name the host", e.Message)
			}
			if e := out.Results[6].Error; e != nil && !slices.Contains(e.Suggestions, "fixture_echo") {
				t.Errorf("unknown tool suggestions = %v", e.Suggestions)
			}
			waitFor(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) > 0 && strings.HasPrefix(progress[len(progress)-1], "7/7 ")
			})
			mu.Lock()
			if !slices.ContainsFunc(progress, func(p string) bool { return strings.HasSuffix(p, "one third") }) {
				t.Errorf("the plugin's own progress was not forwarded: %v", progress)
			}
			mu.Unlock()

			res2, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "workbench://integration/fixture"})
			if err != nil {
				t.Fatal(err)
			}
			var info metatools.IntegrationInfo
			if err := json.Unmarshal([]byte(res2.Contents[0].Text), &info); err != nil || info.ToolCount != 6 || !info.Connected || info.AuthMode != "none" {
				t.Errorf("integration resource = %s (%v)", res2.Contents[0].Text, err)
			}
			// The server's native integrations (jots) are listed too; count the fixture's.
			resources, err := cs.ListResources(context.Background(), nil)
			fixture := 0
			for _, r := range resourcesOf(resources) {
				if r.URI == "workbench://integration/fixture" || strings.HasPrefix(r.URI, "workbench://tool/fixture_") {
					fixture++
				}
			}
			if err != nil || fixture != 7 {
				t.Errorf("fixture resources = %d, %v; want 1 integration and 6 tools", fixture, err)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
	}
}

// TestServer_MCPCancelsOnDisconnect: through the real server and a real
// wasm plugin, a 2026-07-28 call whose client goes away is canceled long
// before its 60 s deadline, and the runtime reports it as CANCELED.
func TestServer_MCPCancelsOnDisconnect(t *testing.T) {
	rs := startRealServer(t, server.SurfaceDirect)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixture_hang","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	conn, err := net.Dial("tcp", rs.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: fixture_hang\r\n"+
		"Content-Length: %d\r\n\r\n%s", rs.addr, aliceToken, newEra, len(body), body)
	time.Sleep(500 * time.Millisecond) // the plugin is spinning by now
	if strings.Contains(rs.logs.String(), "code=CANCELED") {
		t.Fatal("canceled before the client left")
	}
	left := time.Now()
	conn.Close()
	waitFor(t, func() bool { return strings.Contains(rs.logs.String(), "tool=fixture_hang code=CANCELED") })
	d := time.Since(left)
	if d > 3*time.Second {
		t.Errorf("the plugin ran %v after its client left", d)
	}
	t.Logf("the plugin stopped %v after its client left", d.Round(time.Millisecond))
}

// TestServer_MCPStoreTokens: without a test authenticator, /mcp accepts the
// API tokens of the store (here the first admin's, printed once at start)
// and refuses anything else; connect reaches the real connect service.
func TestServer_MCPStoreTokens(t *testing.T) {
	var notice syncBuffer
	rs := startServerWith(t, server.SurfaceMeta, false, &notice)
	token := regexp.MustCompile(`wb_[A-Za-z0-9_-]{20,}`).FindString(notice.String())
	if token == "" {
		t.Fatalf("no API token in the first-start notice:\n%s", notice.String())
	}
	cs := connect(t, rs.mcpURL, token, legacyEra, nil)
	var who map[string]any
	callJSON(t, cs, "whoami", map[string]any{}, &who)
	if !strings.Contains(fmt.Sprint(who), "admin@workbench.local") {
		t.Fatalf("whoami = %v", who)
	}
	var started map[string]any
	if res := callJSON(t, cs, "connect", map[string]any{"integration": "nope"}, &started); !res.IsError || !strings.Contains(fmt.Sprint(started), "UNKNOWN_INTEGRATION") {
		t.Fatalf("connect(nope) = %+v %v", res, started)
	}
	for _, bad := range []string{aliceToken, token + "x", "wb_" + strings.Repeat("A", 43)} {
		resp, _ := post(t, rs.mcpURL, map[string]string{"Authorization": "Bearer " + bad}, initialize)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", bad, resp.StatusCode)
		}
	}
}

func resourcesOf(r *sdk.ListResourcesResult) []*sdk.Resource {
	if r == nil {
		return nil
	}
	return r.Resources
}
