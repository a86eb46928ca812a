package oauthserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// registrationBody returns a registration request body with these redirect URIs.
func registrationBody(t *testing.T, uris ...string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"client_name": "Agent", "redirect_uris": uris})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// registerFrom posts a registration of one redirect URI from addr.
func (f *fixture) registerFrom(t *testing.T, addr string) (response, map[string]any) {
	t.Helper()
	r := f.send(t, request{method: http.MethodPost, target: "/oauth/register", addr: addr, json: registrationBody(t, redirectURI)})
	_, out := decodeJSON(t, r)
	return r, out
}

// TestServer_RegisterRedirectURIBounds: a registration with more redirect
// URIs than the cap, or one longer than the cap, is refused with
// invalid_redirect_uri naming the cap; one at the caps is accepted.
func TestServer_RegisterRedirectURIBounds(t *testing.T) {
	long := func(n int) string {
		return "https://app.example.com/" + strings.Repeat("a", n-len("https://app.example.com/"))
	}
	tests := []struct {
		name   string
		uris   []string
		status int
		want   string // in the error description
	}{
		{"at the caps", slices.Repeat([]string{long(store.MaxRedirectURILen)}, store.MaxRedirectURIs), http.StatusCreated, ""},
		{"one too many", slices.Repeat([]string{redirectURI}, store.MaxRedirectURIs+1), http.StatusBadRequest, "1 to 10 redirect_uris"},
		{"none", nil, http.StatusBadRequest, "1 to 10 redirect_uris"},
		{"one byte too long", []string{redirectURI, long(store.MaxRedirectURILen + 1)}, http.StatusBadRequest, "longer than the cap of 2048 bytes"},
	}
	f := newFixture(t, false)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.send(t, request{method: http.MethodPost, target: "/oauth/register", addr: fmt.Sprintf("192.0.2.%d", i+1),
				json: registrationBody(t, tt.uris...)})
			status, out := decodeJSON(t, r)
			if status != tt.status {
				t.Fatalf("register = %d %v; want %d", status, out, tt.status)
			}
			if tt.want == "" {
				return
			}
			if desc, _ := out["error_description"].(string); out["error"] != "invalid_redirect_uri" || !strings.Contains(desc, tt.want) {
				t.Errorf("register = %v; want invalid_redirect_uri naming %q", out, tt.want)
			}
		})
	}
}

// TestServer_RegisterRateLimit: one address registers 10 clients an hour;
// the 11th is 429 with Retry-After and creates nothing, while another
// address still registers, and the first starts over after the hour.
func TestServer_RegisterRateLimit(t *testing.T) {
	f := newFixture(t, false)
	const attacker = "203.0.113.7"
	for i := range registerPolicy.Free {
		if r, out := f.registerFrom(t, attacker); r.status != http.StatusCreated {
			t.Fatalf("registration %d = %d %v", i+1, r.status, out)
		}
	}
	before, err := f.st.CountOAuthClients(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, out := f.registerFrom(t, attacker)
	desc, _ := out["error_description"].(string)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "3600" || out["error"] != "temporarily_unavailable" ||
		!strings.Contains(desc, "at most 10 an hour") {
		t.Fatalf("registration 11 = %d Retry-After %q %v", r.status, r.header.Get("Retry-After"), out)
	}
	if n, err := f.st.CountOAuthClients(t.Context()); err != nil || n != before {
		t.Errorf("clients after the refusal = %d, %v; want %d", n, err, before)
	}
	if r, out := f.registerFrom(t, "198.51.100.8"); r.status != http.StatusCreated {
		t.Errorf("another address = %d %v", r.status, out)
	}
	// An IPv6 client counts by its /64.
	for i := range registerPolicy.Free {
		f.registerFrom(t, fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if r, out := f.registerFrom(t, "2001:db8:1:2:ffff::1"); r.status != http.StatusTooManyRequests {
		t.Errorf("11th registration from one /64 = %d %v", r.status, out)
	}
	f.clock.Advance(time.Hour)
	if r, out := f.registerFrom(t, attacker); r.status != http.StatusCreated {
		t.Errorf("an hour later = %d %v", r.status, out)
	}
}

// TestServer_RegisterTotalCap: past the total number of clients,
// registration is refused from every address until the sweep has deleted
// clients that were never granted.
func TestServer_RegisterTotalCap(t *testing.T) {
	f := newFixture(t, false)
	f.srv.maxClients = 3
	for i := range f.srv.maxClients {
		if r, out := f.registerFrom(t, fmt.Sprintf("192.0.2.%d", i+1)); r.status != http.StatusCreated {
			t.Fatalf("registration %d = %d %v", i+1, r.status, out)
		}
	}
	r, out := f.registerFrom(t, "198.51.100.1")
	desc, _ := out["error_description"].(string)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(desc, "maximum of 3 OAuth clients") {
		t.Fatalf("registration past the total = %d Retry-After %q %v", r.status, r.header.Get("Retry-After"), out)
	}
	f.clock.Advance(UngrantedClientTTL + time.Second)
	f.srv.sweep(t.Context())
	if r, out := f.registerFrom(t, "198.51.100.1"); r.status != http.StatusCreated {
		t.Errorf("registration after the sweep = %d %v", r.status, out)
	}
}

// TestServer_SweepUngrantedClients: a client that never completed a grant
// is deleted a day after it registered; a granted one stays and its tokens
// keep working.
func TestServer_SweepUngrantedClients(t *testing.T) {
	f := newFixture(t, false)
	abandoned, granted := f.register(t), f.register(t)
	verifier := strings.Repeat("d", 43)
	code := f.approve(t, authQuery(granted, verifier, ""))
	_, tok := f.tokens(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {granted}})

	f.clock.Advance(UngrantedClientTTL - time.Second)
	f.srv.sweep(t.Context())
	if _, err := f.st.OAuthClient(t.Context(), abandoned); err != nil {
		t.Fatalf("the sweep deleted a client before its day was over: %v", err)
	}
	f.clock.Advance(2 * time.Second)
	f.srv.sweep(t.Context())
	status, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+authQuery(abandoned, verifier, "").Encode(), nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "unknown client_id") {
		t.Errorf("authorize for the swept client = %d %s", status, body)
	}
	st, out := f.tokens(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {granted}})
	if st != http.StatusOK {
		t.Errorf("refresh for the granted client after the sweep = %d %v", st, out)
	}
}
