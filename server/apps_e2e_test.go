package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startEverything runs the reference MCP server (npm
// @modelcontextprotocol/server-everything, installed in tools/everything by
// tools/test-deps.sh) in streamable-HTTP mode on loopback and returns its
// MCP endpoint.
func startEverything(t *testing.T) string {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("..", "tools", "everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("server-everything is not installed (run tools/test-deps.sh): %v", err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	out := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting server-everything: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s within 60s:\n%s", addr, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metaTool runs a meta-tool other than execute_tools and decodes its JSON.
func (a *jotsAgent) metaTool(name string, args map[string]any, out any) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		a.t.Fatalf("%s: %v %v", name, err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if err := json.Unmarshal([]byte(text), out); err != nil {
		a.t.Fatalf("%s: %s: %v", name, text, err)
	}
}

// TestCustomApps_Everything: a user adds server-everything as a custom app
// (as `workbench app add` does) and calls its tools through execute_tools;
// another user neither sees nor calls it.
func TestCustomApps_Everything(t *testing.T) {
	endpoint := startEverything(t)
	cfg := Config{DataDir: t.TempDir(), EgressAllowPrivate: true}
	w := startWorkbench(t, cfg)
	alice := newJotsAgent(t, w, "alice@example.com")
	bob := newJotsAgent(t, w, "bob@example.com")

	admin, err := OpenAdmin(context.Background(), w.srv.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.AddApp(context.Background(), "alice@example.com", NewApp{Name: "everything", URL: endpoint}); err != nil {
		t.Fatal(err)
	}

	type integrations struct {
		Integrations []struct {
			Name      string `json:"name"`
			Custom    bool   `json:"custom"`
			ToolCount int    `json:"toolCount"`
		} `json:"integrations"`
	}
	customOf := func(a *jotsAgent) map[string]int {
		var out integrations
		a.metaTool("list_integrations", map[string]any{}, &out)
		found := map[string]int{}
		for _, in := range out.Integrations {
			if in.Custom {
				found[in.Name] = in.ToolCount
			}
		}
		return found
	}
	if got := customOf(alice); got["everything"] < 3 {
		t.Fatalf("alice's custom integrations = %v, want everything with its tools", got)
	}
	if got := customOf(bob); len(got) != 0 {
		t.Fatalf("bob sees custom integrations %v", got)
	}
	var hits struct {
		Hits []struct{ Slug string } `json:"hits"`
	}
	alice.metaTool("search_tools", map[string]any{"query": "echo", "integration": "everything"}, &hits)
	if len(hits.Hits) == 0 || !strings.HasPrefix(hits.Hits[0].Slug, "everything__") {
		t.Fatalf("alice's search = %+v", hits.Hits)
	}

	tests := []struct {
		name       string
		agent      *jotsAgent
		tool       string
		args       map[string]any
		wantText   string // in the result's content
		wantCode   string
		wantReason string
	}{
		{"echo", alice, "everything__echo", map[string]any{"message": "hello from workbench"}, "hello from workbench", "", ""},
		{"get-sum", alice, "everything__get-sum", map[string]any{"a": 2, "b": 3}, "5", "", ""},
		{"a tool it does not have", alice, "everything__no-such-tool", map[string]any{}, "", "TOOL_ERROR", "APP_TOOL_GONE"},
		{"bob cannot call it", bob, "everything__echo", map[string]any{"message": "x"}, "", "UNKNOWN_TOOL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, fail := tt.agent.exec(tt.tool, tt.args)
			if tt.wantCode == "" {
				if fail != nil || !strings.Contains(fmt.Sprint(res["content"]), tt.wantText) {
					t.Fatalf("result %v, error %v; want content with %q", res, fail, tt.wantText)
				}
				return
			}
			if fail == nil || fail["code"] != tt.wantCode || (tt.wantReason != "" && fail["reason"] != tt.wantReason) {
				t.Fatalf("error %v, want %s/%s", fail, tt.wantCode, tt.wantReason)
			}
		})
	}
	// The app's own validation answers bad arguments: a failure, not a result.
	if _, fail := alice.exec("everything__get-sum", map[string]any{"a": "two"}); fail == nil {
		t.Fatal("get-sum with a string argument succeeded")
	}
}
