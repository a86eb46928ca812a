package connect

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// loopbackServer serves handler on 127.0.0.1 and counts requests.
func loopbackServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestNewProviderClient(t *testing.T) {
	srv, hits := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name          string
		allowLoopback bool
		host          string
		wantReached   bool
	}{
		{"loopback refused by default", false, "127.0.0.1", false},
		{"loopback allowed", true, "127.0.0.1", true},
		{"mapped loopback allowed", true, "[::ffff:127.0.0.1]", true},
		// 0.0.0.0 would reach this machine if dialed; it is refused before.
		{"unspecified refused even when loopback is allowed", true, "0.0.0.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			client := NewProviderClient(tt.allowLoopback)
			resp, err := client.Get("http://" + tt.host + ":" + strconv.Itoa(port) + "/token")
			reached := hits.Load() > before
			if reached != tt.wantReached {
				t.Fatalf("reached = %v, want %v (err %v)", reached, tt.wantReached, err)
			}
			if !tt.wantReached {
				if !errors.Is(err, egress.ErrDenied) {
					t.Fatalf("err = %v, want a refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			// Redirects are not followed.
			if resp.StatusCode != http.StatusFound || hits.Load() != before+1 {
				t.Fatalf("status %d after %d requests", resp.StatusCode, hits.Load()-before)
			}
		})
	}
}

func TestProviders_tokenRequest_answers(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		status      int
		body        string
		wantToken   string
		wantExpiry  time.Duration
		wantErr     string
	}{
		{"json", "application/json", 200, `{"access_token":"a1","token_type":"bearer","expires_in":120}`, "a1", 2 * time.Minute, ""},
		{"expires_in as a string", "application/json; charset=utf-8", 200, `{"access_token":"a2","expires_in":"60"}`, "a2", time.Minute, ""},
		{"form encoded", "application/x-www-form-urlencoded", 200, `access_token=a3&token_type=bearer&scope=repo`, "a3", 0, ""},
		{"error in a 200", "application/json", 200, `{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}`, "", 0, "bad_verification_code: The code passed is incorrect or expired."},
		{"error text is cleaned", "application/json", 400, `{"error":"invalid_grant","error_description":"line1\nline2\u0000"}`, "", 0, "invalid_grant: line1 line2"},
		{"not bearer", "application/json", 200, `{"access_token":"a4","token_type":"mac"}`, "", 0, `token_type "mac" is not bearer`},
		{"no token", "application/json", 200, `{"token_type":"bearer"}`, "", 0, "no access_token"},
		{"html error page", "text/html", 502, `<html>bad gateway</html>`, "", 0, "not a JSON object"},
		{"status without oauth error", "application/json", 500, `{}`, "", 0, "HTTP 500"},
		{"absurd expiry ignored", "application/json", 200, `{"access_token":"a5","expires_in":1e12}`, "a5", 0, ""},
		{"too large", "application/json", 200, `{"access_token":"` + strings.Repeat("x", maxTokenResponse) + `"}`, "", 0, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := loopbackServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			f := newFixture(t)
			f.env["POSTY_OAUTH_TOKEN_URL"] = srv.URL + "/token"
			tok, err := f.providers.exchange(ctx, "posty", "code", "verifier")
			if tt.wantErr != "" {
				var perr *ProviderError
				if !errors.As(err, &perr) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a provider error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || tok.AccessToken != tt.wantToken {
				t.Fatalf("exchange = %+v, %v", tok, err)
			}
			if got := tok.ExpiresAt; tt.wantExpiry == 0 && !got.IsZero() || tt.wantExpiry != 0 && !got.Equal(f.clock.Now().Add(tt.wantExpiry)) {
				t.Fatalf("expiry %v, want now + %v", got, tt.wantExpiry)
			}
		})
	}
}

func TestProviders_endpoint(t *testing.T) {
	tests := []struct {
		name         string
		allowPrivate bool
		override     string
		declared     string
		want         string // "" means an error
	}{
		{"manifest", false, "", "https://auth.example.com/token", "https://auth.example.com/token"},
		{"https override", false, "https://ghe.example.com/login/oauth/access_token", "https://auth.example.com/token", "https://ghe.example.com/login/oauth/access_token"},
		{"http loopback override allowed", true, "http://127.0.0.1:9/token", "https://auth.example.com/token", "http://127.0.0.1:9/token"},
		{"http localhost override allowed", true, "http://localhost:9/token", "https://auth.example.com/token", "http://localhost:9/token"},
		{"http loopback without allow-private", false, "http://127.0.0.1:9/token", "https://auth.example.com/token", ""},
		{"http public host", true, "http://auth.example.com/token", "https://auth.example.com/token", ""},
		{"credentials in the URL", false, "https://u:p@auth.example.com/token", "", ""},
		{"other scheme", false, "ftp://auth.example.com/token", "", ""},
		{"relative", false, "/token", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProviders(ProviderOptions{Catalog: catalog{}, AllowPrivate: tt.allowPrivate,
				Getenv: func(k string) string {
					if k == "X_OAUTH_TOKEN_URL" {
						return tt.override
					}
					return ""
				}})
			u, err := p.endpoint("X_OAUTH_TOKEN_URL", tt.declared)
			if tt.want == "" {
				if !errors.Is(err, failure.ErrNotConfigured) || !strings.Contains(err.Error(), "X_OAUTH_TOKEN_URL") {
					t.Fatalf("endpoint = %v, %v; want an error naming the variable", u, err)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Fatalf("endpoint = %v, %v; want %s", u, err, tt.want)
			}
		})
	}
}

func TestProviders_provider_wrongMode(t *testing.T) {
	p := NewProviders(ProviderOptions{Catalog: testCatalog(), Getenv: func(string) string { return "x" }})
	if _, err := p.provider("keyed"); !errors.Is(err, failure.ErrNotConfigured) {
		t.Fatalf("apikey integration as a provider: %v", err)
	}
	m := oauthManifest("refreshy", "post")
	m.Auth.OAuth2.RefreshURL = "https://auth.example.com/refresh"
	p = NewProviders(ProviderOptions{Catalog: catalog{"refreshy": m}, Getenv: func(k string) string {
		if k == manifest.EnvPrefix("refreshy")+"_CLIENT_ID" {
			return "id"
		}
		return ""
	}})
	pr, err := p.provider("refreshy")
	if err != nil || pr.refreshURL.String() != "https://auth.example.com/refresh" || pr.tokenURL.String() != "https://auth.example.com/token" {
		t.Fatalf("provider = %+v, %v", pr, err)
	}
}
