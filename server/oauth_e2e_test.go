package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOAuthServer_flow drives registration, sign-in, consent, the code
// exchange, /mcp with the access token and refresh rotation over HTTP.
func TestOAuthServer_flow(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	w.addUser(t, "ann@example.com")
	base := w.base
	client := &http.Client{Timeout: 15 * time.Second}
	post := func(path string, form url.Values) (int, map[string]any) {
		t.Helper()
		resp, err := client.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	resp, err := client.Post(base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Test Agent","redirect_uris":["http://127.0.0.1:9/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	clientID, _ := reg["client_id"].(string)
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(clientID, "oac_") {
		t.Fatalf("register = %d %v", resp.StatusCode, reg)
	}

	resource := base + "/mcp"
	authorize := func(verifier, res string) string {
		t.Helper()
		sum := sha256.Sum256([]byte(verifier))
		q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "state": {"st1"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {res}}
		b := newBrowser(t, base)
		p := b.open("/oauth/authorize?" + q.Encode())
		p = b.signIn(p, "ann@example.com")
		if p.status != http.StatusOK || !strings.Contains(p.body, "Test Agent") || !strings.Contains(p.body, resource) {
			t.Fatalf("consent page = %d %s\n%s", p.status, p.url, p.body)
		}
		form := url.Values{"csrf": {formToken(t, p)}, "decision": {"allow"}}
		for k, v := range q {
			form[k] = v
		}
		bad := b.post("/oauth/authorize", url.Values{"csrf": {"forged"}, "decision": {"allow"}, "client_id": {clientID}})
		if bad.status != http.StatusForbidden {
			t.Fatalf("consent with a forged CSRF token = %d", bad.status)
		}
		r := b.post("/oauth/authorize", form)
		loc, err := url.Parse(r.location)
		if r.status != http.StatusFound || err != nil || loc.Query().Get("state") != "st1" || loc.Query().Get("code") == "" {
			t.Fatalf("consent = %d %q", r.status, r.location)
		}
		return loc.Query().Get("code")
	}
	verifier := strings.Repeat("v", 50)
	exchange := func(code, v string) (int, map[string]any) {
		return post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {v},
			"redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {clientID}, "resource": {resource}})
	}

	// A wrong verifier spends the code.
	code := authorize(verifier, resource)
	if st, out := exchange(code, strings.Repeat("w", 50)); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier = %d %v", st, out)
	}
	if st, out := exchange(code, verifier); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("code after a failed try = %d %v", st, out)
	}

	code = authorize(verifier, resource)
	st, tok := exchange(code, verifier)
	access, _ := tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if st != http.StatusOK || access == "" || refresh == "" || tok["token_type"] != "Bearer" {
		t.Fatalf("exchange = %d %v", st, tok)
	}
	if st, out := exchange(code, verifier); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("replayed code = %d %v", st, out)
	}
	if !mcpOK(t, client, base, access) {
		t.Fatal("/mcp refused the OAuth access token")
	}
	if mcpOK(t, client, base, refresh) {
		t.Fatal("/mcp accepted a refresh token")
	}

	// A resource other than /mcp is refused at the token endpoint.
	if st, out := post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID},
		"resource": {base + "/other"}}); st != http.StatusBadRequest || out["error"] != "invalid_target" {
		t.Fatalf("wrong resource = %d %v", st, out)
	}

	// Refresh rotates: the new pair works, the old refresh token does not.
	st, next := post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	newAccess, _ := next["access_token"].(string)
	if st != http.StatusOK || newAccess == "" || next["refresh_token"] == refresh {
		t.Fatalf("refresh = %d %v", st, next)
	}
	if !mcpOK(t, client, base, newAccess) {
		t.Fatal("/mcp refused the refreshed access token")
	}
	if st, out := post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}}); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("old refresh token = %d %v", st, out)
	}
}

// mcpOK reports whether a raw initialize POST to /mcp with token answers 200.
func mcpOK(t *testing.T, client *http.Client, base, token string) bool {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestOAuthServer_metadataAndRegistration checks the two discovery documents
// an MCP client reads first and the redirect URIs registration refuses.
func TestOAuthServer_metadataAndRegistration(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	client := &http.Client{Timeout: 15 * time.Second}
	get := func(path string) map[string]any {
		t.Helper()
		resp, err := client.Get(w.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
			t.Fatalf("%s = %d", path, resp.StatusCode)
		}
		return out
	}
	pr := get("/.well-known/oauth-protected-resource")
	if pr["resource"] != w.base+"/mcp" || fmt.Sprint(pr["authorization_servers"]) != "["+w.base+"]" {
		t.Errorf("protected resource metadata = %v", pr)
	}
	as := get("/.well-known/oauth-authorization-server")
	want := map[string]string{
		"issuer":                 w.base,
		"authorization_endpoint": w.base + "/oauth/authorize",
		"token_endpoint":         w.base + "/oauth/token",
		"registration_endpoint":  w.base + "/oauth/register",
	}
	for k, v := range want {
		if as[k] != v {
			t.Errorf("%s = %v, want %s", k, as[k], v)
		}
	}
	if fmt.Sprint(as["code_challenge_methods_supported"]) != "[S256]" {
		t.Errorf("code_challenge_methods_supported = %v", as["code_challenge_methods_supported"])
	}

	for _, uri := range []string{"http://example.com/cb", "https://example.com/cb#frag", "javascript:alert(1)", "not a url", ""} {
		body, _ := json.Marshal(map[string]any{"client_name": "x", "redirect_uris": []string{uri}})
		resp, err := client.Post(w.base+"/oauth/register", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" && out["error"] != "invalid_client_metadata" {
			t.Errorf("redirect_uri %q: %d %v", uri, resp.StatusCode, out)
		}
	}
}
