package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/accounts"
)

// TestServer_StoreOutage takes the store away under a running server: a
// token checked moments before keeps working for calls that need nothing
// else from the store, and everything that needs the store is answered 503
// with Retry-After, never 500.
func TestServer_StoreOutage(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	ctx := context.Background()
	alice := w.addUser(t, "alice@example.com")
	_, known, err := accounts.CreateToken(ctx, w.srv.store, alice.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	_, unchecked, err := accounts.CreateToken(ctx, w.srv.store, alice.ID, "other")
	if err != nil {
		t.Fatal(err)
	}
	whoami := func(token string) (int, http.Header, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		return send(t, http.MethodPost, w.base+"/mcp", body, map[string]string{"Authorization": "Bearer " + token,
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami",
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	}
	if status, _, body := whoami(known); status != 200 || !strings.Contains(body, alice.ID) {
		t.Fatalf("before the outage: %d %s", status, body)
	}
	apiStatus, _, _ := send(t, http.MethodGet, w.base+"/api/whoami", "", map[string]string{"Authorization": "Bearer " + known})
	if apiStatus != 200 {
		t.Fatalf("/api before the outage: %d", apiStatus)
	}

	b := newBrowser(t, w.base)
	signInForm := b.get("/login") // the form needs no store

	if err := w.srv.store.Close(); err != nil { // the outage
		t.Fatal(err)
	}
	if status, _, body := whoami(known); status != 200 || !strings.Contains(body, alice.ID) {
		t.Fatalf("a checked token during the outage: %d %s", status, body)
	}
	tests := []struct {
		name, method, target, body string
		headers                    map[string]string
		wantInBody                 string
	}{
		{"/mcp with a token not checked yet", http.MethodPost, w.base + "/mcp",
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
			map[string]string{"Authorization": "Bearer " + unchecked, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, "retry"},
		{"/api with a token not checked yet", http.MethodGet, w.base + "/api/whoami", "",
			map[string]string{"Authorization": "Bearer " + unchecked}, `"code":"UNAVAILABLE"`},
		{"/readyz", http.MethodGet, w.base + "/readyz", "", nil, "not ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header, body := send(t, tt.method, tt.target, tt.body, tt.headers)
			if status != http.StatusServiceUnavailable || !strings.Contains(body, tt.wantInBody) {
				t.Fatalf("status %d, want 503: %s", status, body)
			}
			if tt.target != w.base+"/readyz" && header.Get("Retry-After") == "" {
				t.Fatalf("503 without Retry-After: %v", header)
			}
		})
	}
	if p := b.post("/login", url.Values{"csrf": {formToken(t, signInForm)}, "email": {"alice@example.com"}, "password": {"guess"}}); p.status != http.StatusServiceUnavailable ||
		!strings.Contains(p.body, "cannot reach its database") {
		t.Fatalf("portal sign-in during the outage: %d %s", p.status, p.body)
	}
	var health struct{ Status string }
	status, _, body := send(t, http.MethodGet, w.base+"/healthz", "", nil)
	if err := json.Unmarshal([]byte(body), &health); err != nil || status != 200 || health.Status != "ok" {
		t.Fatalf("/healthz during the outage: %d %s", status, body)
	}
}

func send(t *testing.T, method, target, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header, string(b)
}
