package customapps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/customapps"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/toolcall"
)

// memStore keeps apps in memory, as the SQL store does (storetest covers
// that one).
type memStore struct {
	mu   sync.Mutex
	apps []store.CustomApp
	cred map[string]store.Connection
}

func (m *memStore) CreateCustomApp(_ context.Context, a store.NewCustomApp, cred *store.Connection) (store.CustomApp, error) {
	if err := store.CheckNewCustomApp(a, cred); err != nil {
		return store.CustomApp{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, old := range m.apps {
		if old.UserID == a.UserID && old.Name == a.Name {
			return store.CustomApp{}, store.ErrConflict
		}
	}
	rec := store.CustomApp{ID: a.ID, UserID: a.UserID, Name: a.Name, URL: a.URL, Auth: a.Auth}
	m.apps = append(m.apps, rec)
	if cred != nil {
		m.cred[a.ID] = *cred
	}
	return rec, nil
}

func (m *memStore) CustomApps(_ context.Context, userID string) ([]store.CustomApp, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.CustomApp
	for _, a := range m.apps {
		if a.UserID == userID {
			out = append(out, a)
		}
	}
	return out, nil
}

func (m *memStore) DeleteCustomApp(_ context.Context, userID, name string) (store.CustomApp, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.apps {
		if a.UserID == userID && a.Name == name {
			m.apps = append(m.apps[:i], m.apps[i+1:]...)
			delete(m.cred, a.ID)
			return a, nil
		}
	}
	return store.CustomApp{}, store.ErrNotFound
}

// plainCredentials "seals" a token as itself: the sealing is the
// connection service's, tested there.
type plainCredentials struct{}

func (plainCredentials) SealBearer(_ context.Context, userID, appID, token string) (store.Connection, error) {
	return store.Connection{UserID: userID, Integration: appID, Mode: "oauth2", Sealed: []byte(token), KeyID: "k"}, nil
}

func (c plainCredentials) Bearer(_ context.Context, userID, appID string) (string, error) {
	return "", errors.New("not used: the test service reads memStore")
}

// storeCredentials reads the token memStore kept.
type storeCredentials struct {
	plainCredentials
	st *memStore
}

func (c storeCredentials) Bearer(_ context.Context, _, appID string) (string, error) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return string(c.st.cred[appID].Sealed), nil
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// remote is an MCP server over streamable HTTP, built with the go-sdk:
// echo, get-sum, an image tool and a failing tool. It counts tools/list
// requests and records the Authorization headers it saw.
type remote struct {
	server *sdk.Server
	http   *httptest.Server
	lists  atomic.Int32
	mu     sync.Mutex
	auth   []string
}

func newRemote(t *testing.T, extraTools int) *remote {
	r := &remote{server: sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)}
	obj := &sdk.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	add := func(name string, h sdk.ToolHandler) {
		tool := *obj
		tool.Name, tool.Description = name, "The "+name+" tool."
		r.server.AddTool(&tool, h)
	}
	add("echo", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + string(req.Params.Arguments)}}}, nil
	})
	add("get-sum", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ A, B float64 }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil
	})
	add("image", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 14*1024)}}}, nil
	})
	add("fails", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the widget is broken"}}}, nil
	})
	for i := range extraTools {
		add(fmt.Sprintf("extra-%d", i), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return r.server }, nil)
	r.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			if bytes.Contains(body, []byte(`"tools/list"`)) {
				r.lists.Add(1)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.http.Close)
	return r
}

const alice, bob = "usr_alice", "usr_bob"

// harness is a Service over a memStore, a settable clock and an HTTP client
// through egress (private addresses allowed unless strict).
type harness struct {
	st    *memStore
	clock *clock
	svc   *customapps.Service
}

func newHarness(t *testing.T, strict bool, opts customapps.Options) *harness {
	t.Helper()
	h := &harness{st: &memStore{cred: map[string]store.Connection{}}, clock: &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	opts.Store, opts.Now = h.st, h.clock.Now
	opts.Credentials = storeCredentials{st: h.st}
	ec := egress.NewClient(egress.Options{AllowPrivate: !strict})
	t.Cleanup(ec.Close)
	if opts.HTTPClient == nil {
		opts.HTTPClient = customapps.NewHTTPClient(ec.DialContext, 0)
	}
	svc, err := customapps.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

func (h *harness) add(t *testing.T, user string, app customapps.NewApp) {
	t.Helper()
	if _, err := h.svc.Add(context.Background(), user, app); err != nil {
		t.Fatalf("Add %s: %v", app.Name, err)
	}
}

// call runs an app tool of the user through the integration the catalog
// gets, and returns its result or coded error.
func (h *harness) call(t *testing.T, user, slug, args string) (json.RawMessage, *failure.Error) {
	t.Helper()
	ins, err := h.svc.Integrations(context.Background(), user)
	if err != nil {
		t.Fatalf("Integrations: %v", err)
	}
	app, _, _ := strings.Cut(slug, "__")
	for _, in := range ins {
		if in.Name != app {
			continue
		}
		out, err := in.Caller.Call(context.Background(), toolcall.Call{Tool: slug, UserID: user, Input: []byte(args)})
		if err == nil {
			return out, nil
		}
		var fe *failure.Error
		if !errors.As(err, &fe) {
			t.Fatalf("call %s: error %v is not a *failure.Error", slug, err)
		}
		return nil, fe
	}
	t.Fatalf("user %s has no app %s", user, app)
	return nil, nil
}

func TestService_Integrations(t *testing.T) {
	r := newRemote(t, 0)
	h := newHarness(t, false, customapps.Options{ToolsTTL: time.Minute})
	h.add(t, alice, customapps.NewApp{Name: "everything", URL: r.http.URL})
	ins, err := h.svc.Integrations(context.Background(), alice)
	if err != nil || len(ins) != 1 {
		t.Fatalf("Integrations = %v, %v", ins, err)
	}
	in := ins[0]
	var slugs []string
	for _, tool := range in.Manifest().Tools {
		slugs = append(slugs, tool.Slug)
	}
	if want := "everything__echo everything__fails everything__get-sum everything__image"; !in.Custom || in.Builtin || strings.Join(slugs, " ") != want {
		t.Fatalf("integration %s custom %v builtin %v tools %v, want custom with %s", in.Name, in.Custom, in.Builtin, slugs, want)
	}
	if others, _ := h.svc.Integrations(context.Background(), bob); len(others) != 0 {
		t.Fatalf("bob sees %d apps", len(others))
	}
	// Within the TTL the list is reused (the same integration); after it,
	// fetched again.
	again, _ := h.svc.Integrations(context.Background(), alice)
	if again[0] != in || r.lists.Load() != 1 {
		t.Fatalf("within the TTL: same integration %v, %d listings", again[0] == in, r.lists.Load())
	}
	h.clock.Advance(time.Minute)
	r.server.RemoveTools("image")
	later, _ := h.svc.Integrations(context.Background(), alice)
	if later[0] == in || r.lists.Load() != 2 || len(later[0].Manifest().Tools) != 3 {
		t.Fatalf("after the TTL: %d listings, %d tools", r.lists.Load(), len(later[0].Manifest().Tools))
	}
	// Removing the app forgets it.
	if err := h.svc.Remove(context.Background(), alice, "everything"); err != nil {
		t.Fatal(err)
	}
	if gone, _ := h.svc.Integrations(context.Background(), alice); len(gone) != 0 {
		t.Fatalf("after Remove: %d apps", len(gone))
	}
}

func TestService_Call(t *testing.T) {
	r := newRemote(t, 0)
	h := newHarness(t, false, customapps.Options{})
	h.add(t, alice, customapps.NewApp{Name: "everything", URL: r.http.URL})
	tests := []struct {
		name     string
		slug     string
		args     string
		want     string // substring of the result
		wantCode failure.Code
		wantMsg  string
	}{
		{"echo", "everything__echo", `{"message":"hi"}`, `echo: {\"message\":\"hi\"}`, "", ""},
		{"a dash in the name", "everything__get-sum", `{"a":2,"b":3}`, `"text":"5"`, "", ""},
		{"image becomes a marker", "everything__image", `{}`, `[image: image/png, 14 KB]`, "", ""},
		{"the app's error", "everything__fails", `{}`, "", failure.ToolError, "the widget is broken"},
		{"a tool the app never had", "everything__nope", `{}`, "", failure.AppToolGone, `no longer has a tool "nope"`},
		{"the app's JSON-RPC error", "everything__get-sum", `{"a":"x"}`, "", failure.AppProtocol, "app everything"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, fe := h.call(t, alice, tt.slug, tt.args)
			if tt.wantCode == "" {
				if fe != nil || !strings.Contains(string(out), tt.want) {
					t.Fatalf("result %s, error %v; want %s", out, fe, tt.want)
				}
				return
			}
			if fe == nil || fe.Code != tt.wantCode || !strings.Contains(fe.Message, tt.wantMsg) {
				t.Fatalf("error %v, want %s with %q", fe, tt.wantCode, tt.wantMsg)
			}
		})
	}
	// A tool removed after it was listed is gone, not a protocol error.
	r.server.RemoveTools("echo")
	if _, fe := h.call(t, alice, "everything__echo", `{}`); fe == nil || fe.Code != failure.AppToolGone {
		t.Fatalf("removed tool: %v, want APP_TOOL_GONE", fe)
	}
	// Another user's call never reaches alice's app.
	ins, _ := h.svc.Integrations(context.Background(), alice)
	if _, err := ins[0].Caller.Call(context.Background(), toolcall.Call{Tool: "everything__get-sum", UserID: bob, Input: []byte(`{}`)}); err == nil {
		t.Fatal("bob's call ran on alice's app")
	}
}

func TestService_CallFailures(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>not MCP</html>")
	}))
	t.Cleanup(garbage.Close)
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bytes.Repeat([]byte(" "), 2<<20))
	}))
	t.Cleanup(huge.Close)
	redirect := httptest.NewServer(http.RedirectHandler("file:///etc/passwd", http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	many := newRemote(t, 10)
	r := newRemote(t, 0)

	tests := []struct {
		name     string
		strict   bool // egress refuses loopback
		url      string
		opts     customapps.Options
		wantCode failure.Code
		wantMsg  string
	}{
		{"unreachable", false, closedURL, customapps.Options{}, failure.UpstreamUnreachable, "cannot be reached"},
		{"garbage", false, garbage.URL, customapps.Options{}, failure.AppProtocol, "did not answer as an MCP server"},
		{"response over the cap", false, huge.URL, customapps.Options{HTTPClient: nil}, failure.ResponseTooLarge, "(the limit)"},
		{"redirect to a file URL", false, redirect.URL, customapps.Options{}, failure.AppProtocol, "refused redirect"},
		{"loopback refused by egress", true, r.http.URL, customapps.Options{}, failure.EgressDenied, "loopback"},
		{"more tools than the bound", false, many.http.URL, customapps.Options{MaxToolsPerApp: 12}, failure.LimitExceeded, "more than 12 tools (the limit per app)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "response over the cap" {
				ec := egress.NewClient(egress.Options{AllowPrivate: true})
				t.Cleanup(ec.Close)
				tt.opts.HTTPClient = customapps.NewHTTPClient(ec.DialContext, 1<<20)
			}
			h := newHarness(t, tt.strict, tt.opts)
			h.add(t, alice, customapps.NewApp{Name: "app", URL: tt.url})
			ins, err := h.svc.Integrations(context.Background(), alice)
			if err != nil || len(ins) != 1 || len(ins[0].Manifest().Tools) != 0 || !strings.Contains(ins[0].Problem, string(tt.wantCode)) {
				t.Fatalf("a failing app is listed without tools and with its problem: %v, %v", ins, err)
			}
			_, fe := h.call(t, alice, "app__echo", `{}`)
			if fe == nil || fe.Code != tt.wantCode || !strings.Contains(fe.Message, tt.wantMsg) {
				t.Fatalf("error %v, want %s with %q", fe, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestService_ManualBearer(t *testing.T) {
	r := newRemote(t, 0)
	h := newHarness(t, false, customapps.Options{})
	h.add(t, alice, customapps.NewApp{Name: "private", URL: r.http.URL, Auth: store.AppAuthManual, Bearer: "s3cret"})
	h.add(t, bob, customapps.NewApp{Name: "private", URL: r.http.URL})
	if _, fe := h.call(t, alice, "private__get-sum", `{"a":1,"b":1}`); fe != nil {
		t.Fatal(fe)
	}
	r.mu.Lock()
	seen := slicesCompact(r.auth)
	r.auth = nil
	r.mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer s3cret" {
		t.Fatalf("alice's app saw Authorization %q, want only her token", seen)
	}
	if _, fe := h.call(t, bob, "private__get-sum", `{"a":1,"b":1}`); fe != nil {
		t.Fatal(fe)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.auth {
		if a != "" {
			t.Fatalf("bob's no-auth app sent Authorization %q", a)
		}
	}
}

// slicesCompact returns the distinct values of s in order.
func slicesCompact(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func TestService_Add(t *testing.T) {
	h := newHarness(t, false, customapps.Options{Taken: func(name string) bool { return name == "github" }, MaxAppsPerUser: 2})
	h.add(t, alice, customapps.NewApp{Name: "first", URL: "https://example.com/mcp"})
	tests := []struct {
		name string
		app  customapps.NewApp
		want error
	}{
		{"an integration's name", customapps.NewApp{Name: "github", URL: "https://example.com/mcp"}, store.ErrConflict},
		{"manual without a token", customapps.NewApp{Name: "m1", URL: "https://example.com/mcp", Auth: store.AppAuthManual}, store.ErrInvalid},
		{"a token without manual", customapps.NewApp{Name: "m2", URL: "https://example.com/mcp", Bearer: "t"}, store.ErrInvalid},
		{"manual with a bad URL", customapps.NewApp{Name: "m3", URL: "gopher://example.com/", Auth: store.AppAuthManual, Bearer: "t"}, store.ErrInvalid},
		{"bad name", customapps.NewApp{Name: "X", URL: "https://example.com/mcp"}, store.ErrInvalid},
		{"fine", customapps.NewApp{Name: "ok", URL: "https://example.com/mcp"}, nil},
		{"same name again", customapps.NewApp{Name: "ok", URL: "https://example.com/mcp"}, store.ErrConflict},
		{"over the bound of apps", customapps.NewApp{Name: "third", URL: "https://example.com/mcp"}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.svc.Add(context.Background(), alice, tt.app)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Add = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestService_AppsCache: an app added past the service (the CLI, another
// replica) shows once the user's cached list of apps expires; one added or
// removed through the service shows at once.
func TestService_AppsCache(t *testing.T) {
	r := newRemote(t, 0)
	h := newHarness(t, false, customapps.Options{AppsTTL: time.Minute})
	count := func() int {
		t.Helper()
		ins, err := h.svc.Integrations(context.Background(), alice)
		if err != nil {
			t.Fatal(err)
		}
		return len(ins)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d apps before any was added", n)
	}
	na := store.NewCustomApp{ID: store.NewID(store.PrefixCustomApp), UserID: alice, Name: "outside", URL: r.http.URL, Auth: store.AppAuthNone}
	if _, err := h.st.CreateCustomApp(context.Background(), na, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("an app added past the service shows within AppsTTL: %d apps", n)
	}
	h.clock.Advance(time.Minute)
	if n := count(); n != 1 {
		t.Fatalf("after AppsTTL: %d apps, want 1", n)
	}
	h.add(t, alice, customapps.NewApp{Name: "inside", URL: r.http.URL})
	if n := count(); n != 2 {
		t.Fatalf("after Add: %d apps, want 2 at once", n)
	}
}

// fakeResolver answers names from a table.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestService_SSRF: under the production address rule, apps (and redirect
// hops) that point inside the network are refused, each with its reason;
// only the test's own server is exempt (by exact address).
func TestService_SSRF(t *testing.T) {
	hop := func(target string) *httptest.Server {
		s := httptest.NewServer(http.RedirectHandler(target, http.StatusTemporaryRedirect))
		t.Cleanup(s.Close)
		return s
	}
	toPrivate := hop("http://private.example/mcp")
	toMetadata := hop("http://169.254.169.254/latest/meta-data/")
	var exempt []netip.AddrPort
	for _, s := range []*httptest.Server{toPrivate, toMetadata} {
		exempt = append(exempt, netip.MustParseAddrPort(strings.TrimPrefix(s.URL, "http://")))
	}
	ec := egress.NewClient(egress.Options{AllowAddrs: exempt, Resolver: fakeResolver{
		"private.example":  {netip.MustParseAddr("10.1.2.3")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"mixed.example":    {netip.MustParseAddr("192.168.0.1"), netip.MustParseAddr("fd00::1")},
	}})
	t.Cleanup(ec.Close)
	tests := []struct {
		name     string
		url      string
		wantCode failure.Code
		wantMsg  string
	}{
		{"loopback literal", "http://127.0.0.1:9/mcp", failure.EgressDenied, "loopback"},
		{"metadata literal", "http://169.254.169.254/mcp", failure.EgressDenied, "refused"},
		{"IPv4-mapped metadata", "http://[::ffff:a9fe:a9fe]/mcp", failure.EgressDenied, "refused"},
		{"a name resolving to a private address", "http://private.example/mcp", failure.EgressDenied, "private.example resolves to"},
		{"a name resolving to metadata", "https://metadata.example/mcp", failure.EgressDenied, "metadata.example resolves to"},
		{"every address private", "http://mixed.example/mcp", failure.EgressDenied, "mixed.example resolves to"},
		{"a name that does not resolve", "http://nowhere.example/mcp", failure.UpstreamUnreachable, "cannot resolve"},
		{"a redirect hop to a private host", toPrivate.URL, failure.EgressDenied, "private.example resolves to"},
		{"a redirect hop to metadata", toMetadata.URL, failure.EgressDenied, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, true, customapps.Options{HTTPClient: customapps.NewHTTPClient(ec.DialContext, 0)})
			h.add(t, alice, customapps.NewApp{Name: "probe", URL: tt.url})
			_, fe := h.call(t, alice, "probe__echo", `{}`)
			if fe == nil || fe.Code != tt.wantCode || !strings.Contains(fe.Message, tt.wantMsg) {
				t.Fatalf("error %v, want %s with %q", fe, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
