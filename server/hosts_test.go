package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
)

// TestServer_HostGuard reproduces DNS rebinding beyond /mcp: a page whose
// name re-resolves to a Workbench on loopback sends its own Host, and every
// route but the probes now refuses it.
func TestServer_HostGuard(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	tests := []struct {
		name, method, path, host string
		want                     int
	}{
		{"sign-in page", "GET", "/login", "evil.example", 403},
		{"sign-in", "POST", "/login", "evil.example", 403},
		{"client registration", "POST", "/oauth/register", "evil.example", 403},
		{"authorization", "GET", "/oauth/authorize", "evil.example:80", 403},
		{"jots", "GET", "/j/site/", "evil.example", 403},
		{"api", "GET", "/api/whoami", "evil.example", 403},
		{"mcp", "POST", "/mcp", "evil.example", 403},
		{"liveness by address", "GET", "/healthz", "10.0.0.7:8420", 200},
		{"readiness by address", "GET", "/readyz", "evil.example", 200},
		{"sign-in page on loopback", "GET", "/login", "localhost", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, w.base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
			r := fetch(t, req)
			if r.status != tt.want || (tt.want == 403 && !strings.Contains(r.body, "is not this server")) {
				t.Errorf("%s %s with Host %s = %d %q, want %d", tt.method, tt.path, tt.host, r.status, r.body, tt.want)
			}
		})
	}
}

// TestServer_JotsOrigin serves jots from JOTS_PUBLIC_URL on a second
// loopback name: jot and upload URLs point there, /j/ on the app's host
// redirects there, that host serves nothing but jots, and the app's session
// cookie is never sent to it.
func TestServer_JotsOrigin(t *testing.T) {
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	jotsURL := "http://localhost:" + port
	w := startWorkbench(t, Config{DataDir: t.TempDir(), ListenAddr: addr, JotsPublicURL: jotsURL})
	alice := newJotsAgent(t, w, "alice@example.com")

	dep := alice.must("jots_deploy_jot", map[string]any{"name": "weekly", "access": "public"})
	upload := dep["uploadUrl"].(string)
	if dep["url"] != jotsURL+"/j/weekly/" || !strings.HasPrefix(upload, jotsURL+"/j/_upload/") {
		t.Fatalf("deploy = %v, want URLs on %s", dep, jotsURL)
	}
	// An upload sent to the app's host is redirected, still a PUT.
	appUpload := w.base + strings.TrimPrefix(upload, jotsURL)
	if r := fetchJot(t, http.MethodPut, appUpload, bytes.NewReader(nil)); r.status != http.StatusPermanentRedirect || r.header.Get("Location") != upload {
		t.Fatalf("upload on the app host: %d %v", r.status, r.header)
	}
	site := tgz(t, tarballtest.Entry{Name: "index.html", Body: `<h1>Weekly</h1>`})
	if r := fetchJot(t, http.MethodPut, upload, bytes.NewReader(site)); r.status != 200 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	if r := fetchJot(t, "GET", w.base+"/j/weekly/?v=1", nil); r.status != http.StatusPermanentRedirect || r.header.Get("Location") != jotsURL+"/j/weekly/?v=1" {
		t.Fatalf("jot on the app host: %d %v", r.status, r.header)
	}
	if r := fetchJot(t, "GET", jotsURL+"/j/weekly/", nil); r.status != 200 || r.body != "<h1>Weekly</h1>" ||
		r.header.Get("Content-Security-Policy") != "sandbox allow-scripts allow-forms allow-popups" {
		t.Fatalf("jot on its host: %d %v %s", r.status, r.header, r.body)
	}
	// The jots host is no portal, API, OAuth server or MCP endpoint: a
	// jot cannot show the real sign-in page under its host name.
	for _, path := range []string{"/", "/login", "/api/whoami", "/oauth/authorize", "/mcp", "/static/portal.css"} {
		if r := fetchJot(t, "GET", jotsURL+path, nil); r.status != 404 || !strings.Contains(r.body, "serves jots only") {
			t.Errorf("GET %s on the jots host: %d %s", path, r.status, r.body)
		}
	}
	// A signed-in browser holds the session cookie for the app's host only.
	w.addUser(t, "bob@example.com")
	b := newBrowser(t, w.base)
	wantPage(t, "signed in", b.signIn(b.open("/account"), "bob@example.com"), 200)
	app, _ := url.Parse(w.base)
	if len(b.jar.Cookies(app)) == 0 {
		t.Fatal("no cookie for the app's host after signing in")
	}
	jotsHost, _ := url.Parse(jotsURL + "/j/weekly/")
	if cookies := b.jar.Cookies(jotsHost); len(cookies) != 0 {
		t.Errorf("the browser would send %v to the jots host", cookies)
	}
	if p := b.open(w.base + "/j/weekly/"); p.status != 200 || p.url != jotsURL+"/j/weekly/" {
		t.Errorf("following the app host's jot link: %d at %s", p.status, p.url)
	}
}

// fetch sends req without following redirects.
func fetch(t *testing.T, req *http.Request) jotFetch {
	t.Helper()
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return jotFetch{status: resp.StatusCode, header: resp.Header, body: string(data)}
}
