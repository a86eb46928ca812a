package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// newEraMeta is the per-request _meta a 2026-07-28 request carries.
const newEraMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestEndpoint_SpecErrors covers the protocol failures the Tests
// section lists, in both eras, beyond TestEndpoint_ProtocolErrors: every
// malformed request is an HTTP 400 (the streamable HTTP transport's answer
// to input it cannot accept), JSON-RPC batches are refused, bad parameters
// and bad cursors are -32602 (carried by a 200 in a session, by a 400 in
// the stateless era, which maps errors to statuses), and a meta-tool's
// bad cursor or bad
// arguments are a tool result with isError and INVALID_ARGUMENTS, not a
// protocol error.
func TestEndpoint_SpecErrors(t *testing.T) {
	e := start(t, mcp.Options{})
	id := session(t, e)
	legacy := map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": legacyEra}
	stateless := func(method string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Protocol-Version": newEra, "Mcp-Method": method}
	}
	tests := []struct {
		name       string
		header     map[string]string
		body       string
		wantStatus int
		wantInBody []string
	}{
		{"empty body", legacy, ``, 400, []string{"non-empty body"}},
		{"truncated JSON, stateless", stateless("tools/list"), `{"jsonrpc":"2.0","id":2,"method":`, 400, nil},
		{"JSON-RPC 1.0", legacy, `{"jsonrpc":"1.0","id":2,"method":"tools/list"}`, 400, []string{`"2.0"`}},
		{"JSON-RPC 1.0, stateless", stateless("tools/list"), `{"jsonrpc":"1.0","id":2,"method":"tools/list","params":{` + newEraMeta + `}}`, 400, nil},
		{"object id", legacy, `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, 400, []string{"ID"}},
		{"batch", legacy, `[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, 400, []string{"batching is not supported"}},
		{"batch, stateless", stateless("tools/list"), `[{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + newEraMeta + `}}]`, 400, []string{"batching is not supported"}},
		{"params not an object", legacy, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}`, 200, []string{`"code":-32602`}},
		{"bad resources/list cursor", legacy, `{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"cursor":"%%%"}}`, 200, []string{`"id":4`, `"code":-32602`}},
		{"bad tools/list cursor, stateless", stateless("tools/list"), `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"%%%",` + newEraMeta + `}}`, 400, []string{`"id":5`, `"code":-32602`}},
		{"bad resources/list cursor, stateless", stateless("resources/list"), `{"jsonrpc":"2.0","id":6,"method":"resources/list","params":{"cursor":"bm90IGEgY3Vyc29y",` + newEraMeta + `}}`, 400, []string{`"id":6`, `"code":-32602`}},
		{"bad search_tools cursor", legacy, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"echo","cursor":"%%%"}}}`, 200,
			[]string{`"isError":true`, `INVALID_ARGUMENTS`, `cursor`}},
		{"argument of the wrong type", legacy, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_tool_schema","arguments":{"tool":5}}}`, 200,
			[]string{`"isError":true`, `INVALID_ARGUMENTS`, `tool`}},
		{"unknown method, stateless", stateless("tools/frobnicate"), `{"jsonrpc":"2.0","id":9,"method":"tools/frobnicate","params":{` + newEraMeta + `}}`, 404, []string{`"code":-32601`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, e.url, tt.header, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, truncated(body), tt.wantStatus)
			}
			for _, want := range tt.wantInBody {
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("body %s lacks %s", truncated(body), want)
				}
			}
		})
	}
}

// TestEndpoint_BadTokens: every malformed or unknown credential is 401 with
// the challenge that leads an OAuth client to the resource metadata, in
// both eras, and nothing about the token is echoed back.
func TestEndpoint_BadTokens(t *testing.T) {
	e := start(t, mcp.Options{})
	metadata := `resource_metadata="https://wb.example.com/.well-known/oauth-protected-resource"`
	secret := "tok-secret-looking-value"
	tests := []struct {
		name, authorization string
		invalidToken        bool // the challenge carries error="invalid_token"
	}{
		{"empty bearer", "Bearer ", false}, // the header arrives trimmed to "Bearer": no token
		{"lower-case scheme with unknown token", "bearer " + secret, true},
		{"two tokens", "Bearer " + aliceToken + " " + aliceToken, true},
		{"token in basic", "Basic " + aliceToken, false},
		{"unknown token", "Bearer " + secret, true},
		{"token with a newline escape", "Bearer " + aliceToken + "%0a", true},
	}
	for _, era := range []string{legacyEra, newEra} {
		for _, tt := range tests {
			t.Run(era+"/"+tt.name, func(t *testing.T) {
				resp, body := post(t, e.url, map[string]string{"Authorization": tt.authorization, "Mcp-Protocol-Version": era}, initialize)
				ch := resp.Header.Get("WWW-Authenticate")
				if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, metadata) ||
					strings.Contains(ch, `error="invalid_token"`) != tt.invalidToken {
					t.Errorf("status %d, WWW-Authenticate %q", resp.StatusCode, ch)
				}
				if bytes.Contains(body, []byte(secret)) {
					t.Errorf("the answer echoes the token: %s", body)
				}
			})
		}
	}
}

// TestEndpoint_OversizedBodyStateless: a body announced over MaxBodyBytes
// is 413 in the stateless era too, before the server reads it.
func TestEndpoint_OversizedBodyStateless(t *testing.T) {
	e := start(t, mcp.Options{})
	u, _ := url.Parse(e.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: search_tools\r\n"+
		"Content-Length: %d\r\n\r\n{", u.Host, aliceToken, newEra, mcp.MaxBodyBytes+1)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 413") {
		t.Errorf("status line %q, %v; want 413", status, err)
	}
}

// FuzzEndpoint_Request feeds arbitrary bodies and method headers to the
// endpoint's request decoder in the stateless era (each request stands
// alone, so the fuzzer builds no sessions). Whatever arrives, the answer
// is never a 5xx and never a panic, and a JSON answer is a JSON-RPC 2.0
// message.
func FuzzEndpoint_Request(f *testing.F) {
	echo := mcptest.Manifest("demo", manifest.ModeNone,
		mcptest.Tool("demo_echo", "Echo", "Returns its input.", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`))
	source := mcptest.NewSource(registry.Native(echo, mcptest.NewFuncs(map[string]mcptest.ToolFunc{"demo_echo": mcptest.Echo})))
	tokens := mcptest.NewTokens(failure.ErrUnauthenticated)
	tokens.Add(aliceToken, alice)
	ep, err := mcp.New(mcp.Options{Catalog: source, Authenticator: tokens, PublicURL: "https://wb.example.com",
		Connections: mcptest.NewConnections("https://wb.test")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ep.Close(ctx)
	})
	for _, seed := range []struct{ method, body string }{
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + newEraMeta + `}}`},
		{"tools/call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"echo"},` + newEraMeta + `}}`},
		{"tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_tools","arguments":{"executions":[{"tool":"demo_echo","arguments":{"message":"hi"}}]},` + newEraMeta + `}}`},
		{"resources/read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"workbench://tool/demo_echo",` + newEraMeta + `}}`},
		{"server/discover", `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{` + newEraMeta + `}}`},
		{"tools/list", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`},
		{"", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{"tools/list", "\x00\xff{"},
	} {
		f.Add(seed.method, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, method string, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", newEra)
		if method != "" && !strings.ContainsAny(method, "\r\n\x00") {
			req.Header.Set("Mcp-Method", method)
		}
		rec := httptest.NewRecorder()
		ep.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Body.Len() > 0 {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("a JSON answer that is not JSON-RPC 2.0 for %q: %s", body, rec.Body.String())
			}
		}
	})
}
