package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/workbench-dev/workbench/internal/wattest"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/toolcall"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// authPlugins are the auth blocks of the fetch fixtures the connect tests
// load, by integration name. Each plugin's <name>_whoami GETs
// <base_url>/whoami with the user's credential attached by the host.
var authPlugins = map[string]string{
	"keyed": `{"mode":"apikey","apikey":{"fields":[` +
		`{"name":"site","label":"Site","required":true,"pattern":"[a-z0-9-]+","placeholder":"acme"},` +
		`{"name":"api_key","label":"API key","secret":true,"required":true}],` +
		`"placement":{"in":"header","name":"X-Api-Key","value":"{api_key}"}}}`,
	"oauthy": `{"mode":"oauth2","oauth2":{"authorizeUrl":"https://auth.oauthy.example/authorize","tokenUrl":"https://auth.oauthy.example/token",` +
		`"scopes":["read","write"],"tokenAuth":"basic"}}`,
	"posty": `{"mode":"oauth2","oauth2":{"authorizeUrl":"https://auth.posty.example/authorize","tokenUrl":"https://auth.posty.example/token",` +
		`"scopes":["read"],"tokenAuth":"post"}}`,
}

// buildAuthPlugins compiles the fetch fixture for every authPlugins entry
// into dir/<name>.wasm (an operator PLUGINS_DIR).
func buildAuthPlugins(t *testing.T, dir string) {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "fetch.wat.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, auth := range authPlugins {
		m := fmt.Sprintf(`{"abi":1,"name":%q,"version":"1.0.0","title":"%s service","description":"Fetches /whoami.",`+
			`"baseUrl":"https://api.%s.example","auth":%s,"tools":[`+
			`{"slug":"%s_whoami","description":"Who am I.","inputSchema":{"type":"object"},"annotations":{"readOnly":true}},`+
			`{"slug":"%s_fail","description":"Always fails.","inputSchema":{"type":"object"}}]}`,
			name, strings.ToUpper(name[:1])+name[1:], name, auth, name, name)
		var src bytes.Buffer
		if err := tmpl.Execute(&src, struct {
			Manifest    string
			ManifestLen int
			Prefix      string
		}{wattest.Escape(m), len(m), name}); err != nil {
			t.Fatal(err)
		}
		wattest.CompileTo(t, src.Bytes(), filepath.Join(dir, name+".wasm"))
	}
}

// whoamiAPI is a fake upstream on 127.0.0.1 that answers /whoami with the
// credential headers it received.
func whoamiAPI(t *testing.T) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/whoami" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"authorization": r.Header.Get("Authorization"), "apiKey": r.Header.Get("X-Api-Key")})
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// freeAddr returns a 127.0.0.1 address with a port free right now, so a
// server's SERVER_PUBLIC_URL (which defaults to http://LISTEN_ADDR) is the
// address it really listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// workbench is a running server with its first-start notices.
type workbench struct {
	*runningServer
	notices *lockedBuffer
}

// startWorkbench runs a server on cfg (ListenAddr free if unset) and waits
// until its plugins are loaded. It stops when the test ends.
func startWorkbench(t *testing.T, cfg Config) *workbench {
	t.Helper()
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = freeAddr(t)
	}
	if cfg.BuiltinPluginsDir == "" {
		cfg.BuiltinPluginsDir = t.TempDir()
	}
	logs, notices := new(lockedBuffer), new(lockedBuffer)
	cfg.Announce = notices
	srv, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningServer{srv: srv, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { rs.done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-rs.done:
		t.Fatalf("Run ended before listening: %v\n%s", err, logs)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not listen within 20s")
	}
	rs.base = "http://" + srv.Addr()
	t.Cleanup(func() { rs.stop(t) })
	deadline := time.Now().Add(30 * time.Second)
	for h := srv.PluginHealth(); h.Loading; h = srv.PluginHealth() {
		if time.Now().After(deadline) {
			t.Fatal("plugins did not load within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := srv.PluginHealth(); h.Failed > 0 {
		t.Fatalf("%d plugins failed to load:\n%s", h.Failed, logs)
	}
	return &workbench{runningServer: rs, notices: notices}
}

const testPassword = "correct horse battery"

// testPasswordHash is an argon2id hash of testPassword with cheap parameters
// the verifier accepts: sign-ins run the real verification without the cost
// of the production parameters (slow on purpose, more so under the race
// detector).
var testPasswordHash = sync.OnceValue(func() string {
	salt := []byte("0123456789abcdef")
	sum := argon2.IDKey([]byte(testPassword), salt, 1, 64, 1, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=64,t=1,p=1$%s$%s", argon2.Version,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum))
})

// addUser creates a user with testPassword in the server's store.
func (w *workbench) addUser(t *testing.T, email string) store.User {
	t.Helper()
	u, err := w.srv.store.CreateUser(context.Background(), store.NewUser{Email: email, PasswordHash: testPasswordHash()})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// callTool runs a plugin tool as a user, the way /mcp would.
func (w *workbench) callTool(t *testing.T, userID, integration, tool string) (map[string]string, error) {
	t.Helper()
	snap, release := w.srv.reg.Acquire()
	defer release()
	in, ok := snap.Integration(integration)
	if !ok {
		t.Fatalf("integration %s is not loaded", integration)
	}
	out, err := in.Plugin.Call(context.Background(), toolcall.Call{Tool: tool, UserID: userID, Input: []byte(`{}`)})
	if err != nil {
		return nil, err
	}
	var seen map[string]string
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("tool output %s: %v", out, err)
	}
	return seen, nil
}

// webBrowser is an HTTP client with a cookie jar, like a person's browser.
type webBrowser struct {
	t    *testing.T
	jar  http.CookieJar
	base string
}

func newBrowser(t *testing.T, base string) *webBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &webBrowser{t: t, jar: jar, base: base}
}

// page is one response.
type page struct {
	status   int
	location string // of a redirect
	url      string // where a followed request ended
	body     string
}

// do sends a request; follow makes it follow redirects like a browser.
func (b *webBrowser) do(method, target string, form url.Values, follow bool) page {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.base + target
	}
	client := &http.Client{Jar: b.jar, Timeout: 15 * time.Second}
	if !follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		b.t.Fatal(err)
	}
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), url: resp.Request.URL.String(), body: string(data)}
}

func (b *webBrowser) get(target string) page { return b.do(http.MethodGet, target, nil, false) }

func (b *webBrowser) open(target string) page { return b.do(http.MethodGet, target, nil, true) }

func (b *webBrowser) post(target string, form url.Values) page {
	return b.do(http.MethodPost, target, form, false)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func formToken(t *testing.T, p page) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("page %s has no form:\n%s", p.url, p.body)
	}
	return m[1]
}

// signIn signs in on the login page p (opened by following a redirect to
// it, or fetched) and follows the redirect back; it returns the page the
// sign-in lands on.
func (b *webBrowser) signIn(p page, email string) page {
	b.t.Helper()
	next := regexp.MustCompile(`name="next" value="([^"]*)"`).FindStringSubmatch(p.body)
	if next == nil {
		b.t.Fatalf("not a sign-in page:\n%s", p.body)
	}
	form := url.Values{"csrf": {formToken(b.t, p)}, "email": {email}, "password": {testPassword}, "next": {htmlUnescape(next[1])}}
	return b.do(http.MethodPost, "/login", form, true)
}

// htmlUnescape undoes html/template's escaping of an attribute value.
func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// wantPage fails unless p has the status and its body every string.
func wantPage(t *testing.T, what string, p page, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: status %d, want %d (at %s)\n%s", what, p.status, status, p.url, p.body)
	}
	for _, c := range contains {
		if !strings.Contains(p.body, c) {
			t.Fatalf("%s: page lacks %q\n%s", what, c, p.body)
		}
	}
}

// authenticates reports whether an API token authenticates on the server.
func (w *workbench) authenticates(token string) bool {
	_, err := accounts.Authenticate(context.Background(), w.srv.store, token)
	return err == nil
}

// serviceOf returns the server's service of type T.
func serviceOf[T any](t testing.TB, s *Server) T {
	t.Helper()
	for _, svc := range s.services {
		if v, ok := svc.(T); ok {
			return v
		}
	}
	var zero T
	t.Fatalf("the server has no %T", zero)
	return zero
}
