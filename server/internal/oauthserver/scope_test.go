package oauthserver

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestGrantScope(t *testing.T) {
	tests := []struct {
		requested, want string
		wantErr         bool
	}{
		{"", "mcp", false},
		{"   ", "mcp", false},
		{"mcp", "mcp", false},
		{"offline_access mcp mcp", "mcp offline_access", false},
		{"offline_access", "offline_access", false},
		{"mcp admin", "", true},
		{"MCP", "", true},
	}
	for _, tt := range tests {
		got, err := grantScope(tt.requested)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("grantScope(%q) = %q, %v; want %q (error %v)", tt.requested, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNarrowScope(t *testing.T) {
	tests := []struct {
		requested, granted, want string
		wantErr                  bool
	}{
		{"", "mcp offline_access", "mcp offline_access", false},
		{"mcp", "mcp offline_access", "mcp", false},
		{"offline_access", "mcp", "", true},
		{"mcp admin", "mcp", "", true},
	}
	for _, tt := range tests {
		got, err := narrowScope(tt.requested, tt.granted)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("narrowScope(%q, %q) = %q, %v; want %q (error %v)", tt.requested, tt.granted, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestServer_Scopes checks that the granted scope travels from the
// authorization request to the code, the tokens and a refresh, which may
// narrow it but never widen it, and that an unknown scope is refused
// through the redirect URI.
func TestServer_Scopes(t *testing.T) {
	f := newFixture(t, false)
	cl := f.register(t)
	verifier := strings.Repeat("b", 43)

	q := authQuery(cl, verifier, "nonsense mcp")
	status, loc, _ := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
	if u, _ := url.Parse(loc); status != http.StatusFound || u.Query().Get("error") != "invalid_scope" || u.Query().Get("state") != "s1" {
		t.Errorf("unknown scope = %d %q", status, loc)
	}

	q = authQuery(cl, verifier, "offline_access mcp")
	if _, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil); !strings.Contains(body, "<code>offline_access</code>") {
		t.Errorf("the consent page does not list the scopes:\n%s", body)
	}
	code := f.approve(t, q)
	st, tok := f.tokens(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {cl}})
	if st != http.StatusOK || tok["scope"] != "mcp offline_access" {
		t.Fatalf("token = %d %v", st, tok)
	}
	refresh := tok["refresh_token"].(string)
	st, out := f.tokens(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {cl}, "scope": {"mcp"}})
	if st != http.StatusOK || out["scope"] != "mcp" {
		t.Fatalf("narrowing refresh = %d %v", st, out)
	}
	at, err := f.srv.Authenticate(t.Context(), out["access_token"].(string))
	if err != nil || strings.Join(ScopesOf(at), " ") != "mcp" {
		t.Fatalf("narrowed access token = %+v, %v", at, err)
	}
	st, out = f.tokens(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {out["refresh_token"].(string)}, "client_id": {cl},
		"scope": {"mcp offline_access"}})
	if st != http.StatusBadRequest || out["error"] != "invalid_scope" {
		t.Errorf("widening refresh = %d %v", st, out)
	}
}

// TestServer_RefreshReuse: replaying a rotated refresh token revokes every
// token of the grant, the live ones included.
func TestServer_RefreshReuse(t *testing.T) {
	f := newFixture(t, false)
	cl := f.register(t)
	verifier := strings.Repeat("c", 43)
	code := f.approve(t, authQuery(cl, verifier, ""))
	_, first := f.tokens(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {cl}})
	refresh := func(token string) (int, map[string]any) {
		return f.tokens(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {cl}})
	}
	st, second := refresh(first["refresh_token"].(string))
	if st != http.StatusOK {
		t.Fatalf("refresh = %d %v", st, second)
	}
	// Another grant of the same user and client must survive.
	otherCode := f.approve(t, authQuery(cl, verifier, ""))
	_, other := f.tokens(t, url.Values{"grant_type": {"authorization_code"}, "code": {otherCode}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {cl}})

	st, out := refresh(first["refresh_token"].(string))
	if st != http.StatusBadRequest || out["error"] != "invalid_grant" || !strings.Contains(out["error_description"].(string), "revoked") {
		t.Fatalf("replay = %d %v", st, out)
	}
	for name, tok := range map[string]string{"first access": first["access_token"].(string), "second access": second["access_token"].(string)} {
		if _, err := f.srv.Authenticate(t.Context(), tok); err == nil {
			t.Errorf("%s still authenticates after the replay", name)
		}
	}
	if st, out := refresh(second["refresh_token"].(string)); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("the live refresh token after the replay = %d %v", st, out)
	}
	if _, err := f.srv.Authenticate(t.Context(), other["access_token"].(string)); err != nil {
		t.Errorf("another grant's token was revoked: %v", err)
	}
	// A replayed code revokes its grant too.
	code = f.approve(t, authQuery(cl, verifier, ""))
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {redirectURI}, "client_id": {cl}}
	_, byCode := f.tokens(t, exchange)
	if st, out := f.tokens(t, exchange); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("replayed code = %d %v", st, out)
	}
	if _, err := f.srv.Authenticate(t.Context(), byCode["access_token"].(string)); err == nil {
		t.Error("the token from a replayed code still authenticates")
	}
}

// register registers a public client with redirectURI and returns its id.
func (f *fixture) register(t *testing.T) string {
	t.Helper()
	req := `{"client_name":"Agent","redirect_uris":["` + redirectURI + `"]}`
	status, body := f.postJSON(t, "/oauth/register", req)
	id, _ := body["client_id"].(string)
	if status != http.StatusCreated || id == "" {
		t.Fatalf("register = %d %v", status, body)
	}
	return id
}
