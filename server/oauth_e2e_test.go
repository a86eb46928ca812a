package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/portal"
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

	// A wrong verifier is refused without spending the code: the right one
	// still works, once; replaying it revokes what it was exchanged for.
	code := authorize(verifier, resource)
	if st, out := exchange(code, strings.Repeat("w", 50)); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier = %d %v", st, out)
	}
	st, tok := exchange(code, verifier)
	access, _ := tok["access_token"].(string)
	if st != http.StatusOK || access == "" || tok["token_type"] != "Bearer" || tok["scope"] != "mcp" {
		t.Fatalf("exchange = %d %v", st, tok)
	}
	if !mcpOK(t, client, base, access) {
		t.Fatal("/mcp refused the OAuth access token")
	}
	if st, out := exchange(code, verifier); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("replayed code = %d %v", st, out)
	}
	if mcpOK(t, client, base, access) {
		t.Fatal("/mcp accepted the access token of a replayed code")
	}

	code = authorize(verifier, resource)
	st, tok = exchange(code, verifier)
	access, _ = tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if st != http.StatusOK || access == "" || refresh == "" {
		t.Fatalf("exchange = %d %v", st, tok)
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
	// Replaying the rotated refresh token revokes the whole grant: the
	// access token and refresh token the rotation issued stop working.
	if st, out := post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}}); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("old refresh token = %d %v", st, out)
	}
	if mcpOK(t, client, base, newAccess) {
		t.Fatal("/mcp accepted an access token of a grant revoked by a refresh token replay")
	}
	if st, out := post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {clientID}}); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("refresh token of a revoked grant = %d %v", st, out)
	}
}

// TestOAuthServer_insufficientScope: a token granted only offline_access is
// a valid token without the "mcp" scope /mcp needs: 403 with a challenge
// naming the scope, while an "mcp" token and an API token pass.
func TestOAuthServer_insufficientScope(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	ann := w.addUser(t, "ann@example.com")
	client := &http.Client{Timeout: 15 * time.Second}
	b := newBrowserSignedIn(t, w, "ann@example.com")
	clientID := registerClient(t, client, w.base, "http://127.0.0.1:9/cb")
	tokenFor := func(scope string) map[string]any {
		t.Helper()
		verifier := strings.Repeat("s", 43)
		sum := sha256.Sum256([]byte(verifier))
		q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "scope": {scope},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {w.base + "/mcp"}}
		p := b.get("/oauth/authorize?" + q.Encode())
		form := url.Values{"csrf": {formToken(t, p)}, "decision": {"allow"}}
		for k, v := range q {
			form[k] = v
		}
		loc, err := url.Parse(b.post("/oauth/authorize", form).location)
		if err != nil || loc.Query().Get("code") == "" {
			t.Fatalf("consent for scope %q: %v %v", scope, loc, err)
		}
		resp, err := client.PostForm(w.base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
			"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {clientID}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("token for scope %q = %d %v %v", scope, resp.StatusCode, out, err)
		}
		return out
	}
	offline := tokenFor("offline_access")
	if offline["scope"] != "offline_access" {
		t.Fatalf("granted %v", offline["scope"])
	}
	full := tokenFor("mcp offline_access")
	_, apiToken, err := accounts.CreateToken(context.Background(), w.srv.store, ann.ID, "scope test")
	if err != nil {
		t.Fatal(err)
	}
	metadata := fmt.Sprintf("resource_metadata=%q", w.base+"/.well-known/oauth-protected-resource")
	tests := []struct {
		name, token string
		status      int
		challenge   []string
	}{
		{"without the mcp scope", offline["access_token"].(string), http.StatusForbidden, []string{`error="insufficient_scope"`, metadata, `scope="mcp"`}},
		{"with the mcp scope", full["access_token"].(string), http.StatusOK, nil},
		{"API token", apiToken, http.StatusOK, nil},
		{"unknown token", "not-a-token", http.StatusUnauthorized, []string{`error="invalid_token"`, metadata, `scope="mcp"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, challenge := mcpStatus(t, client, w.base, tt.token)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			for _, c := range tt.challenge {
				if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, c) {
					t.Errorf("WWW-Authenticate %q lacks %s", challenge, c)
				}
			}
		})
	}
}

// registerClient registers a public client and returns its id.
func registerClient(t *testing.T, client *http.Client, base, redirectURI string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Test Agent", "redirect_uris": []string{redirectURI}})
	resp, err := client.Post(base+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	id, _ := reg["client_id"].(string)
	if resp.StatusCode != http.StatusCreated || id == "" {
		t.Fatalf("register = %d %v", resp.StatusCode, reg)
	}
	return id
}

// mcpStatus sends a raw initialize POST to /mcp with token and returns the
// status and the WWW-Authenticate challenge.
func mcpStatus(t *testing.T, client *http.Client, base, token string) (int, string) {
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
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// mcpOK reports whether a raw initialize POST to /mcp with token answers 200.
func mcpOK(t *testing.T, client *http.Client, base, token string) bool {
	t.Helper()
	status, _ := mcpStatus(t, client, base, token)
	return status == http.StatusOK
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
	if fmt.Sprint(as["scopes_supported"]) != "[mcp offline_access]" || as["client_id_metadata_document_supported"] != true {
		t.Errorf("scopes_supported = %v, client_id_metadata_document_supported = %v", as["scopes_supported"], as["client_id_metadata_document_supported"])
	}
	if fmt.Sprint(pr["scopes_supported"]) != "[mcp]" {
		t.Errorf("protected resource scopes_supported = %v", pr["scopes_supported"])
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

// TestOAuthServer_clientMetadataDocument: a client whose client_id is the
// URL of its metadata document (served here on loopback, which
// EGRESS_ALLOW_PRIVATE admits) goes through consent and the code exchange
// and uses /mcp, without registering.
func TestOAuthServer_clientMetadataDocument(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir(), EgressAllowPrivate: true})
	w.addUser(t, "ann@example.com")
	docs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent.json" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"client_id":"http://%s/agent.json","client_name":"Documented Agent","redirect_uris":["http://127.0.0.1:9/cb"]}`, r.Host)
	}))
	defer docs.Close()
	clientID := docs.URL + "/agent.json"
	client := &http.Client{Timeout: 15 * time.Second}
	b := newBrowserSignedIn(t, w, "ann@example.com")

	verifier := strings.Repeat("d", 43)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {w.base + "/mcp"}}
	p := b.get("/oauth/authorize?" + q.Encode())
	wantPage(t, "consent", p, http.StatusOK, "Documented Agent", clientID)
	form := url.Values{"csrf": {formToken(t, p)}, "decision": {"allow"}}
	for k, v := range q {
		form[k] = v
	}
	loc, err := url.Parse(b.post("/oauth/authorize", form).location)
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent = %v %v", loc, err)
	}
	resp, err := client.PostForm(w.base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {clientID}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token = %d %v %v", resp.StatusCode, tok, err)
	}
	if access, _ := tok["access_token"].(string); !mcpOK(t, client, w.base, access) {
		t.Fatal("/mcp refused the access token of a metadata-document client")
	}

	// A redirect URI the document does not list is refused outright.
	q.Set("redirect_uri", "http://127.0.0.1:9/other")
	if p := b.get("/oauth/authorize?" + q.Encode()); p.status != http.StatusBadRequest || p.location != "" {
		t.Errorf("unlisted redirect_uri = %d %q", p.status, p.location)
	}
}

// TestOAuthServer_TypeScriptClient runs tools/conformance/oauth-interop.mjs:
// the TypeScript SDK's OAuth client support discovers the authorization
// server from /mcp's 401, registers, sends the user to consent (the script
// allows it with the portal session signed in here), exchanges the code,
// lists the tools, and refreshes when its access token stops working.
func TestOAuthServer_TypeScriptClient(t *testing.T) {
	node, err := filepath.Abs("../tools/conformance/node_modules/.bin/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node 22 is not installed under tools/conformance: run `make test` or tools/test-deps.sh (%v)", err)
	}
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	w.addUser(t, "ann@example.com")
	b := newBrowserSignedIn(t, w, "ann@example.com")
	base, _ := url.Parse(w.base)
	var cookie string
	for _, c := range b.jar.Cookies(base) {
		if c.Name == serviceOf[*portal.Portal](t, w.srv).SessionCookieName() {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatal("the signed-in browser has no session cookie")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oauth-interop.mjs")
	cmd.Dir = "../tools/conformance"
	cmd.Env = append(os.Environ(), "MCP_URL="+w.base+"/mcp", "PORTAL_COOKIE="+cookie)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oauth-interop.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var report struct {
		ConsentStatus         int      `json:"consentStatus"`
		ClientID              string   `json:"clientId"`
		AuthorizationScope    string   `json:"authorizationScope"`
		AuthorizationResource string   `json:"authorizationResource"`
		Redirects             []string `json:"redirects"`
		Iss                   string   `json:"iss"`
		GrantedScope          string   `json:"grantedScope"`
		Tools                 []string `json:"tools"`
		Whoami                struct {
			Email  string   `json:"email"`
			Scopes []string `json:"scopes"`
		} `json:"whoami"`
		ToolsAfterRefresh int  `json:"toolsAfterRefresh"`
		RefreshRotated    bool `json:"refreshRotated"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("report %s: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	if report.ConsentStatus != http.StatusOK || !strings.HasPrefix(report.ClientID, "oac_") || report.AuthorizationScope != "mcp" ||
		report.AuthorizationResource != w.base+"/mcp" || len(report.Redirects) != 1 || report.Redirects[0] != "http://127.0.0.1:9/callback" ||
		report.Iss != w.base || report.GrantedScope != "mcp" || len(report.Tools) != 9 || !slices.Contains(report.Tools, "execute_tools") ||
		report.Whoami.Email != "ann@example.com" || !slices.Equal(report.Whoami.Scopes, []string{"mcp"}) ||
		report.ToolsAfterRefresh != 9 || !report.RefreshRotated {
		t.Errorf("TypeScript OAuth client report = %+v\nstderr: %s", report, stderr.String())
	}
}
