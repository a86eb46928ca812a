package proxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// TestService_Handle_injectsCredential checks that the upstream gets the
// user's real credential in the form its API expects, and never the curl
// token, the client's cookies or hop-by-hop headers.
func TestService_Handle_injectsCredential(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub", "keyq")
	if m.Endpoints["hub"] != "https://wb.example.com/c/hub/" || !strings.HasPrefix(m.Token, TokenPrefix) {
		t.Fatalf("Mint = %+v", m)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(m.Token+":"))
	tests := []struct {
		name, path, authz string
		wantPath, wantQ   string
	}{
		{"bearer", "/c/hub/user?per_page=2", "Bearer " + m.Token, "/hub/user", "per_page=2"},
		{"basic form", "/c/hub/repos/o/r", basic, "/hub/repos/o/r", ""},
		{"query api key replaces the client's", "/c/keyq/search?q=a%20b&api_key=evil&API_KEY=evil2", "Bearer " + m.Token, "/keyq/search", "q=a%20b&api_key=" + keyValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.up.log())
			code, body := f.raw("GET " + tt.path + " HTTP/1.1\r\nHost: wb.example.com\r\nAuthorization: " + tt.authz +
				"\r\nCookie: wb_session=portal-cookie\r\nConnection: X-Secret-Hop, keep-alive\r\nX-Secret-Hop: 1\r\nKeep-Alive: timeout=5\r\n" +
				"TE: trailers\r\nProxy-Authorization: Basic eDp5\r\nProxy-Custom: 1\r\nX-Forwarded-For: 10.0.0.1\r\nX-Custom: kept\r\n\r\n")
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			log := f.up.log()
			if len(log) != before+1 {
				t.Fatalf("upstream got %d requests, want 1", len(log)-before)
			}
			got := log[len(log)-1]
			if got.Path != tt.wantPath || got.RawQuery != tt.wantQ {
				t.Errorf("upstream saw %s?%s, want %s?%s", got.Path, got.RawQuery, tt.wantPath, tt.wantQ)
			}
			if got.Header.Get("X-Custom") != "kept" {
				t.Errorf("X-Custom was not forwarded: %v", got.Header)
			}
			for _, h := range []string{"Cookie", "X-Secret-Hop", "Keep-Alive", "Te", "Proxy-Authorization", "Proxy-Custom", "X-Forwarded-For"} {
				if v := got.Header.Values(h); v != nil {
					t.Errorf("upstream got %s: %v", h, v)
				}
			}
			assertNoToken(t, m.Token, got)
		})
	}
}

// assertNoToken fails if the curl token appears anywhere in what the
// upstream received.
func assertNoToken(t *testing.T, token string, s seen) {
	t.Helper()
	all := s.Path + s.RawPath + s.RawQuery
	for k, v := range s.Header {
		all += k + strings.Join(v, ",")
	}
	if strings.Contains(all, token) || strings.Contains(all, base64.StdEncoding.EncodeToString([]byte(token+":"))) {
		t.Fatalf("the curl token reached the upstream: %+v", s)
	}
}

// TestService_Handle_paths checks that traversal, encoding and
// absolute-URL tricks are refused before anything goes upstream, and that
// ordinary paths map under the base URL.
func TestService_Handle_paths(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	refused := []string{
		"/c/hub/../keyq/x",
		"/c/hub/a/../../admin",
		"/c/hub/%2e%2e/x",
		"/c/hub/a/.%2E/b",
		"/c/hub/%2E./x",
		"/c/hub/%252e%252e/x",
		"/c/hub/a%2fb",
		"/c/hub/a%2F..%2Fb",
		"/c/hub/a%5c..",
		"/c/hub/a\\..\\b",
		"/c/hub//evil.example/x",
		"/c/hub/a//b",
		"/c/hub/./user",
		"/c/hub/%00",
		"/c/hub/%zz",
		"http://evil.example/c/hub/user",
		"//evil.example/c/hub/user",
		"/c/HUB/user",
		"/c/h%75b/user",
	}
	for _, target := range refused {
		t.Run(target, func(t *testing.T) {
			before := len(f.up.log())
			code, body := f.raw("GET " + target + " HTTP/1.1\r\nHost: wb.example.com\r\nAuthorization: Bearer " + m.Token + "\r\n\r\n")
			if code < 400 || code >= 500 {
				t.Errorf("status %d, want a 4xx: %s", code, body)
			}
			if n := len(f.up.log()) - before; n != 0 {
				t.Errorf("%d requests reached the upstream: %+v", n, f.up.log()[before:])
			}
		})
	}
	allowed := []struct{ target, wantPath, wantRaw string }{
		{"/c/hub", "/hub", "/hub"},
		{"/c/hub/", "/hub/", "/hub/"},
		{"/c/hub/repos/o/r/contents/a%20b.txt", "/hub/repos/o/r/contents/a b.txt", "/hub/repos/o/r/contents/a%20b.txt"},
		{"/c/hub/users/@me/..x", "/hub/users/@me/..x", "/hub/users/@me/..x"},
	}
	for _, a := range allowed {
		code, body := f.raw("GET " + a.target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + m.Token + "\r\n\r\n")
		log := f.up.log()
		if code != http.StatusOK || log[len(log)-1].Path != a.wantPath || log[len(log)-1].RawPath != a.wantRaw {
			t.Errorf("%s: status %d, upstream path %q (%q), want %q (%q): %s", a.target, code, log[len(log)-1].Path, log[len(log)-1].RawPath, a.wantPath, a.wantRaw, body)
		}
	}
}

// TestService_Handle_pathParameters checks that a segment whose part before
// ";" is a dot segment, however it is encoded, gets the proxy's INVALID_PATH
// answer and never reaches the upstream (which may strip ";parameters" and
// read it as ".."), while ordinary path parameters pass.
func TestService_Handle_pathParameters(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	tests := []struct {
		target   string
		wantPath string // "" means refused with INVALID_PATH
	}{
		{"/c/hub/..;/keyq/x", ""},
		{"/c/hub/a/..;x=1/..;/admin", ""},
		{"/c/hub/%2e%2e%3b/keyq/x", ""},
		{"/c/hub/%2E%2E%3B/keyq/x", ""},
		{"/c/hub/..%3b/keyq/x", ""},
		{"/c/hub/%2e%2e;jsessionid=1/x", ""},
		{"/c/hub/.;/user", ""},
		{"/c/hub/%2e%3b/user", ""},
		{"/c/hub/%252e%252e%253b/x", ""},
		{"/c/hub/users;v=2", "/hub/users;v=2"},
		{"/c/hub/..x;y/z", "/hub/..x;y/z"},
		{"/c/hub/a/;..", "/hub/a/;.."},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			before := len(f.up.log())
			code, body := f.raw("GET " + tt.target + " HTTP/1.1\r\nHost: wb.example.com\r\nAuthorization: Bearer " + m.Token + "\r\n\r\n")
			log := f.up.log()[before:]
			if tt.wantPath != "" {
				if code != http.StatusOK || len(log) != 1 || log[0].Path != tt.wantPath {
					t.Fatalf("status %d, upstream saw %+v, want path %q: %s", code, log, tt.wantPath, body)
				}
				return
			}
			if code != http.StatusBadRequest || !strings.Contains(body, `"code":"INVALID_PATH"`) {
				t.Errorf("status %d, body %s; want 400 INVALID_PATH", code, body)
			}
			if len(log) != 0 {
				t.Errorf("%d requests reached the upstream: %+v", len(log), log)
			}
		})
	}
}

// TestService_Handle_operatorBaseURL checks that the operator's
// <NAME>_BASE_URL is reached on an internal address without
// EGRESS_ALLOW_PRIVATE, while a manifest's base URL on the same address is
// refused (also with a pooled connection to it waiting), and that an
// operator base URL resolving to a metadata address stays refused.
func TestService_Handle_operatorBaseURL(t *testing.T) {
	f := newFixtureWith(t, Limits{}, func(o *Options, up *upstream) {
		cat := manifests()
		cat["lan"] = &manifest.Manifest{Name: "lan", Proxy: &manifest.Proxy{BaseURL: up.URL + "/hub"}, Auth: manifest.Auth{Mode: manifest.ModeNone}}
		cat["imds"] = &manifest.Manifest{Name: "imds", Proxy: &manifest.Proxy{BaseURL: "https://imds.example"}, Auth: manifest.Auth{Mode: manifest.ModeNone}}
		o.Catalog = cat
		o.Settings = settingsMap{"hub": up.URL + "/hub", "imds": "http://imds.test"}
		o.Egress = egress.NewClient(egress.Options{Resolver: nameResolver{"imds.test": "169.254.169.254"}})
	})
	m := f.mint(f.alice.ID, "hub", "lan", "imds")
	tests := []struct {
		path   string
		status int
		want   string // in the body
	}{
		{"/c/hub/user", http.StatusOK, ""},
		{"/c/lan/user", http.StatusBadGateway, "loopback address 127.0.0.1"},
		{"/c/imds/latest/meta-data/", http.StatusBadGateway, "link-local address 169.254.169.254"},
		{"/c/hub/user", http.StatusOK, ""},
	}
	for _, tt := range tests {
		before := len(f.up.log())
		resp := f.do("GET", tt.path, m.Token, nil, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Fatalf("%s: status %d %s; want %d containing %q", tt.path, resp.StatusCode, body, tt.status, tt.want)
		}
		if reached := len(f.up.log()) - before; (reached > 0) != (tt.status == http.StatusOK) {
			t.Fatalf("%s: %d requests reached the upstream", tt.path, reached)
		}
		if tt.status != http.StatusOK && !strings.Contains(string(body), `"code":"EGRESS_DENIED"`) {
			t.Fatalf("%s: %s; want EGRESS_DENIED", tt.path, body)
		}
	}
}

// nameResolver maps test names to one address each.
type nameResolver map[string]string

func (r nameResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestService_Handle_refusals checks the 401, 403, 405 and 409 answers:
// each has a JSON reason, 401s a WWW-Authenticate challenge, and none
// reaches the upstream.
func TestService_Handle_refusals(t *testing.T) {
	f := newFixture(t, Limits{})
	ctx := context.Background()
	live := f.mint(f.alice.ID, "hub")
	revoked := f.mint(f.alice.ID, "hub")
	if err := f.st.RevokeCurlSession(ctx, f.alice.ID, revoked.SessionID); err != nil {
		t.Fatal(err)
	}
	// An expired session: minted with a clock 16 minutes back.
	expiredToken, hash, prefix := newToken()
	if _, err := f.st.CreateCurlSession(ctx, store.NewCurlSession{UserID: f.alice.ID, Integrations: []string{"hub"}, Hash: hash,
		Prefix: prefix, ExpiresAt: f.clock.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	apiToken, _, _ := secrets.NewToken()
	unknown, _, _ := newToken()
	tests := []struct {
		name, method, path, authz string
		status                    int
		code                      string
	}{
		{"no token", "GET", "/c/hub/user", "", 401, "MISSING_TOKEN"},
		{"garbage", "GET", "/c/hub/user", "Bearer nope", 401, "INVALID_TOKEN"},
		{"API token", "GET", "/c/hub/user", "Bearer " + apiToken, 401, "INVALID_TOKEN"},
		{"unknown", "GET", "/c/hub/user", "Bearer " + unknown, 401, "INVALID_TOKEN"},
		{"other scheme", "GET", "/c/hub/user", "Token " + live.Token, 401, "INVALID_TOKEN"},
		{"revoked", "GET", "/c/hub/user", "Bearer " + revoked.Token, 401, "TOKEN_REVOKED"},
		{"expired", "GET", "/c/hub/user", "Bearer " + expiredToken, 401, "TOKEN_EXPIRED"},
		{"wrong integration", "GET", "/c/keyq/user", "Bearer " + live.Token, 403, "WRONG_INTEGRATION"},
		{"TRACE", "TRACE", "/c/hub/user", "Bearer " + live.Token, 405, "METHOD_NOT_ALLOWED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.up.log())
			h := http.Header{}
			if tt.authz != "" {
				h.Set("Authorization", tt.authz)
			}
			resp := f.do(tt.method, tt.path, "", nil, h)
			challenge, allow := resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Allow")
			code, msg := errorOf(t, resp)
			if resp.StatusCode != tt.status || code != tt.code || msg == "" {
				t.Fatalf("%d %s %q, want %d %s", resp.StatusCode, code, msg, tt.status, tt.code)
			}
			if tt.status == 401 && !strings.HasPrefix(challenge, `Bearer realm="workbench curl session"`) {
				t.Errorf("WWW-Authenticate = %q", challenge)
			}
			if tt.status == 405 && !strings.Contains(allow, "PATCH") {
				t.Errorf("Allow = %q", allow)
			}
			if n := len(f.up.log()) - before; n != 0 {
				t.Errorf("%d requests reached the upstream", n)
			}
		})
	}
	// The token dies when its 15 minutes are up.
	f.clock.Advance(DefaultTTL)
	if code, _ := errorOf(t, f.do("GET", "/c/hub/user", live.Token, nil, nil)); code != "TOKEN_EXPIRED" {
		t.Errorf("after 15 minutes: %s, want TOKEN_EXPIRED", code)
	}
	// The user's connection goes away: a clear 409, audited.
	fresh := f.mint(f.alice.ID, "hub")
	f.creds.Delete(f.alice.ID, "hub")
	resp := f.do("GET", "/c/hub/user", fresh.Token, nil, nil)
	if code, msg := errorOf(t, resp); resp.StatusCode != http.StatusConflict || code != "NOT_CONNECTED" || !strings.Contains(msg, "connect('hub')") {
		t.Errorf("connection gone: %d %s %q", resp.StatusCode, code, msg)
	}
	// Audited: the wrong integration and the 409. TRACE is refused before
	// the caller is known, and invalid tokens have no user to audit.
	rows := f.calls(f.alice.ID, 2)
	if rows[0].Status != http.StatusForbidden || rows[0].Error != "WRONG_INTEGRATION" || rows[0].Integration != "keyq" {
		t.Errorf("audit of the 403: %+v", rows[0])
	}
	if last := rows[len(rows)-1]; last.Status != http.StatusConflict || last.Error != "NOT_CONNECTED" {
		t.Errorf("audit of the 409: %+v", last)
	}
}

// TestService_Handle_methodsAndRedirects checks every forwarded method and
// that an upstream redirect comes back as it is, not followed.
func TestService_Handle_methodsAndRedirects(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		var body io.Reader
		if method == "POST" || method == "PUT" || method == "PATCH" {
			body = strings.NewReader(`{"title":"x"}`)
		}
		resp := f.do(method, "/c/hub/items/1", m.Token, body, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		log := f.up.log()
		if resp.StatusCode != 200 || log[len(log)-1].Method != method {
			t.Errorf("%s: status %d, upstream saw %s: %s", method, resp.StatusCode, log[len(log)-1].Method, b)
		}
		if method == "HEAD" && (len(b) != 0 || resp.ContentLength <= 0) {
			t.Errorf("HEAD: body %q, Content-Length %d", b, resp.ContentLength)
		}
	}
	before := len(f.up.log())
	resp := f.do("GET", "/c/hub/redirect", m.Token, nil, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://elsewhere.example/landing?x=1" || len(f.up.log()) != before+1 {
		t.Errorf("redirect: %d Location %q, %d upstream requests", resp.StatusCode, resp.Header.Get("Location"), len(f.up.log())-before)
	}
	resp = f.do("GET", "/c/hub/cookies", m.Token, nil, nil)
	resp.Body.Close()
	h := resp.Header
	if h.Get("Set-Cookie") != "" || h.Get("Strict-Transport-Security") != "" || h.Get("X-Hop") != "" || h.Get("X-Upstream") != "yes" ||
		!slices.Contains(h.Values("Content-Security-Policy"), "sandbox") || h.Get("X-Content-Type-Options") != "nosniff" || len(h.Values("Date")) != 1 {
		t.Errorf("response headers: %v", h)
	}
}

// TestService_Handle_streamsDownload sends 100 MiB through the proxy and
// checks that the memory allocated meanwhile stays far below the body size.
func TestService_Handle_streamsDownload(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	const size = 100 << 20
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			path := fmt.Sprintf("/c/hub/big?n=%d", size)
			if chunked {
				path += "&chunked=1"
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			})
			resp := f.do("GET", path, m.Token, nil, nil)
			buf := make([]byte, 64<<10)
			n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, buf)
			resp.Body.Close()
			close(stop)
			wg.Wait()
			runtime.ReadMemStats(&after)
			if err != nil || n != size || resp.StatusCode != 200 {
				t.Fatalf("got %d bytes, status %d, err %v", n, resp.StatusCode, err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			growth := int64(peak.Load()) - int64(before.HeapInuse)
			t.Logf("100 MiB streamed: %.1f MiB allocated in total, heap grew by at most %.1f MiB", float64(alloc)/(1<<20), float64(growth)/(1<<20))
			if alloc > 24<<20 || growth > 24<<20 {
				t.Fatalf("streaming 100 MiB allocated %d bytes (heap +%d): the body is being buffered", alloc, growth)
			}
		})
	}
	rows := f.calls(f.alice.ID, 2)
	for _, r := range rows {
		if r.BytesOut != size || r.Status != 200 || r.Error != "" {
			t.Errorf("audit of the download: %+v", r)
		}
	}
}

// TestService_Handle_abandonedDownload checks that a client leaving in the
// middle of a download ends the upstream exchange within a second, even
// while the upstream sends nothing: the client has read all it was sent,
// so no write to it fails.
func TestService_Handle_abandonedDownload(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			path := "/c/hub/stall"
			if chunked {
				path += "?chunked=1"
			}
			resp := f.do("GET", path, m.Token, nil, nil)
			if _, err := io.ReadFull(resp.Body, make([]byte, stallPart)); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close() // unfinished: the transport closes the connection
			left := time.Now()
			select {
			case ended := <-f.up.stalled:
				if d := ended.Sub(left); d > time.Second {
					t.Errorf("the upstream exchange ended %v after the client left, want within 1s", d)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the upstream exchange outlived its client")
			}
		})
	}
	for _, r := range f.calls(f.alice.ID, 2) {
		if r.Status != 200 || r.Error != "CLIENT_ABORTED" || r.BytesOut != stallPart {
			t.Errorf("audit of an abandoned download: %+v", r)
		}
	}
}

// TestService_Handle_streamsUpload checks that the upstream receives the
// start of a body while the client is still sending the rest: the client
// sends the next part only after the upstream has seen the previous one,
// which would deadlock if the proxy buffered the body.
func TestService_Handle_streamsUpload(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub")
	const part, parts = 1 << 20, 8
	for _, chunked := range []bool{true, false} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			pr, pw := io.Pipe()
			go func() {
				chunk := make([]byte, part)
				for i := range parts {
					if _, err := pw.Write(chunk); err != nil {
						return
					}
					want := int64(i+1) * part
					deadline := time.After(10 * time.Second)
				wait:
					for {
						select {
						case got := <-f.up.received:
							if got >= want {
								break wait
							}
						case <-deadline:
							pw.CloseWithError(fmt.Errorf("the upstream did not see byte %d within 10s: the upload is buffered", want))
							return
						}
					}
				}
				pw.Close()
			}()
			req, _ := http.NewRequest("PUT", f.base+"/c/hub/upload", pr)
			if !chunked {
				req.ContentLength = part * parts
			}
			req.Header.Set("Authorization", "Bearer "+m.Token)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ Bytes int64 }
			json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if resp.StatusCode != 200 || out.Bytes != part*parts {
				t.Fatalf("status %d, upstream read %d bytes, want %d", resp.StatusCode, out.Bytes, part*parts)
			}
		})
	}
	for _, r := range f.calls(f.alice.ID, 2) {
		if r.BytesIn != part*parts || r.Method != "PUT" || r.Path != "/upload" {
			t.Errorf("audit of the upload: %+v", r)
		}
	}
}

// TestService_Handle_limits checks each limit's refusal names it.
func TestService_Handle_limits(t *testing.T) {
	f := newFixture(t, Limits{MaxRequestBytes: 1000, MaxResponseBytes: 5000, MaxHeaders: 20, MaxHeaderBytes: 2048, MaxConcurrent: 2, MaxTargetBytes: 512})
	m := f.mint(f.alice.ID, "hub")
	big := http.Header{"X-Big": {strings.Repeat("a", 2100)}}
	tests := []struct {
		name   string
		resp   func() *http.Response
		status int
		code   string
		limit  string
	}{
		{"headers", func() *http.Response { return f.do("GET", "/c/hub/user", m.Token, nil, big) }, 431, "HEADERS_TOO_LARGE", "2048"},
		{"target", func() *http.Response { return f.do("GET", "/c/hub/"+strings.Repeat("a", 600), m.Token, nil, nil) }, 414, "URI_TOO_LONG", "512"},
		{"declared body", func() *http.Response {
			return f.do("POST", "/c/hub/upload", m.Token, strings.NewReader(strings.Repeat("b", 1001)), nil)
		}, 413, "REQUEST_TOO_LARGE", "1000"},
		{"chunked body", func() *http.Response {
			return f.do("POST", "/c/hub/upload", m.Token, io.MultiReader(strings.NewReader(strings.Repeat("b", 3000))), nil)
		}, 413, "REQUEST_TOO_LARGE", "1000"},
		{"declared response", func() *http.Response { return f.do("GET", "/c/hub/big?n=6000", m.Token, nil, nil) }, 502, "RESPONSE_TOO_LARGE", "5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.resp()
			code, msg := errorOf(t, resp)
			if resp.StatusCode != tt.status || code != tt.code || !strings.Contains(msg, tt.limit) {
				t.Errorf("%d %s %q, want %d %s naming %s", resp.StatusCode, code, msg, tt.status, tt.code, tt.limit)
			}
		})
	}
	// A chunked response over the limit is cut: the client sees a broken body.
	resp := f.do("GET", "/c/hub/big?n=6000&chunked=1", m.Token, nil, nil)
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil || n > 5000 {
		t.Errorf("chunked response over the limit: read %d bytes, err %v", n, err)
	}

	// Concurrency: two calls hold the session's slots, the third is 429.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			r := f.do("GET", "/c/hub/slow", m.Token, nil, nil)
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.svc.mu.Lock()
		n := f.svc.inFlight[m.SessionID]
		f.svc.mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp = f.do("GET", "/c/hub/user", m.Token, nil, nil)
	if code, msg := errorOf(t, resp); resp.StatusCode != 429 || code != "TOO_MANY_REQUESTS" || !strings.Contains(msg, "2") {
		t.Errorf("third concurrent call: %d %s %q", resp.StatusCode, code, msg)
	}
	close(f.up.hold)
	wg.Wait()
	if resp := f.do("GET", "/c/hub/user", m.Token, nil, nil); resp.StatusCode != 200 {
		t.Errorf("after the slow calls: %d", resp.StatusCode)
	}
}

// TestService_Handle_audit checks what one call leaves in the audit log:
// the path with query names but no values, sizes, and nothing secret.
func TestService_Handle_audit(t *testing.T) {
	f := newFixture(t, Limits{})
	m := f.mint(f.alice.ID, "hub", "keyq")
	resp := f.do("POST", "/c/keyq/search?q=secret-query&api_key=evil&page=2", m.Token, strings.NewReader(`{"a":1}`), nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp = f.do("GET", "/c/hub/nope/x?token=abc", m.Token, nil, nil) // upstream 200 with JSON for any path
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rows := f.calls(f.alice.ID, 2)
	r := rows[0]
	if r.Integration != "keyq" || r.Method != "POST" || r.Path != "/search?q&api_key&page" || r.Status != 200 || r.BytesIn != 7 ||
		r.BytesOut == 0 || r.Duration <= 0 || r.SessionID != m.SessionID || r.TenantID != store.DefaultTenant {
		t.Errorf("audit row = %+v", r)
	}
	for _, row := range rows {
		text := fmt.Sprintf("%+v", row)
		for _, secret := range []string{m.Token, keyValue, hubToken, "secret-query", "evil", "abc"} {
			if strings.Contains(text, secret) {
				t.Errorf("audit row holds %q: %s", secret, text)
			}
		}
	}
	if _, err := f.st.ProxyCalls(context.Background(), store.ProxyCallFilter{UserID: f.bob.ID}); err != nil {
		t.Fatal(err)
	}
}

// TestService_Mint checks all-or-nothing minting and the stored record.
func TestService_Mint(t *testing.T) {
	f := newFixture(t, Limits{})
	ctx := context.Background()
	_, err := f.svc.Mint(ctx, f.bob.ID, []string{"hub", "nope", "toolsonly", "keyq"})
	var me *MintError
	if !errors.As(err, &me) || len(me.Problems) != 4 {
		t.Fatalf("Mint = %v, want a MintError with 4 problems", err)
	}
	want := map[string]error{"hub": failure.ErrNotConnected, "keyq": failure.ErrNotConnected, "nope": failure.ErrUnknownIntegration, "toolsonly": failure.ErrNoProxy}
	for _, p := range me.Problems {
		if !errors.Is(p.Err, want[p.Integration]) || !strings.Contains(err.Error(), p.Integration) {
			t.Errorf("problem %s: %v, want %v", p.Integration, p.Err, want[p.Integration])
		}
	}
	if !errors.Is(err, failure.ErrNoProxy) || !errors.Is(err, failure.ErrUnknownIntegration) || !errors.Is(err, failure.ErrNotConnected) {
		t.Errorf("errors.Is does not see every reason in %v", err)
	}
	if list, _ := f.st.CurlSessions(ctx, f.bob.ID); len(list) != 0 {
		t.Fatalf("a refused mint stored %d sessions", len(list))
	}
	m := f.mint(f.alice.ID, "keyq", "hub", "hub")
	rec, err := f.st.CurlSessionByHash(ctx, secrets.HashToken(m.Token))
	if err != nil || rec.UserID != f.alice.ID || !slices.Equal(rec.Integrations, []string{"hub", "keyq"}) ||
		!rec.ExpiresAt.Equal(f.clock.Now().Add(DefaultTTL).UTC().Truncate(time.Microsecond)) || !m.ExpiresAt.Equal(rec.ExpiresAt) {
		t.Fatalf("stored session = %+v, %v (minted %+v)", rec, err, m)
	}
	if _, err := f.svc.Mint(ctx, f.alice.ID, nil); err == nil {
		t.Error("Mint with no integrations succeeded")
	}
}

// TestService_Prune checks that the sweep removes old sessions and rows.
func TestService_Prune(t *testing.T) {
	f := newFixture(t, Limits{})
	ctx := context.Background()
	m := f.mint(f.alice.ID, "hub")
	resp := f.do("GET", "/c/hub/user", m.Token, nil, nil)
	resp.Body.Close()
	f.calls(f.alice.ID, 1)
	f.clock.Advance(DefaultTTL + DefaultSessionKeep + time.Second)
	f.svc.Prune(ctx)
	if _, err := f.st.CurlSessionByHash(ctx, secrets.HashToken(m.Token)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an old session survived: %v", err)
	}
	if rows, _ := f.st.ProxyCalls(ctx, store.ProxyCallFilter{}); len(rows) != 1 {
		t.Errorf("audit rows younger than 30 days were pruned: %d left", len(rows))
	}
	f.clock.Advance(DefaultAuditRetention)
	f.svc.Prune(ctx)
	if rows, _ := f.st.ProxyCalls(ctx, store.ProxyCallFilter{}); len(rows) != 0 {
		t.Errorf("%d audit rows older than 30 days survived", len(rows))
	}
}
