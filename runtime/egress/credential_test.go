package egress_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// These tests run egress with the real credential package as its injector,
// the way the runtime wires them.

var _ egress.Injector = credential.Binding{}

const (
	apiKey   = "ak-SECRET-0001"
	apiToken = "at-SECRET-0002"
	token    = "gho-SECRET-0003"
	cookie   = "ck-SECRET-0004"
)

type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "api.test", "other.test", "sub.api.test":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// upstream is a loopback server that records the requests it sees.
type upstream struct {
	*httptest.Server
	addr netip.AddrPort
	mu   sync.Mutex
	seen []*http.Request
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Clone(context.Background()))
		u.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(u.Close)
	u.addr = netip.MustParseAddrPort(u.Listener.Addr().String())
	return u
}

func (u *upstream) at(name string) string { return fmt.Sprintf("http://%s:%d", name, u.addr.Port()) }

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

func setup(t *testing.T, ups ...*upstream) (*egress.Client, egress.Policy) {
	t.Helper()
	var p egress.Policy
	var addrs []netip.AddrPort
	for _, u := range ups {
		addrs = append(addrs, u.addr)
		for _, name := range []string{"api.test", "other.test", "sub.api.test"} {
			d, err := egress.ParseDestination(u.at(name))
			if err != nil {
				t.Fatal(err)
			}
			p.Allow = append(p.Allow, d)
		}
	}
	c := egress.NewClient(egress.Options{Resolver: loopbackResolver{}, AllowAddrs: addrs})
	t.Cleanup(c.Close)
	return c, p
}

func headerValues(r *http.Request, name string) []string {
	var out []string
	for k, vs := range r.Header {
		if strings.EqualFold(k, name) {
			out = append(out, vs...)
		}
	}
	return out
}

func TestDo_credentialReplacesPluginHeaders(t *testing.T) {
	hostile := http.Header{
		"Authorization": {"Bearer plugin"},
		"authorization": {"Bearer plugin-lowercase"},
		"Cookie":        {"sid=plugin"},
		"X-API-KEY":     {"plugin-key"},
	}
	fields := map[string]string{"api_key": apiKey, "email": "me@example.com", "api_token": apiToken}
	tests := []struct {
		name   string
		scheme credential.Scheme
		cred   *credential.Credential
		check  func(t *testing.T, r *http.Request)
	}{
		{
			name:   "oauth2",
			scheme: credential.Scheme{Mode: credential.ModeOAuth2},
			cred:   &credential.Credential{AccessToken: token},
			check: func(t *testing.T, r *http.Request) {
				if got := headerValues(r, "Authorization"); len(got) != 1 || got[0] != "Bearer "+token {
					t.Fatalf("Authorization = %q, want exactly the real token", got)
				}
				if got := headerValues(r, "Cookie"); len(got) != 0 {
					t.Fatalf("Cookie = %q", got)
				}
			},
		},
		{
			name:   "apikey header",
			scheme: credential.Scheme{Mode: credential.ModeAPIKey, Placement: credential.Placement{In: "header", Name: "X-Api-Key", Value: "{api_key}"}},
			cred:   &credential.Credential{Fields: fields},
			check: func(t *testing.T, r *http.Request) {
				if got := headerValues(r, "X-Api-Key"); len(got) != 1 || got[0] != apiKey {
					t.Fatalf("X-Api-Key = %q", got)
				}
				if got := headerValues(r, "Authorization"); len(got) != 0 {
					t.Fatalf("plugin Authorization reached upstream: %q", got)
				}
			},
		},
		{
			name:   "apikey basic",
			scheme: credential.Scheme{Mode: credential.ModeAPIKey, Placement: credential.Placement{In: "basic", Username: "{email}", Password: "{api_token}"}},
			cred:   &credential.Credential{Fields: fields},
			check: func(t *testing.T, r *http.Request) {
				if got := headerValues(r, "Authorization"); len(got) != 1 {
					t.Fatalf("Authorization = %q", got)
				}
				if u, p, ok := r.BasicAuth(); !ok || u != "me@example.com" || p != apiToken {
					t.Fatalf("BasicAuth = %q %q %v", u, p, ok)
				}
			},
		},
		{
			name:   "apikey query",
			scheme: credential.Scheme{Mode: credential.ModeAPIKey, Placement: credential.Placement{In: "query", Name: "api_key", Value: "{api_key}"}},
			cred:   &credential.Credential{Fields: fields},
			check: func(t *testing.T, r *http.Request) {
				q := r.URL.Query()
				if got := q["api_key"]; len(got) != 1 || got[0] != apiKey {
					t.Fatalf("api_key = %q", got)
				}
				if q.Get("q") != "1" {
					t.Fatalf("query = %v", q)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, nil)
			c, p := setup(t, up)
			resp, err := c.Do(context.Background(), p,
				egress.Request{URL: up.at("api.test") + "/x?api_key=plugin&q=1", Header: hostile},
				tt.scheme.Bind(tt.cred), egress.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			reqs := up.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			tt.check(t, reqs[0])
			for _, s := range []string{apiKey, apiToken, token} {
				if strings.Contains(resp.URL, s) || strings.Contains(fmt.Sprint(resp.Header), s) {
					t.Fatalf("response shows a secret: %s %v", resp.URL, resp.Header)
				}
			}
		})
	}
}

func TestDo_queryKeyEchoedInRedirect(t *testing.T) {
	other := newUpstream(t, nil)
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		// A careless upstream copies the whole query, key included, into
		// the redirect: first to itself, then to another host.
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/same?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		http.Redirect(w, r, other.at("other.test")+"/away?"+r.URL.RawQuery, http.StatusFound)
	})
	c, p := setup(t, api, other)
	s := credential.Scheme{Mode: credential.ModeAPIKey, Placement: credential.Placement{In: "query", Name: "api_key", Value: "{api_key}"}}
	resp, err := c.Do(context.Background(), p, egress.Request{URL: api.at("api.test") + "/start?x=1"},
		s.Bind(&credential.Credential{Fields: map[string]string{"api_key": apiKey}}), egress.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range api.requests() {
		if got := r.URL.Query()["api_key"]; len(got) != 1 || got[0] != apiKey {
			t.Fatalf("same-host hop %d api_key = %q, want exactly the real key", i, got)
		}
	}
	away := other.requests()
	if len(away) != 1 {
		t.Fatalf("other host saw %d requests", len(away))
	}
	if strings.Contains(away[0].URL.RawQuery, apiKey) || away[0].URL.Query().Get("x") != "1" {
		t.Fatalf("other host saw query %q", away[0].URL.RawQuery)
	}
	if strings.Contains(resp.URL, apiKey) || resp.URL != other.at("other.test")+"/away?x=1" {
		t.Fatalf("final URL = %q", resp.URL)
	}
}

func TestDo_cookieDomains(t *testing.T) {
	other := newUpstream(t, nil)
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, other.at("other.test")+"/away", http.StatusFound)
		}
	})
	c, p := setup(t, api, other)
	s := credential.Scheme{Mode: credential.ModeCookie, CookieDomains: []string{".api.test", "other.test"}}
	jar := &credential.Credential{Cookies: []*http.Cookie{
		{Name: "sid", Value: cookie, Domain: "api.test"},
		{Name: "secure", Value: "s", Domain: "api.test", Secure: true}, // http only: never sent
		{Name: "sub", Value: "u", Domain: "sub.api.test"},              // api.test is not a subdomain of it
		{Name: "theirs", Value: "t", Domain: "other.test"},             // sent only on a credentialed hop to other.test
	}}
	tests := []struct {
		name     string
		url      string
		wantAPI  []string
		wantAway []string
	}{
		{"api then cross host", api.at("api.test") + "/start", []string{"sid=" + cookie}, nil},
		{"subdomain", api.at("sub.api.test") + "/plain", []string{"sid=" + cookie + "; sub=u"}, nil},
		{"other host as origin", other.at("other.test") + "/direct", nil, []string{"theirs=t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.mu.Lock()
			api.seen = nil
			api.mu.Unlock()
			other.mu.Lock()
			other.seen = nil
			other.mu.Unlock()
			plugin := http.Header{"Cookie": {"sid=plugin"}}
			if _, err := c.Do(context.Background(), p, egress.Request{URL: tt.url, Header: plugin}, s.Bind(jar), egress.Limits{}); err != nil {
				t.Fatal(err)
			}
			check := func(who string, reqs []*http.Request, want []string) {
				var got []string
				for _, r := range reqs {
					got = append(got, headerValues(r, "Cookie")...)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s saw cookies %q, want %q", who, got, want)
				}
			}
			check("api", api.requests(), tt.wantAPI)
			check("other", other.requests(), tt.wantAway)
		})
	}
}

func TestDo_credentialCannotBeAttached(t *testing.T) {
	up := newUpstream(t, nil)
	c, p := setup(t, up)
	s := credential.Scheme{Mode: credential.ModeAPIKey, Placement: credential.Placement{In: "basic", Username: "{email}", Password: "{api_token}"}}
	_, err := c.Do(context.Background(), p, egress.Request{URL: up.at("api.test")},
		s.Bind(&credential.Credential{Fields: map[string]string{"email": apiKey}}), egress.Limits{})
	var e *egress.Error
	if !errors.As(err, &e) || e.Code != failure.NotConnected {
		t.Fatalf("err = %v, want NOT_CONNECTED", err)
	}
	if !errors.Is(err, failure.ErrNotConnected) || !strings.Contains(e.Message, `"api_token"`) || strings.Contains(err.Error(), apiKey) {
		t.Fatalf("err = %v", err)
	}
	if len(up.requests()) != 0 {
		t.Fatal("the request was sent without its credential")
	}
}
