package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// fakeResolver maps test host names to fixed addresses, so tests reach
// "public" names without DNS and can make names resolve to private addresses.
type fakeResolver map[string]string

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// upstream is a fake API that reports the credential headers it received.
type upstream struct {
	*httptest.Server
	hits atomic.Int32
}

type seen struct {
	Host          string   `json:"host"`
	Path          string   `json:"path"`
	APIKey        []string `json:"apiKey"`
	Authorization []string `json:"authorization"`
	Cookie        []string `json:"cookie"`
}

func newUpstream(t testing.TB, handler func(w http.ResponseWriter, r *http.Request) bool) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		if handler != nil && handler(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{Host: r.Host, Path: r.URL.Path, APIKey: r.Header.Values("X-Api-Key"), Authorization: r.Header.Values("Authorization"), Cookie: r.Header.Values("Cookie")})
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) port() string {
	return u.Listener.Addr().(*net.TCPAddr).AddrPort().String()[len("127.0.0.1:"):]
}

// egressHost builds a host whose plugins may reach the given upstreams by the
// names in resolver; private addresses stay refused.
func egressConfig(creds credential.Source, settings MapSettings, resolver fakeResolver, trusted ...*upstream) Config {
	var addrs []netip.AddrPort
	for _, u := range trusted {
		addrs = append(addrs, u.Listener.Addr().(*net.TCPAddr).AddrPort())
	}
	return Config{
		Credentials: creds,
		Settings:    settings,
		Egress:      egress.NewClient(egress.Options{Resolver: resolver, AllowAddrs: addrs}),
	}
}

func request(method, url string, headers map[string]string) string {
	b, _ := json.Marshal(map[string]any{"method": method, "url": url, "headers": headers})
	return string(b)
}

func TestPlugin_httpRequest_injectsCredential(t *testing.T) {
	api := newUpstream(t, nil)
	creds := credential.NewMemory()
	creds.Set("alice", "fixture", &credential.Credential{Fields: map[string]string{"api_key": "real-key", "site": "acme"}})
	cfg := egressConfig(creds, MapSettings{"fixture": {"base_url": "http://api.test:" + api.port()}}, fakeResolver{"api.test": "127.0.0.1"}, api)
	p := loadHostile(t, cfg, "api.test")

	out := callOK(t, p, "fixture_http", "alice", request("GET", "http://api.test:"+api.port()+"/v1/things",
		map[string]string{"X-Api-Key": "forged", "Authorization": "Bearer forged", "Cookie": "s=forged"}))
	var got seen
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.APIKey, ",") != "real-key" || len(got.Authorization) != 0 || len(got.Cookie) != 0 || got.Path != "/v1/things" {
		t.Fatalf("upstream saw %+v; want exactly the stored key and none of the plugin's credential headers", got)
	}
	// The non-secret field is readable, the key is not.
	if got := callOK(t, p, "fixture_config", "alice", `"site"`); got != `"acme"` {
		t.Fatalf("config_get(site) = %s", got)
	}
	if got := callOK(t, p, "fixture_config", "alice", `"api_key"`); got != "null" {
		t.Fatalf("config_get(api_key) = %s; a secret must never reach the plugin", got)
	}
	// A user without a connection gets NOT_CONNECTED and nothing goes out.
	hits := api.hits.Load()
	te := callErr(t, p, "fixture_http", "bob", request("GET", "http://api.test:"+api.port()+"/", nil))
	if te.Code != failure.NotConnected || !strings.Contains(te.Message, "connect('fixture')") || api.hits.Load() != hits {
		t.Fatalf("bob: %+v, upstream hits %d -> %d", te, hits, api.hits.Load())
	}
}

func TestPlugin_httpRequest_egressDenied(t *testing.T) {
	api := newUpstream(t, nil)
	creds := credential.NewMemory()
	creds.Set("alice", "fixture", &credential.Credential{Fields: map[string]string{"api_key": "real-key"}})
	resolver := fakeResolver{
		"api.test":    "127.0.0.1",
		"meta.test":   "169.254.169.254",
		"lan.test":    "10.0.0.1",
		"mapped.test": "::ffff:127.0.0.1",
	}
	settings := MapSettings{"fixture": {"base_url": "http://api.test:" + api.port()}}
	p := loadHostile(t, egressConfig(creds, settings, resolver, api), "api.test", "meta.test", "lan.test", "mapped.test", "evil.test")

	tests := []struct{ name, url, reason string }{
		{"undeclared host", "https://undeclared.test/", "undeclared.test"},
		{"loopback on another port", "https://api.test/", "127.0.0.1"},
		{"metadata address", "https://meta.test/latest/meta-data/", "169.254.169.254"},
		{"private address", "https://lan.test/", "10.0.0.1"},
		{"IPv4-mapped loopback", "https://mapped.test/", "127.0.0.1"},
		{"IP literal", "https://127.0.0.1/", "127.0.0.1"},
		{"IPv6 mapped literal", "https://[::ffff:127.0.0.1]/", "127.0.0.1"},
		{"link-local literal", "http://169.254.169.254/", "169.254.169.254"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := callErr(t, p, "fixture_http", "alice", request("GET", tt.url, nil))
			if te.Code != "EGRESS_DENIED" || !strings.Contains(te.Message, tt.reason) {
				t.Fatalf("got %s %q; want EGRESS_DENIED naming %q", te.Code, te.Message, tt.reason)
			}
		})
	}
	if got := p.Stats().EgressDenied; got != uint64(len(tests)) {
		t.Fatalf("denied counter = %d, want %d", got, len(tests))
	}
	if api.hits.Load() != 0 {
		t.Fatalf("the upstream was reached %d times", api.hits.Load())
	}
}

// TestPlugin_httpRequest_operatorBaseURL checks that an operator's
// <NAME>_BASE_URL on an internal address is reachable without
// EGRESS_ALLOW_PRIVATE, and that the exemption covers nothing else: not a
// manifest host on the same address, never a metadata address.
func TestPlugin_httpRequest_operatorBaseURL(t *testing.T) {
	ghe := newUpstream(t, nil)
	port := ghe.port()
	creds := credential.NewMemory()
	creds.Set("alice", "fixture", &credential.Credential{Fields: map[string]string{"api_key": "real-key"}})
	resolver := fakeResolver{"ghe.test": "127.0.0.1", "api.test": "127.0.0.1", "imds.test": "169.254.169.254"}
	tests := []struct {
		name, baseURL, url string
		reason             string // "" means the call reaches the upstream
	}{
		{"operator base URL on loopback", "http://ghe.test:" + port, "http://ghe.test:" + port + "/api/v3/user", ""},
		{"manifest host on the same address", "http://ghe.test:" + port, "https://api.test:" + port + "/", "api.test resolves to loopback address 127.0.0.1"},
		{"operator base URL to metadata", "http://imds.test", "http://imds.test/latest/meta-data/", "link-local address 169.254.169.254"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{
				Credentials: creds,
				Settings:    MapSettings{"fixture": {"base_url": tt.baseURL}},
				Egress:      egress.NewClient(egress.Options{Resolver: resolver}),
			}
			p := loadHostile(t, cfg, "api.test:"+port)
			hits := ghe.hits.Load()
			if tt.reason == "" {
				var got seen
				if err := json.Unmarshal([]byte(callOK(t, p, "fixture_http", "alice", request("GET", tt.url, nil))), &got); err != nil || got.Path != "/api/v3/user" {
					t.Fatalf("upstream saw %+v (%v)", got, err)
				}
				return
			}
			te := callErr(t, p, "fixture_http", "alice", request("GET", tt.url, nil))
			if te.Code != failure.EgressDenied || !strings.Contains(te.Message, tt.reason) || ghe.hits.Load() != hits {
				t.Fatalf("got %s %q, upstream hits %d -> %d; want EGRESS_DENIED naming %q", te.Code, te.Message, hits, ghe.hits.Load(), tt.reason)
			}
		})
	}
}

// TestPlugin_httpRequest_setCookie checks that no plugin sees the cookies
// a response sets, and that for a cookie-mode integration the host keeps
// them instead: a rotated session cookie goes into the stored bundle (and
// to the next request), a cookie for a domain outside the integration's
// cookie domains does not.
func TestPlugin_httpRequest_setCookie(t *testing.T) {
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/rotate" {
			return false
		}
		w.Header().Add("Set-Cookie", "sid=rotated; Path=/; HttpOnly")
		w.Header().Add("Set-Cookie", "evil=1; Domain=evil.test; Path=/")
		w.Header().Set("Set-Cookie2", "legacy=1")
		w.Header().Set("X-Upstream", "yes")
		return true
	})
	base := "http://api.test:" + api.port()
	resolver := fakeResolver{"api.test": "127.0.0.1"}
	settings := MapSettings{"fixture": {"base_url": base}}
	cookieManifest := func() string {
		var m map[string]any
		if err := json.Unmarshal([]byte(fixtureManifest("api.test")), &m); err != nil {
			t.Fatal(err)
		}
		m["auth"] = map[string]any{"mode": "cookie", "cookie": map[string]any{"domains": []string{"api.test"}, "loginUrl": "https://api.test/login"}}
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name       string
		cred       *credential.Credential
		manifest   string
		wantCookie string // what the next request sends, and the stored bundle holds
	}{
		{"cookie mode", &credential.Credential{Cookies: []*http.Cookie{{Name: "sid", Value: "old", Domain: "api.test", Path: "/"}}}, cookieManifest(), "sid=rotated"},
		{"apikey mode", &credential.Credential{Fields: map[string]string{"api_key": "real-key"}}, fixtureManifest("api.test"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds := credential.NewMemory()
			creds.Set("alice", "fixture", tt.cred)
			p, err := newTestHost(t, egressConfig(creds, settings, resolver, api)).Load(context.Background(), wat(t, "hostile", tt.manifest))
			if err != nil {
				t.Fatal(err)
			}
			var head struct{ Headers map[string][]string }
			if err := json.Unmarshal([]byte(callOK(t, p, "fixture_http_head", "alice", request("GET", base+"/rotate", nil))), &head); err != nil {
				t.Fatal(err)
			}
			for name := range head.Headers {
				if strings.EqualFold(name, "Set-Cookie") || strings.EqualFold(name, "Set-Cookie2") {
					t.Fatalf("the plugin saw %s: %v", name, head.Headers)
				}
			}
			if head.Headers["X-Upstream"] == nil {
				t.Fatalf("headers %v lack the upstream's own", head.Headers)
			}
			stored, err := creds.Credential(context.Background(), "alice", "fixture")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range stored.Cookies {
				names = append(names, c.Name+"="+c.Value)
			}
			if strings.Join(names, "; ") != tt.wantCookie {
				t.Fatalf("stored cookies %v, want %q", names, tt.wantCookie)
			}
			var got seen
			if err := json.Unmarshal([]byte(callOK(t, p, "fixture_http", "alice", request("GET", base+"/echo", nil))), &got); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Cookie, "; ") != tt.wantCookie {
				t.Fatalf("the next request sent cookies %q, want %q", got.Cookie, tt.wantCookie)
			}
		})
	}
}

func TestPlugin_httpRequest_redirects(t *testing.T) {
	other := newUpstream(t, nil)
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "https://lan.test/", http.StatusFound)
		case "/to-other":
			http.Redirect(w, r, "http://other.test:"+other.port()+"/landed", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
		default:
			return false
		}
		return true
	})
	creds := credential.NewMemory()
	creds.Set("alice", "fixture", &credential.Credential{Fields: map[string]string{"api_key": "real-key"}})
	resolver := fakeResolver{"api.test": "127.0.0.1", "other.test": "127.0.0.1", "lan.test": "10.0.0.1"}
	base := "http://api.test:" + api.port()
	p := loadHostile(t, egressConfig(creds, MapSettings{"fixture": {"base_url": base}}, resolver, api, other),
		"api.test", "lan.test", "other.test:"+other.port())

	te := callErr(t, p, "fixture_http", "alice", request("GET", base+"/to-private", nil))
	if te.Code != "EGRESS_DENIED" || !strings.Contains(te.Message, "10.0.0.1") {
		t.Fatalf("redirect to a private address: %+v", te)
	}
	// other.test is declared as https on that port; the redirect is plain http.
	te = callErr(t, p, "fixture_http", "alice", request("GET", base+"/to-other", nil))
	if te.Code != "EGRESS_DENIED" {
		t.Fatalf("redirect to an undeclared scheme: %+v", te)
	}
	var got seen
	json.Unmarshal([]byte(callOK(t, p, "fixture_http", "alice", request("GET", base+"/to-self", nil))), &got)
	if got.Path != "/landed" || strings.Join(got.APIKey, ",") != "real-key" {
		t.Fatalf("same-host redirect: %+v; want the credential kept", got)
	}
}

// brokenStore is a credential.Source whose database is down.
type brokenStore struct{ err error }

func (s brokenStore) Credential(context.Context, string, string) (*credential.Credential, error) {
	return nil, s.err
}

func (s brokenStore) UpdateCookies(context.Context, string, string, []*http.Cookie) error {
	return s.err
}

func TestPlugin_httpRequest_credentialStoreDown(t *testing.T) {
	api := newUpstream(t, nil)
	outage := errors.New("connection refused by the database")
	p := loadHostile(t, egressConfig(brokenStore{outage}, nil, fakeResolver{"api.test": "127.0.0.1"}, api), "api.test:"+api.port())
	te := callErr(t, p, "fixture_http", "alice", request("GET", "http://api.test:"+api.port()+"/", nil))
	if te.Code != failure.Unavailable || strings.Contains(te.Message, outage.Error()) || api.hits.Load() != 0 {
		t.Fatalf("store down: %+v, upstream hits %d; want UNAVAILABLE without the cause's text and no request", te, api.hits.Load())
	}
}
