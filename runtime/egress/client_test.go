package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

func TestClient_Do_addressRule(t *testing.T) {
	var hits atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	port := srv.addr.Port()
	tests := []struct {
		name        string
		url         string
		reason      string
		wantLookups int
	}{
		{"loopback literal", fmt.Sprintf("http://127.0.0.1:%d/", port), "loopback address 127.0.0.1", 0},
		{"private literal", "http://10.0.0.1/", "private address 10.0.0.1", 0},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "link-local address 169.254.169.254", 0},
		{"mapped loopback", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), "IPv4-mapped form of 127.0.0.1", 0},
		{"ipv6 loopback", fmt.Sprintf("http://[::1]:%d/", port), "loopback address ::1", 0},
		{"unspecified", fmt.Sprintf("http://0.0.0.0:%d/", port), "unspecified address 0.0.0.0", 0},
		{"cgnat", "http://100.64.0.1/", "CGNAT address 100.64.0.1", 0},
		{"nat64 literal", "http://[64:ff9b::a00:1]/", "NAT64 form of 10.0.0.1", 0},
		{"6to4 literal", "http://[2002:a00:1::]/", "6to4 form of 10.0.0.1", 0},
		{"name to private", "http://internal.test/", "internal.test resolves to private address 10.0.0.1", 1},
		{"name to mapped private", "http://mapped.test/", "mapped.test resolves to private address ::ffff:10.0.0.1", 1},
		{"name to nat64 metadata", "http://nat64.test/", "NAT64 form of 169.254.169.254", 1},
		{"translated loopback literal", fmt.Sprintf("http://[::ffff:0:7f00:1]:%d/", port), "IPv4-translated form of 127.0.0.1", 0},
		{"name to translated loopback", fmt.Sprintf("http://xlat.test:%d/", port), "xlat.test resolves to loopback address ::ffff:0:7f00:1 (IPv4-translated form of 127.0.0.1)", 1},
		{"name to metadata", "https://meta.test/", "meta.test resolves to link-local", 1},
		{"name to only private", "http://mixed.test/", "resolves to private address 10.0.0.1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, res, dials := newTestClient(t, Options{})
			u, _ := url.Parse(tt.url)
			p := Policy{Allow: []Destination{mustDest(t, u.Scheme+"://"+u.Host)}}
			_, err := c.Do(context.Background(), p, Request{URL: tt.url}, testInjector{}, Limits{})
			e := wantCode(t, err, failure.EgressDenied)
			if !strings.Contains(e.Message, tt.reason) {
				t.Fatalf("message %q, want it to contain %q", e.Message, tt.reason)
			}
			if got := dials.attempts(); len(got) != 0 {
				t.Fatalf("dialed %v; a refused address must never be dialed", got)
			}
			if res.count() != tt.wantLookups {
				t.Fatalf("resolver called %d times, want %d", res.count(), tt.wantLookups)
			}
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server was reached %d times", hits.Load())
	}
}

func TestClient_Do_skipsRefusedAddresses(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	res := newFakeResolver(map[string]string{"api.test": "10.0.0.1,::1,127.0.0.1"})
	c, _, dials := newTestClient(t, Options{Resolver: res, AllowAddrs: []netip.AddrPort{srv.addr}})
	resp, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test")}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "ok" {
		t.Fatalf("body = %q", resp.Body)
	}
	if got := dials.attempts(); len(got) != 1 || got[0] != srv.addr.String() {
		t.Fatalf("dials = %v, want only the allowed %s", got, srv.addr)
	}
}

func TestClient_Do_allowAddrsIsExact(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	other := netip.AddrPortFrom(srv.addr.Addr(), srv.addr.Port()+1) // same IP, another port
	c, _, dials := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{other}})
	_, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test")}, nil, Limits{})
	wantCode(t, err, failure.EgressDenied)
	if len(dials.attempts()) != 0 {
		t.Fatalf("dialed %v", dials.attempts())
	}
}

func TestClient_Do_policy(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	allowed := Policy{Allow: []Destination{srv.dest(t, "api.test")}}
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"undeclared host", srv.url("other.test"), "other.test"},
		{"other port", fmt.Sprintf("http://api.test:%d/", srv.addr.Port()+1), "api.test"},
		{"other scheme", fmt.Sprintf("https://api.test:%d/", srv.addr.Port()), "https://api.test"},
		{"unknown name", "https://nowhere.test/", "nowhere.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, res, dials := newTestClient(t, Options{AllowPrivate: true})
			_, err := c.Do(context.Background(), allowed, Request{URL: tt.url}, testInjector{}, Limits{})
			e := wantCode(t, err, failure.EgressDenied)
			if !strings.Contains(e.Message, tt.want) {
				t.Fatalf("message %q does not name %q", e.Message, tt.want)
			}
			if res.count() != 0 || len(dials.attempts()) != 0 {
				t.Fatalf("denied request still resolved (%d) or dialed (%v)", res.count(), dials.attempts())
			}
		})
	}
}

func TestClient_Do_invalidRequest(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"bad method", Request{Method: "GE T", URL: "https://api.test/"}, "method"},
		{"trace", Request{Method: "TRACE", URL: "https://api.test/"}, "TRACE"},
		{"track", Request{Method: "track", URL: "https://api.test/"}, "track"},
		{"connect", Request{Method: "CONNECT", URL: "https://api.test/"}, "CONNECT"},
		{"relative", Request{URL: "/repos"}, "absolute"},
		{"no scheme", Request{URL: "api.test/x"}, "absolute"},
		{"ftp", Request{URL: "ftp://api.test/"}, "absolute"},
		{"file", Request{URL: "file:///etc/passwd"}, "absolute"},
		{"userinfo", Request{URL: "https://u:p@api.test/"}, "userinfo"},
		{"no host", Request{URL: "https:///x"}, "no host"},
		{"opaque", Request{URL: "https:api.test"}, "no host"},
		{"bad port", Request{URL: "https://api.test:99999/"}, "port"},
		{"bad escape", Request{URL: "https://api.test/%zz"}, "parse"},
		{"long url", Request{URL: "https://api.test/" + strings.Repeat("a", maxURLBytes)}, "longer"},
		{"bad header name", Request{URL: "https://api.test/", Header: http.Header{"X Bad": {"1"}}}, "header name"},
		{"header crlf", Request{URL: "https://api.test/", Header: http.Header{"X-A": {"1\r\nAuthorization: x"}}}, "control characters"},
		{"header nul", Request{URL: "https://api.test/", Header: http.Header{"X-A": {"a\x00"}}}, "control characters"},
		{"host header", Request{URL: "https://api.test/", Header: http.Header{"host": {"evil.test"}}}, "Host is set by the host"},
		{"content-length", Request{URL: "https://api.test/", Header: http.Header{"Content-Length": {"5"}}}, "Content-Length"},
		{"transfer-encoding", Request{URL: "https://api.test/", Header: http.Header{"Transfer-Encoding": {"chunked"}}}, "Transfer-Encoding"},
		{"huge headers", Request{URL: "https://api.test/", Header: http.Header{"X-Big": {strings.Repeat("a", maxHeaderBytes)}}}, "exceed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, res, dials := newTestClient(t, Options{AllowPrivate: true})
			p := Policy{Allow: []Destination{mustDest(t, "api.test")}}
			_, err := c.Do(context.Background(), p, tt.req, testInjector{}, Limits{})
			e := wantCode(t, err, failure.InvalidRequest)
			if !strings.Contains(e.Message, tt.want) {
				t.Fatalf("message %q, want it to contain %q", e.Message, tt.want)
			}
			if res.count() != 0 || len(dials.attempts()) != 0 {
				t.Fatal("an invalid request reached the network")
			}
		})
	}
}

func TestClient_Do_allowPrivate(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Method", r.Method)
		w.Header().Add("Set-Cookie", "a=b")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	})
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"refused by default", Options{}, false},
		{"allowed with AllowPrivate", Options{AllowPrivate: true}, true},
		{"allowed with AllowAddrs", Options{AllowAddrs: []netip.AddrPort{srv.addr}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestClient(t, tt.opts)
			p := Policy{Allow: []Destination{mustDest(t, srv.URL)}}
			resp, err := c.Do(context.Background(), p, Request{Method: "PATCH", URL: srv.URL + "/x?y=1#frag", Body: []byte("{}")}, nil, Limits{})
			if !tt.ok {
				wantCode(t, err, failure.EgressDenied)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusTeapot || string(resp.Body) != "short and stout" ||
				resp.Header.Get("X-Seen-Method") != "PATCH" || resp.Header.Get("Set-Cookie") != "a=b" {
				t.Fatalf("response = %+v", resp)
			}
			if resp.URL != srv.URL+"/x?y=1" {
				t.Fatalf("URL = %q", resp.URL)
			}
		})
	}
}

func TestClient_Do_upstreamErrorsAreResponses(t *testing.T) {
	for _, status := range []int{400, 401, 404, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "nope", status)
			})
			c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
			resp, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test")}, nil, Limits{})
			if err != nil {
				t.Fatalf("status %d became an error: %v", status, err)
			}
			if resp.Status != status || strings.TrimSpace(string(resp.Body)) != "nope" {
				t.Fatalf("response = %d %q", resp.Status, resp.Body)
			}
		})
	}
}

func TestClient_Do_credential(t *testing.T) {
	type seen struct{ auth, key, cookie []string }
	var got seen
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = seen{r.Header.Values("Authorization"), r.Header.Values("X-Api-Key"), r.Header.Values("Cookie")}
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
	p := Policy{Allow: []Destination{srv.dest(t, "api.test")}}
	hostile := http.Header{
		"Authorization":       {"Bearer plugin-chosen"},
		"authorization":       {"Bearer plugin-lowercase"},
		"Cookie":              {"sid=plugin"},
		"x-api-key":           {"plugin-key"},
		"Proxy-Authorization": {"Basic cGx1Z2lu"},
	}
	if _, err := c.Do(context.Background(), p, Request{URL: srv.url("api.test"), Header: hostile}, testInjector{}, Limits{}); err != nil {
		t.Fatal(err)
	}
	if len(got.auth) != 1 || got.auth[0] != "Bearer "+realToken {
		t.Fatalf("Authorization = %q, want exactly the real token", got.auth)
	}
	if len(got.key) != 1 || got.key[0] != realAPIKey {
		t.Fatalf("X-Api-Key = %q", got.key)
	}
	if len(got.cookie) != 1 || got.cookie[0] != "sid="+realCookie {
		t.Fatalf("Cookie = %q", got.cookie)
	}
	if len(hostile["Authorization"]) != 1 || hostile.Get("Cookie") != "sid=plugin" {
		t.Fatal("Do modified the caller's header map")
	}

	_, err := c.Do(context.Background(), p, Request{URL: srv.url("api.test")}, failingInjector{}, Limits{})
	e := wantCode(t, err, failure.NotConnected)
	if !strings.Contains(e.Message, `no field "api_key"`) {
		t.Fatalf("message = %q", e.Message)
	}
}

// redirectLog records what each path of an upstream saw.
type redirectLog struct {
	mu   sync.Mutex
	hits []hit
}

type hit struct {
	server, path, method, body, auth, key, cookie, contentType string
}

func (l *redirectLog) record(server string, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits = append(l.hits, hit{server, r.URL.Path, r.Method, string(body),
		strings.Join(r.Header.Values("Authorization"), "|"),
		strings.Join(r.Header.Values("X-Api-Key"), "|"),
		strings.Join(r.Header.Values("Cookie"), "|"),
		r.Header.Get("Content-Type")})
}

func (l *redirectLog) all() []hit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]hit(nil), l.hits...)
}

func TestClient_Do_redirectCredentials(t *testing.T) {
	log := &redirectLog{}
	var a, b *testServer
	a = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		log.record("a", r)
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/same?"+r.URL.RawQuery, http.StatusFound)
		case "/same":
			http.Redirect(w, r, r.URL.Query().Get("next"), http.StatusFound)
		}
	})
	b = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		log.record("b", r)
		if back := r.URL.Query().Get("back"); back != "" {
			http.Redirect(w, r, back, http.StatusTemporaryRedirect)
		}
	})
	const bearer = "Bearer " + realToken
	tests := []struct {
		name string
		next string // where /same on a sends the request
		want []hit  // server, path, auth, key, cookie only
	}{
		{
			name: "other host other port",
			next: b.url("other.test") + "/elsewhere",
			want: []hit{{server: "a", path: "/start", auth: bearer}, {server: "a", path: "/same", auth: bearer}, {server: "b", path: "/elsewhere"}},
		},
		{
			name: "same name other port",
			next: b.url("api.test") + "/elsewhere",
			want: []hit{{server: "a", path: "/start", auth: bearer}, {server: "a", path: "/same", auth: bearer}, {server: "b", path: "/elsewhere"}},
		},
		{
			name: "away and back",
			next: b.url("other.test") + "/elsewhere?back=" + a.url("api.test") + "/final",
			want: []hit{{server: "a", path: "/start", auth: bearer}, {server: "a", path: "/same", auth: bearer},
				{server: "b", path: "/elsewhere"}, {server: "a", path: "/final", auth: bearer}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log.mu.Lock()
			log.hits = nil
			log.mu.Unlock()
			c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{a.addr, b.addr}})
			p := Policy{Allow: []Destination{a.dest(t, "api.test"), b.dest(t, "other.test"), b.dest(t, "api.test")}}
			// The plugin also sets its own credential-like headers; on the
			// foreign hop none of them may arrive either.
			h := http.Header{"Authorization": {"Bearer plugin"}, "Cookie": {"plugin=1"}, "X-Api-Key": {"plugin"}}
			start := a.url("api.test") + "/start?next=" + strings.ReplaceAll(tt.next, "?", "%3F")
			start = strings.ReplaceAll(start, "&", "%26")
			resp, err := c.Do(context.Background(), p, Request{URL: start, Header: h}, testInjector{}, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusOK {
				t.Fatalf("final status %d", resp.Status)
			}
			hits := log.all()
			if len(hits) != len(tt.want) {
				t.Fatalf("hits = %+v, want %d", hits, len(tt.want))
			}
			for i, w := range tt.want {
				h := hits[i]
				wantKey, wantCookie := "", ""
				if w.auth != "" {
					wantKey, wantCookie = realAPIKey, "sid="+realCookie
				}
				if h.server != w.server || h.path != w.path || h.auth != w.auth || h.key != wantKey || h.cookie != wantCookie {
					t.Errorf("hop %d = %+v, want server %s path %s auth %q key %q cookie %q", i, h, w.server, w.path, w.auth, wantKey, wantCookie)
				}
			}
		})
	}
}

func TestClient_Do_redirectWithoutInjectorDropsPluginCredentials(t *testing.T) {
	log := &redirectLog{}
	b := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { log.record("b", r) })
	a := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		log.record("a", r)
		http.Redirect(w, r, b.url("other.test")+"/x", http.StatusFound)
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{a.addr, b.addr}})
	p := Policy{Allow: []Destination{a.dest(t, "api.test"), b.dest(t, "other.test")}}
	h := http.Header{"Authorization": {"Bearer plugin"}, "Cookie": {"plugin=1"}, "Proxy-Authorization": {"x"}}
	if _, err := c.Do(context.Background(), p, Request{URL: a.url("api.test"), Header: h}, nil, Limits{}); err != nil {
		t.Fatal(err)
	}
	hits := log.all()
	if len(hits) != 2 || hits[0].auth != "Bearer plugin" || hits[0].cookie != "plugin=1" {
		t.Fatalf("first hop = %+v", hits)
	}
	if hits[1].auth != "" || hits[1].cookie != "" {
		t.Fatalf("cross-host hop carried the plugin's credentials: %+v", hits[1])
	}
}

func TestClient_Do_redirectDenied(t *testing.T) {
	var otherHits atomic.Int32
	other := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) })
	var target string
	a := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target)
		w.WriteHeader(http.StatusFound)
	})
	tests := []struct {
		name     string
		location string
		allow    []string
		want     string
	}{
		{"to private literal", "http://10.0.0.1:8080/", []string{"http://10.0.0.1:8080"}, "private address 10.0.0.1"},
		{"to metadata", "http://169.254.169.254/latest", []string{"http://169.254.169.254"}, "link-local"},
		{"to loopback literal", "http://127.0.0.1:1/", []string{"http://127.0.0.1:1"}, "loopback"},
		{"to name resolving private", "https://internal.test/", []string{"internal.test"}, "internal.test resolves to private address 10.0.0.1"},
		{"to undeclared host", other.url("other.test") + "/", nil, "other.test"},
		{"to other scheme", "ftp://api.test/", nil, `"ftp://api.test"`},
		{"to userinfo", "http://user:pw@api.test/", nil, "userinfo"},
		{"downgrade to http on 443", "http://api.test:443/", []string{"api.test:443"}, "http://api.test:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target = tt.location
			c, _, dials := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{a.addr}})
			p := Policy{Allow: []Destination{a.dest(t, "api.test")}}
			for _, s := range tt.allow {
				p.Allow = append(p.Allow, mustDest(t, s))
			}
			_, err := c.Do(context.Background(), p, Request{URL: a.url("api.test")}, testInjector{}, Limits{})
			e := wantCode(t, err, failure.EgressDenied)
			if !strings.Contains(e.Message, tt.want) {
				t.Fatalf("message %q, want %q", e.Message, tt.want)
			}
			if got := dials.attempts(); len(got) != 1 || got[0] != a.addr.String() {
				t.Fatalf("dials = %v, want only the first server", got)
			}
		})
	}
	if otherHits.Load() != 0 {
		t.Fatal("undeclared host was reached")
	}
}

func TestClient_Do_redirectMethods(t *testing.T) {
	log := &redirectLog{}
	var status atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		log.record("s", r)
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/next", int(status.Load()))
		}
	})
	tests := []struct {
		status     int
		method     string
		wantMethod string
		keepBody   bool
	}{
		{301, "POST", "GET", false},
		{302, "POST", "GET", false},
		{303, "POST", "GET", false},
		{303, "PUT", "GET", false},
		{303, "HEAD", "HEAD", false},
		{307, "POST", "POST", true},
		{307, "PUT", "PUT", true},
		{308, "POST", "POST", true},
		{308, "DELETE", "DELETE", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.method), func(t *testing.T) {
			log.mu.Lock()
			log.hits = nil
			log.mu.Unlock()
			status.Store(int32(tt.status))
			c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
			req := Request{Method: tt.method, URL: srv.url("api.test") + "/start", Body: []byte(`{"n":1}`),
				Header: http.Header{"Content-Type": {"application/json"}}}
			if tt.method == "HEAD" {
				req.Body = nil
			}
			if _, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, req, nil, Limits{}); err != nil {
				t.Fatal(err)
			}
			hits := log.all()
			if len(hits) != 2 || hits[1].path != "/next" {
				t.Fatalf("hits = %+v", hits)
			}
			second := hits[1]
			if second.method != tt.wantMethod {
				t.Fatalf("method after %d = %s, want %s", tt.status, second.method, tt.wantMethod)
			}
			wantBody, wantType := "", ""
			if tt.keepBody {
				wantBody, wantType = `{"n":1}`, "application/json"
			}
			if second.body != wantBody || second.contentType != wantType {
				t.Fatalf("after %d body=%q type=%q, want %q %q", tt.status, second.body, second.contentType, wantBody, wantType)
			}
		})
	}
}

func TestClient_Do_relativeRedirects(t *testing.T) {
	log := &redirectLog{}
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		log.record("s", r)
		switch r.URL.Path {
		case "/a/b/start":
			w.Header().Set("Location", "../c")
		case "/a/c":
			w.Header().Set("Location", "//"+r.Host+"/d?x=1#frag")
		case "/d":
			if r.URL.Query().Get("y") != "" {
				return
			}
			w.Header().Set("Location", "?y=2")
		default:
			return
		}
		w.WriteHeader(http.StatusFound)
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
	resp, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test") + "/a/b/start"}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range log.all() {
		paths = append(paths, h.path)
	}
	if strings.Join(paths, " ") != "/a/b/start /a/c /d /d" {
		t.Fatalf("paths = %v", paths)
	}
	if resp.URL != srv.url("api.test")+"/d?y=2" {
		t.Fatalf("final URL = %q", resp.URL)
	}
}

func TestClient_Do_redirectLimit(t *testing.T) {
	var hits atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	})
	tests := []struct {
		max      int
		wantHits int32
	}{
		{0, 11}, // default: 10 redirects followed
		{3, 4},
		{1, 2},
		{-1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			hits.Store(0)
			c, _, _ := newTestClient(t, Options{MaxRedirects: tt.max, AllowAddrs: []netip.AddrPort{srv.addr}})
			_, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test") + "/loop"}, nil, Limits{})
			wantCode(t, err, failure.TooManyRedirects)
			if hits.Load() != tt.wantHits {
				t.Fatalf("hits = %d, want %d", hits.Load(), tt.wantHits)
			}
		})
	}
}

func TestClient_Do_redirectWithoutLocation(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, "no location")
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
	resp, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test")}, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusFound || string(resp.Body) != "no location" {
		t.Fatalf("response = %d %q", resp.Status, resp.Body)
	}
}

func TestClient_Do_responseTooLarge(t *testing.T) {
	const total = 256 << 20
	written := make(chan int64, 1)
	streaming := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		var n int64
		for n < total {
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				break
			}
		}
		written <- n
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{streaming.addr}})
	p := Policy{Allow: []Destination{streaming.dest(t, "api.test")}}
	_, err := c.Do(context.Background(), p, Request{URL: streaming.url("api.test"), Timeout: 10 * time.Second}, nil, Limits{MaxResponseBytes: 1024})
	wantCode(t, err, failure.ResponseTooLarge)
	select {
	case n := <-written:
		if n >= total {
			t.Fatalf("server wrote all %d bytes; the client kept reading", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server handler still writing: the client did not close the body")
	}

	sized := func(size int, declared bool) *testServer {
		return newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
			if declared {
				w.Header().Set("Content-Length", fmt.Sprint(size))
			}
			w.Write(make([]byte, size))
		})
	}
	tests := []struct {
		name     string
		size     int
		declared bool
		ok       bool
	}{
		{"at cap", 1024, false, true},
		{"one over cap", 1025, false, false},
		{"declared over cap", 1 << 20, true, false},
		{"declared at cap", 1024, true, true},
		{"empty", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := sized(tt.size, tt.declared)
			c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
			resp, err := c.Do(context.Background(), Policy{Allow: []Destination{srv.dest(t, "api.test")}}, Request{URL: srv.url("api.test")}, nil, Limits{MaxResponseBytes: 1024})
			if !tt.ok {
				wantCode(t, err, failure.ResponseTooLarge)
				return
			}
			if err != nil || len(resp.Body) != tt.size {
				t.Fatalf("err = %v, body %d bytes", err, len(resp.Body))
			}
		})
	}
}

func TestClient_Do_timeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	p := Policy{Allow: []Destination{srv.dest(t, "api.test")}}
	deadline, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		req  Request
	}{
		{"request timeout, no headers", context.Background(), Request{URL: srv.url("api.test") + "/slow-head", Timeout: 100 * time.Millisecond}},
		{"request timeout, slow body", context.Background(), Request{URL: srv.url("api.test") + "/slow-body", Timeout: 100 * time.Millisecond}},
		{"context deadline", deadline, Request{URL: srv.url("api.test") + "/slow-head"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
			start := time.Now()
			_, err := c.Do(tt.ctx, p, tt.req, nil, Limits{})
			wantCode(t, err, failure.UpstreamTimeout)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want it to wrap context.DeadlineExceeded", err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Fatalf("took %v", elapsed)
			}
		})
	}
}

func TestClient_Do_unreachable(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	closedAddr := srv.addr
	srv.Close() // nothing listens there any more
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{closedAddr}})
	p := Policy{Allow: []Destination{mustDest(t, fmt.Sprintf("http://api.test:%d", closedAddr.Port())), mustDest(t, "nowhere.test")}}
	tests := []struct {
		name, url, want string
	}{
		{"connection refused", fmt.Sprintf("http://api.test:%d/?token=plugin-SECRET", closedAddr.Port()), "failed"},
		{"unknown name", "https://nowhere.test/", "cannot resolve nowhere.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Do(context.Background(), p, Request{URL: tt.url}, testInjector{}, Limits{})
			e := wantCode(t, err, failure.UpstreamUnreachable)
			if !strings.Contains(e.Message, tt.want) {
				t.Fatalf("message = %q, want %q", e.Message, tt.want)
			}
			for _, secret := range []string{"SECRET", realToken, "token="} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error reveals %q: %v", secret, err)
				}
			}
		})
	}
}

func TestClient_DialContext(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c, _, dials := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
	tests := []struct {
		network, address string
		code             failure.Code // "" means the dial succeeds
		internal         bool         // dial with DialInternal
	}{
		{"tcp", fmt.Sprintf("api.test:%d", srv.addr.Port()), "", false},
		{"tcp", srv.addr.String(), "", false},
		{"tcp", fmt.Sprintf("api.test:%d", srv.addr.Port()+1), failure.EgressDenied, false},
		{"tcp", "internal.test:443", failure.EgressDenied, false},
		{"tcp", "[::ffff:127.0.0.1]:80", failure.EgressDenied, false},
		{"udp", "api.test:53", failure.InvalidRequest, false},
		{"tcp", "api.test", failure.InvalidRequest, false},
		{"tcp", "api.test:0", failure.InvalidRequest, false},
		{"tcp", "api.test:http", failure.InvalidRequest, false},
		{"tcp", fmt.Sprintf("api.test:%d", srv.addr.Port()), "", true},
		{"tcp", "meta.test:80", failure.EgressDenied, true},
		{"tcp", "nat64.test:80", failure.EgressDenied, true},
		{"tcp", "[fd00:ec2::254]:80", failure.EgressDenied, true},
		{"tcp", "224.0.0.1:80", failure.EgressDenied, true},
		{"udp", "api.test:53", failure.InvalidRequest, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s internal=%v", tt.network, tt.address, tt.internal), func(t *testing.T) {
			dial := c.DialContext
			if tt.internal {
				dial = c.DialInternal
			}
			conn, err := dial(context.Background(), tt.network, tt.address)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				conn.Close()
				return
			}
			wantCode(t, err, tt.code)
		})
	}
	for _, a := range dials.attempts() {
		if a != srv.addr.String() {
			t.Fatalf("dialed %s", a)
		}
	}
}

func TestClient_Do_concurrent(t *testing.T) {
	var hits atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+realToken {
			http.Error(w, "bad auth", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, r.URL.Query().Get("n"))
	})
	c, _, _ := newTestClient(t, Options{AllowAddrs: []netip.AddrPort{srv.addr}})
	p := Policy{Allow: []Destination{srv.dest(t, "api.test")}}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n := fmt.Sprint(g*100 + i)
				resp, err := c.Do(context.Background(), p, Request{URL: srv.url("api.test") + "/?n=" + n}, testInjector{}, Limits{})
				if err != nil {
					t.Error(err)
					return
				}
				if resp.Status != 200 || string(resp.Body) != n {
					t.Errorf("got %d %q, want %q", resp.Status, resp.Body, n)
					return
				}
			}
		}()
	}
	wg.Wait()
	if hits.Load() != 16*20 {
		t.Fatalf("hits = %d", hits.Load())
	}
}
