package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

// The credentials the fake upstream accepts; the curl token must never
// reach it.
const (
	hubToken = "gho_REAL_user_token_123"
	keyValue = "key-REAL-456"
)

// stallPart is how much of its body /stall sends before it stalls.
const stallPart = 64 << 10

// seen is one request as the fake upstream received it.
type seen struct {
	Method, Path, RawPath, RawQuery string
	Header                          http.Header
	BodyBytes                       int64
}

// upstream is a fake API on 127.0.0.1 that checks credentials the way the
// real ones do: "hub" like GitHub (Authorization: Bearer <token>), "keyq"
// with an api_key query parameter.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	requests []seen
	received chan int64 // bytes of an /upload read so far, sent as they arrive
	hold     chan struct{}
	stalled  chan time.Time // when a /stall request ended, with its context
}

func (u *upstream) log() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.requests...)
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{received: make(chan int64, 1024), hold: make(chan struct{}), stalled: make(chan time.Time, 1)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(u.serve)}}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	rec := seen{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Header: r.Header.Clone()}
	defer func() {
		u.mu.Lock()
		u.requests = append(u.requests, rec)
		u.mu.Unlock()
	}()
	api, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch api {
	case "hub":
		if r.Header.Get("Authorization") != "Bearer "+hubToken {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"message":"Bad credentials"}`)
			return
		}
	case "keyq":
		if r.URL.Query()["api_key"] == nil || len(r.URL.Query()["api_key"]) != 1 || r.URL.Query().Get("api_key") != keyValue {
			http.Error(w, `{"error":"invalid api_key"}`, http.StatusForbidden)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	switch {
	case rest == "redirect":
		w.Header().Set("Location", "https://elsewhere.example/landing?x=1")
		w.WriteHeader(http.StatusFound)
	case rest == "cookies":
		w.Header().Add("Set-Cookie", "wb_session=stolen; Path=/")
		w.Header().Set("Strict-Transport-Security", "max-age=1")
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "secret")
		io.WriteString(w, "ok")
	case strings.HasPrefix(rest, "big"):
		n := parseSize(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		buf := make([]byte, 64<<10)
		for i := range buf {
			buf[i] = byte(i)
		}
		for n > 0 {
			k := min(n, int64(len(buf)))
			if _, err := w.Write(buf[:k]); err != nil {
				return
			}
			n -= k
		}
	case rest == "upload":
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Body.Read(buf)
			rec.BodyBytes += int64(k)
			if k > 0 {
				select {
				case u.received <- rec.BodyBytes:
				default:
				}
			}
			if err != nil {
				break
			}
		}
		json.NewEncoder(w).Encode(map[string]int64{"bytes": rec.BodyBytes})
	case rest == "stall":
		// A large download that sends its first part, then stalls (a slow
		// export) until the proxy gives up on it.
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		}
		w.Write(make([]byte, stallPart))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			u.stalled <- time.Now()
		case <-time.After(20 * time.Second):
		}
	case rest == "slow":
		<-u.hold
		io.WriteString(w, "late")
	default:
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodHead {
			b, _ := io.ReadAll(r.Body)
			rec.BodyBytes = int64(len(b))
		}
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "path": r.URL.Path})
	}
}

func parseSize(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// catalogMap is a Catalog over fixed manifests.
type catalogMap map[string]*manifest.Manifest

func (c catalogMap) Manifest(name string) (*manifest.Manifest, bool) { m, ok := c[name]; return m, ok }

// settingsMap is a Settings over a map of integration to base URL.
type settingsMap map[string]string

func (s settingsMap) Setting(integration, name string) (string, bool) {
	v, ok := s[integration]
	return v, ok && name == "base_url"
}

// connectedSet is Connections over the credentials in a Memory.
type connectedSet struct{ creds *credential.Memory }

func (c connectedSet) Connected(ctx context.Context, userID, integration string) (bool, error) {
	_, err := c.creds.Credential(ctx, userID, integration)
	return err == nil, nil
}

// fixture is a proxy service on a real SQLite store, mounted on a Fiber app
// listening on 127.0.0.1, in front of a fake upstream.
type fixture struct {
	t     testing.TB
	svc   *Service
	st    store.Store
	clock *storetest.Clock
	creds *credential.Memory
	up    *upstream
	base  string // http://127.0.0.1:port
	alice store.User
	bob   store.User
}

func manifests() catalogMap {
	return catalogMap{
		"hub": {Name: "hub", Proxy: &manifest.Proxy{BaseURL: "https://api.hub.example"},
			Auth: manifest.Auth{Mode: manifest.ModeOAuth2}},
		"keyq": {Name: "keyq", Proxy: &manifest.Proxy{BaseURL: "https://api.keyq.example/v1"},
			Auth: manifest.Auth{Mode: manifest.ModeAPIKey, APIKey: &manifest.APIKey{
				Fields:    []manifest.Field{{Name: "api_key", Label: "Key", Secret: true, Required: true}},
				Placement: manifest.Placement{In: "query", Name: "api_key", Value: "{api_key}"}}}},
		"toolsonly": {Name: "toolsonly", Auth: manifest.Auth{Mode: manifest.ModeNone}},
	}
}

func newFixture(t testing.TB, lim Limits) *fixture {
	t.Helper()
	return newFixtureWith(t, lim, nil)
}

// newFixtureWith is newFixture with configure (may be nil) changing the
// service's options before it is built.
func newFixtureWith(t testing.TB, lim Limits, configure func(o *Options, up *upstream)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: storetest.NewClock(time.Now().UTC()), creds: credential.NewMemory(), up: startUpstream(t)}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(f.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	if f.alice, err = st.CreateUser(ctx, store.NewUser{Email: "alice@example.com"}); err != nil {
		t.Fatal(err)
	}
	if f.bob, err = st.CreateUser(ctx, store.NewUser{Email: "bob@example.com"}); err != nil {
		t.Fatal(err)
	}
	f.creds.Set(f.alice.ID, "hub", &credential.Credential{AccessToken: hubToken})
	f.creds.Set(f.alice.ID, "keyq", &credential.Credential{Fields: map[string]string{"api_key": keyValue}})
	o := Options{Store: st, Catalog: manifests(), Credentials: f.creds, Connections: connectedSet{f.creds},
		Egress:    egress.NewClient(egress.Options{AllowPrivate: true}),
		Settings:  settingsMap{"hub": f.up.URL + "/hub", "keyq": f.up.URL + "/keyq"},
		PublicURL: "https://wb.example.com", Limits: lim, Now: f.clock.Now}
	if configure != nil {
		configure(&o, f.up)
	}
	if f.svc, err = New(o); err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true, StreamRequestBody: true, ReadTimeout: time.Minute})
	f.svc.Mount(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); f.svc.Run(runCtx) }()
	t.Cleanup(func() {
		app.ShutdownWithTimeout(5 * time.Second)
		stop()
		<-ran
		f.svc.Close()
	})
	f.base = "http://" + ln.Addr().String()
	return f
}

// mint mints a session for the user or fails the test.
func (f *fixture) mint(userID string, integrations ...string) Minted {
	f.t.Helper()
	m, err := f.svc.Mint(context.Background(), userID, integrations)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// do sends a request through the proxy with the token as a bearer.
func (f *fixture) do(method, path, token string, body io.Reader, header http.Header) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// raw sends a hand-written request (for targets and headers an HTTP client
// would clean up) and returns the status line's code and the body.
func (f *fixture) raw(request string) (int, string) {
	f.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		f.t.Fatalf("reading the response to %q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// calls waits until the audit log holds n rows for the user and returns
// them, oldest first.
func (f *fixture) calls(userID string, n int) []store.ProxyCall {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := f.st.ProxyCalls(context.Background(), store.ProxyCallFilter{UserID: userID, Limit: store.MaxProxyCallsPerPage})
		if err != nil {
			f.t.Fatal(err)
		}
		if len(rows) >= n || time.Now().After(deadline) {
			if len(rows) != n {
				f.t.Fatalf("audit holds %d rows for %s, want %d: %+v", len(rows), userID, n, rows)
			}
			for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
				rows[i], rows[j] = rows[j], rows[i]
			}
			return rows
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errorOf decodes a proxy error body.
func errorOf(t testing.TB, resp *http.Response) (code, message string) {
	t.Helper()
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("status %d: body is not a JSON error: %v", resp.StatusCode, err)
	}
	return body.Error.Code, body.Error.Message
}
