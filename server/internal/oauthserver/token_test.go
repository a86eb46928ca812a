package oauthserver

import (
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestServer_TokenRefusalKeepsCredential: a code exchange or a refresh
// refused for a mistake in the request (a typo'd scope, another client's
// id, a wrong verifier) does not use the credential up: the correct retry
// works and the grant's access token stays live. A true reuse after that
// successful use still revokes the grant.
func TestServer_TokenRefusalKeepsCredential(t *testing.T) {
	tests := []struct {
		name    string
		refresh bool // the credential is a refresh token (else a code)
		change  func(form url.Values, other string)
		status  int
		code    string
	}{
		{"refresh with a typo'd scope", true, func(v url.Values, _ string) { v.Set("scope", "mcp ofline_access") }, http.StatusBadRequest, "invalid_scope"},
		{"refresh with a wider scope", true, func(v url.Values, _ string) { v.Set("scope", "mcp offline_access") }, http.StatusBadRequest, "invalid_scope"},
		{"refresh by another client", true, func(v url.Values, other string) { v.Set("client_id", other) }, http.StatusBadRequest, "invalid_grant"},
		{"refresh by an unknown client", true, func(v url.Values, _ string) { v.Set("client_id", "oac_unknown") }, http.StatusUnauthorized, "invalid_client"},
		{"refresh for another resource", true, func(v url.Values, _ string) { v.Set("resource", "https://other.example.com/mcp") }, http.StatusBadRequest, "invalid_target"},
		{"code with a wrong verifier", false, func(v url.Values, _ string) { v.Set("code_verifier", strings.Repeat("z", 43)) }, http.StatusBadRequest, "invalid_grant"},
		{"code with a malformed verifier", false, func(v url.Values, _ string) { v.Set("code_verifier", "short") }, http.StatusBadRequest, "invalid_request"},
		{"code with another redirect_uri", false, func(v url.Values, _ string) { v.Set("redirect_uri", "http://127.0.0.1:9999/cb") }, http.StatusBadRequest, "invalid_grant"},
		{"code by another client", false, func(v url.Values, other string) { v.Set("client_id", other) }, http.StatusBadRequest, "invalid_grant"},
	}
	f := newFixture(t, false)
	cl, other := f.register(t), f.register(t)
	verifier := strings.Repeat("e", 43)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := f.approve(t, authQuery(cl, verifier, ""))
			good := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
				"redirect_uri": {redirectURI}, "client_id": {cl}}
			live := "" // an access token of the grant issued before the bad request
			if tt.refresh {
				st, tok := f.tokens(t, good)
				if st != http.StatusOK {
					t.Fatalf("code exchange = %d %v", st, tok)
				}
				live = tok["access_token"].(string)
				good = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {cl}}
			}
			bad := maps.Clone(good)
			tt.change(bad, other)
			if st, out := f.tokens(t, bad); st != tt.status || out["error"] != tt.code {
				t.Fatalf("bad request = %d %v; want %d %s", st, out, tt.status, tt.code)
			}
			st, tok := f.tokens(t, good)
			if st != http.StatusOK {
				t.Fatalf("the correct retry = %d %v", st, tok)
			}
			for _, access := range []string{live, tok["access_token"].(string)} {
				if _, err := f.srv.Authenticate(t.Context(), access); access != "" && err != nil {
					t.Errorf("an access token of the grant is dead after the retry: %v", err)
				}
			}
			// The credential was used once, successfully: using it again is
			// a reuse that revokes the grant.
			st, out := f.tokens(t, good)
			if desc, _ := out["error_description"].(string); st != http.StatusBadRequest || !strings.Contains(desc, "revoked") {
				t.Errorf("reuse after a successful use = %d %v; want the grant revoked", st, out)
			}
			if _, err := f.srv.Authenticate(t.Context(), tok["access_token"].(string)); err == nil {
				t.Error("the grant's access token still authenticates after the reuse")
			}
		})
	}
}
