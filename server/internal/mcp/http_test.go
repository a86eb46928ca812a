package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/mcp"
)

// post sends one JSON-RPC body to the endpoint with the given headers.
func post(t *testing.T, target string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestEndpoint_Authentication(t *testing.T) {
	e := start(t, mcp.Options{PublicURL: "https://wb.example.com", RequiredScopes: []string{"mcp"}})
	e.tokens.Add("tok-noscope", mcp.Principal{UserID: "u-bob"})
	e.tokens.Add("tok-nouser", mcp.Principal{})
	auth := func(token string) map[string]string {
		if token == "" {
			return nil
		}
		return map[string]string{"Authorization": token}
	}
	tests := []struct {
		name       string
		header     map[string]string
		broken     error
		wantStatus int
		wantChall  bool
		wantError  string // the RFC 6750 error code in the challenge
	}{
		{"no token", nil, nil, 401, true, ""},
		{"not bearer", auth("Basic YTpi"), nil, 401, true, ""},
		{"unknown token", auth("Bearer nope"), nil, 401, true, "invalid_token"},
		{"missing scope", auth("Bearer tok-noscope"), nil, 403, true, "insufficient_scope"},
		{"principal without user", auth("Bearer tok-nouser"), nil, 500, false, ""},
		{"store down", auth("Bearer " + aliceToken), errors.New("pq: password authentication failed for hunter2"), 500, false, ""},
		{"valid", auth("Bearer " + aliceToken), nil, 200, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.tokens.Break(tt.broken)
			defer e.tokens.Break(nil)
			resp, body := post(t, e.url, tt.header, initialize)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tt.wantStatus)
			}
			chall := resp.Header.Get("WWW-Authenticate")
			want := `Bearer resource_metadata="https://wb.example.com/.well-known/oauth-protected-resource", scope="mcp"`
			if tt.wantError != "" {
				want = `Bearer error="` + tt.wantError + `", ` + strings.TrimPrefix(want, "Bearer ")
			}
			if tt.wantChall && chall != want {
				t.Errorf("WWW-Authenticate = %q, want %q", chall, want)
			}
			if !tt.wantChall && chall != "" {
				t.Errorf("unexpected WWW-Authenticate %q", chall)
			}
			if bytes.Contains(body, []byte("hunter2")) {
				t.Errorf("body leaks the internal error: %s", body)
			}
		})
	}
}

func TestEndpoint_HostGuard(t *testing.T) {
	e := start(t, mcp.Options{PublicURL: "https://wb.example.com/base"})
	u, _ := url.Parse(e.url)
	bearer := "Bearer " + aliceToken
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"loopback host", map[string]string{"Authorization": bearer}, 200},
		{"localhost", map[string]string{"Authorization": bearer, "Host": "localhost:" + u.Port()}, 200},
		{"public host", map[string]string{"Authorization": bearer, "Host": "WB.example.com"}, 200},
		{"public origin", map[string]string{"Authorization": bearer, "Origin": "https://wb.example.com"}, 200},
		{"loopback origin", map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:6274"}, 200},
		{"rebinding host", map[string]string{"Authorization": bearer, "Host": "evil.example:" + u.Port()}, 403},
		{"rebinding host without token", map[string]string{"Host": "evil.example"}, 403},
		{"foreign origin", map[string]string{"Authorization": bearer, "Origin": "https://evil.example"}, 403},
		{"null origin", map[string]string{"Authorization": bearer, "Origin": "null"}, 403},
		{"origin lookalike", map[string]string{"Authorization": bearer, "Origin": "https://wb.example.com.evil.example"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, e.url, tt.header, initialize)
			if resp.StatusCode != tt.want {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, body, tt.want)
			}
		})
	}
}

// session initializes a 2025-era session over raw HTTP and returns its id.
func session(t *testing.T, e *env) string {
	t.Helper()
	resp, body := post(t, e.url, map[string]string{"Authorization": "Bearer " + aliceToken}, initialize)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, e.url, map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	return id
}

func TestEndpoint_ProtocolErrors(t *testing.T) {
	e := start(t, mcp.Options{})
	id := session(t, e)
	h := map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	newEraHeaders := map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Protocol-Version": newEra}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tests := []struct {
		name       string
		header     map[string]string
		body       string
		wantStatus int
		wantInBody string
	}{
		{"malformed JSON", h, `{"jsonrpc":"2.0","id":2,"method":`, 400, ""},
		{"not JSON-RPC", h, `{"hello":"world"}`, 400, ""},
		{"unknown method", h, `{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate","params":{}}`, 400, ""},
		{"unknown session", map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": "nope", "Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, 404, ""},
		{"bad tools/list cursor", h, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"%%%"}}`, 200, `"code":-32602`},
		{"unknown tool", h, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, 200, `"code":-32602`},
		{"unsupported version", map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Protocol-Version": "1999-01-01"}, initialize, 400, ""},
		{"new era unknown method", newEraHeaders, `{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate","params":{` + meta + `}}`, 404, `"code":-32601`},
		{"new era without _meta", newEraHeaders, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}`, 400, `"code":-32602`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, e.url, tt.header, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, truncated(body), tt.wantStatus)
			}
			if tt.wantInBody != "" && !bytes.Contains(body, []byte(tt.wantInBody)) {
				t.Errorf("body %s lacks %s", truncated(body), tt.wantInBody)
			}
		})
	}
}

func TestEndpoint_OversizedBody(t *testing.T) {
	e := start(t, mcp.Options{})
	u, _ := url.Parse(e.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", u.Host, aliceToken, mcp.MaxBodyBytes+1)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 413") {
		t.Errorf("status line %q, %v; want 413", status, err)
	}
}

func truncated(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// TestEndpoint_CancelOnDisconnect: in the 2026-07-28 era a request is the
// whole life of a call, so a client that goes away cancels it. The call is
// a meta-tool execution of a tool that blocks until its context ends.
func TestEndpoint_CancelOnDisconnect(t *testing.T) {
	e := start(t, mcp.Options{})
	u, _ := url.Parse(e.url)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tools","arguments":{"executions":[{"tool":"demo_block"}]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: execute_tools\r\n"+
		"Content-Length: %d\r\n\r\n%s", u.Host, aliceToken, newEra, len(body), body)
	select {
	case <-e.blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start")
	}
	select {
	case cause := <-e.canceled:
		t.Fatalf("the call ended before the client left: %v", cause)
	case <-time.After(200 * time.Millisecond):
	}
	left := time.Now()
	conn.Close()
	select {
	case cause := <-e.canceled:
		if cause == nil {
			t.Error("canceled without a cause")
		}
		if d := time.Since(left); d > 2*time.Second {
			t.Errorf("the call ran %v after its client left", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call kept running after its client disconnected")
	}
}

// TestEndpoint_LegacyCallSurvivesStreamLoss: in the 2025-11-25 era a broken
// response stream is not a cancellation (clients resume or send
// notifications/cancelled), so the call keeps running.
func TestEndpoint_LegacyCallSurvivesStreamLoss(t *testing.T) {
	e := start(t, mcp.Options{})
	id := session(t, e)
	u, _ := url.Parse(e.url)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_tools","arguments":{"executions":[{"tool":"demo_block"}]}}}`
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: %s\r\n"+
		"Content-Length: %d\r\n\r\n%s", u.Host, aliceToken, id, len(body), body)
	select {
	case <-e.blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start")
	}
	conn.Close()
	select {
	case cause := <-e.canceled:
		t.Fatalf("a 2025-era call was canceled by a lost stream: %v", cause)
	case <-time.After(500 * time.Millisecond):
	}
	// notifications/cancelled does cancel it.
	resp, b := post(t, e.url, map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user stopped"}}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancelled: %d %s", resp.StatusCode, b)
	}
	select {
	case <-e.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not cancel the call")
	}
}

func TestEndpoint_SessionBelongsToItsUser(t *testing.T) {
	e := start(t, mcp.Options{})
	e.tokens.Add("tok-mallory", mcp.Principal{UserID: "u-mallory"})
	id := session(t, e)
	resp, body := post(t, e.url, map[string]string{"Authorization": "Bearer tok-mallory", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another user's session: %d %s, want 403", resp.StatusCode, body)
	}
}

func TestEndpoint_Close(t *testing.T) {
	e := start(t, mcp.Options{})
	id := session(t, e)
	if err := e.ep.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, _ := post(t, e.url, map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("session after Close: %d, want 404", resp.StatusCode)
	}
}

// TestEndpoint_SessionBounds: the bounds see the 2025-era sessions made over
// HTTP. Past the total, initialize is answered with an error naming the
// bound and leaves no session; stateless-era requests are not sessions and
// still work.
func TestEndpoint_SessionBounds(t *testing.T) {
	e := start(t, mcp.Options{SessionsPerUser: 1, MaxSessions: 2})
	e.tokens.Add("tok-bob", mcp.Principal{UserID: "bob"})
	e.tokens.Add("tok-carol", mcp.Principal{UserID: "carol"})
	initAs := func(token string) (*http.Response, []byte) {
		return post(t, e.url, map[string]string{"Authorization": "Bearer " + token}, initialize)
	}
	for _, token := range []string{aliceToken, aliceToken, "tok-bob"} {
		if resp, body := initAs(token); resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize as %s: %d %s", token, resp.StatusCode, body)
		}
	}
	resp, body := initAs("tok-carol")
	if !strings.Contains(string(body), "the server holds 2 sessions, its limit") {
		t.Fatalf("initialize past the total: %d %s", resp.StatusCode, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		r, _ := post(t, e.url, map[string]string{"Authorization": "Bearer tok-carol", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("the refused session answers: %d", r.StatusCode)
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	resp, body = post(t, e.url, map[string]string{"Authorization": "Bearer tok-carol", "Mcp-Protocol-Version": newEra, "Mcp-Method": "tools/list"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "execute_tools") {
		t.Errorf("stateless request past the session total: %d %s", resp.StatusCode, body)
	}
}
