package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/internal/wattest"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// proxyPlugins are the fixtures of the proxy tests: auth block and
// whether they declare a proxy.
var proxyPlugins = map[string]struct {
	auth  string
	proxy bool
}{
	"hubby": {`{"mode":"oauth2","oauth2":{"authorizeUrl":"https://auth.hubby.example/authorize","tokenUrl":"https://auth.hubby.example/token","scopes":["repo"],"tokenAuth":"post"}}`, true},
	"keyq": {`{"mode":"apikey","apikey":{"fields":[{"name":"api_key","label":"API key","secret":true,"required":true}],` +
		`"placement":{"in":"query","name":"api_key","value":"{api_key}"}}}`, true},
	"plainkey": {authPlugins["keyed"], false},
}

func buildProxyPlugins(t *testing.T, dir string) {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "fetch.wat.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range proxyPlugins {
		proxyBlock := ""
		if p.proxy {
			proxyBlock = fmt.Sprintf(`"proxy":{"baseUrl":"https://api.%s.example"},`, name)
		}
		m := fmt.Sprintf(`{"abi":1,"name":%q,"version":"1.0.0","title":"%s","description":"Fetches /whoami.",`+
			`"baseUrl":"https://api.%s.example",%s"auth":%s,"tools":[`+
			`{"slug":"%s_whoami","description":"Who am I.","inputSchema":{"type":"object"},"annotations":{"readOnly":true}}]}`,
			name, name, name, proxyBlock, p.auth, name)
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

// proxyAPI is a fake upstream: /hub/... wants GitHub's "Authorization:
// Bearer <token>", /keyq/... an api_key query parameter. It records what
// it received.
type proxyAPI struct {
	*httptest.Server
	mu       sync.Mutex
	seen     []string // every request's method, URL and headers, as text
	received chan int64
}

func startProxyAPI(t *testing.T) *proxyAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &proxyAPI{received: make(chan int64, 1024)}
	a.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, fmt.Sprintf("%s %s %v", r.Method, r.URL.RequestURI(), r.Header))
		a.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/hub/") && r.Header.Get("Authorization") != "Bearer gho_e2e_real":
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		case strings.HasPrefix(r.URL.Path, "/keyq/") && r.URL.Query().Get("api_key") != "key_e2e_real":
			http.Error(w, `{"error":"bad key"}`, http.StatusForbidden)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/big"):
			buf := make([]byte, 64<<10)
			w.Header().Set("Content-Length", fmt.Sprint(100<<20))
			for range (100 << 20) / len(buf) {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		case strings.HasSuffix(r.URL.Path, "/upload"):
			var n int64
			buf := make([]byte, 64<<10)
			for {
				k, err := r.Body.Read(buf)
				n += int64(k)
				if k > 0 {
					select {
					case a.received <- n:
					default:
					}
				}
				if err != nil {
					break
				}
			}
			fmt.Fprintf(w, `{"bytes":%d}`, n)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
		}
	})}}
	a.Start()
	t.Cleanup(a.Close)
	return a
}

func (a *proxyAPI) log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.seen, "\n")
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// curlSession calls curl_session through the MCP client and returns the
// structured output, or the error object of a refused call.
func curlSession(t *testing.T, cs *sdk.ClientSession, names ...string) (out struct {
	Token     string
	Endpoints map[string]string
}, refused map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "curl_session", Arguments: map[string]any{"integrations": names}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError {
		var body struct{ Error map[string]any }
		if err := json.Unmarshal([]byte(text), &body); err != nil {
			t.Fatalf("error %s: %v", text, err)
		}
		return out, body.Error
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("output %s: %v", text, err)
	}
	return out, nil
}

// TestServer_curlSessionProxy drives curl sessions end to end through the
// real server: an MCP client mints (all-or-nothing, every offender named),
// calls go through /c/ with the user's real credential and never the
// token, 100 MiB stream down with flat memory, uploads stream up, the user
// sees the calls and revokes the session in the portal.
func TestServer_curlSessionProxy(t *testing.T) {
	api := startProxyAPI(t)
	t.Setenv("HUBBY_BASE_URL", api.URL+"/hub")
	t.Setenv("KEYQ_BASE_URL", api.URL+"/keyq")
	plugins := filepath.Join(t.TempDir(), "plugins")
	buildProxyPlugins(t, plugins)
	w := startWorkbench(t, Config{DataDir: t.TempDir(), PluginsDir: plugins, EgressAllowPrivate: true})
	conns := serviceOf[*connections.Service](t, w.srv)
	ctx := context.Background()
	alice := w.addUser(t, "alice@example.com")
	if _, err := conns.Save(ctx, alice.ID, "hubby", connections.Secret{Mode: credential.ModeOAuth2,
		Credential: credential.Credential{AccessToken: "gho_e2e_real"}}); err != nil {
		t.Fatal(err)
	}
	_, apiToken, err := accounts.CreateToken(ctx, w.srv.store, alice.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "proxy-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{apiToken}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// All or nothing: three offenders, each named with its reason.
	_, refused := curlSession(t, cs, "hubby", "keyq", "plainkey", "ghost")
	if refused == nil {
		t.Fatal("curl_session minted with unconnected, proxy-less and unknown integrations")
	}
	details, _ := refused["details"].(map[string]any)
	list, _ := details["refused"].([]any)
	got := map[string]string{}
	for _, r := range list {
		m := r.(map[string]any)
		got[m["integration"].(string)] = m["code"].(string)
	}
	want := map[string]string{"keyq": "NOT_CONNECTED", "plainkey": "NO_PROXY", "ghost": "UNKNOWN_INTEGRATION"}
	if fmt.Sprint(got) != fmt.Sprint(want) || !strings.Contains(refused["message"].(string), "3 of 4") {
		t.Fatalf("refusal = %v, want every offender %v", refused, want)
	}
	if sessions, _ := w.srv.store.CurlSessions(ctx, alice.ID); len(sessions) != 0 {
		t.Fatalf("a refused curl_session stored %d sessions", len(sessions))
	}

	if _, err := conns.Save(ctx, alice.ID, "keyq", connections.Secret{Mode: credential.ModeAPIKey,
		Credential: credential.Credential{Fields: map[string]string{"api_key": "key_e2e_real"}}}); err != nil {
		t.Fatal(err)
	}
	sess, refused := curlSession(t, cs, "hubby", "keyq")
	if refused != nil || !strings.HasPrefix(sess.Token, "wbc_") || sess.Endpoints["hubby"] != w.base+"/c/hubby/" {
		t.Fatalf("curl_session = %+v, %v", sess, refused)
	}
	do := func(method, target string, body io.Reader, set func(*http.Request)) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, target, body)
		if err != nil {
			t.Fatal(err)
		}
		set(req)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	read := func(resp *http.Response) string {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}

	t.Run("credential injected, token kept back", func(t *testing.T) {
		resp := do("GET", sess.Endpoints["hubby"]+"user/repos?page=2", nil, func(r *http.Request) {
			bearer(sess.Token)(r)
			r.Header.Set("Cookie", "wb_session=portal")
		})
		if body := read(resp); resp.StatusCode != 200 || !strings.Contains(body, `"/hub/user/repos"`) {
			t.Fatalf("hubby: %d %s", resp.StatusCode, body)
		}
		resp = do("GET", sess.Endpoints["keyq"]+"search?q=x&api_key=mine", nil, func(r *http.Request) { r.SetBasicAuth(sess.Token, "") })
		if body := read(resp); resp.StatusCode != 200 {
			t.Fatalf("keyq with curl -u token: : %d %s", resp.StatusCode, body)
		}
		log := api.log()
		if strings.Contains(log, sess.Token) || strings.Contains(log, "wb_session") || strings.Contains(log, "api_key=mine") {
			t.Fatalf("the upstream saw the curl token, the portal cookie or the client's key:\n%s", log)
		}
		// The curl token is no API token, and the other way round.
		if resp := do("POST", w.base+"/mcp", strings.NewReader(`{}`), bearer(sess.Token)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the curl token at /mcp: %d", resp.StatusCode)
		}
		if resp := do("GET", sess.Endpoints["hubby"]+"user", nil, bearer(apiToken)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an API token at /c/: %d", resp.StatusCode)
		}
		if resp := do("GET", w.base+"/c/hubby/a/%2e%2e/%2e%2e/keyq/x", nil, bearer(sess.Token)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("encoded traversal: %d", resp.StatusCode)
		}
	})

	t.Run("100 MiB download streams", func(t *testing.T) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp := do("GET", sess.Endpoints["hubby"]+"big", nil, bearer(sess.Token))
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, make([]byte, 64<<10))
		resp.Body.Close()
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("100 MiB through the server: %.1f MiB allocated in the process meanwhile", float64(alloc)/(1<<20))
		if err != nil || n != 100<<20 {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		if alloc > 32<<20 {
			t.Fatalf("the process allocated %d bytes while streaming 100 MiB: the body is buffered", alloc)
		}
	})

	t.Run("upload streams past the body limit", func(t *testing.T) {
		const part, parts = 1 << 20, 8 // 8 MiB, over Fiber's 4 MiB limit
		pr, pw := io.Pipe()
		go func() {
			chunk := make([]byte, part)
			for i := range parts {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
				timeout := time.After(10 * time.Second)
			wait:
				for {
					select {
					case n := <-api.received:
						if n >= int64(i+1)*part {
							break wait
						}
					case <-timeout:
						pw.CloseWithError(fmt.Errorf("the upstream did not get byte %d: the upload is buffered", (i+1)*part))
						return
					}
				}
			}
			pw.Close()
		}()
		resp := do("POST", sess.Endpoints["hubby"]+"upload", pr, bearer(sess.Token))
		if body := read(resp); resp.StatusCode != 200 || body != fmt.Sprintf(`{"bytes":%d}`, part*parts) {
			t.Fatalf("upload: %d %s", resp.StatusCode, body)
		}
		// Other routes keep the body limit.
		big := do("POST", w.base+"/mcp", io.MultiReader(bytes.NewReader(make([]byte, 5<<20))), bearer(apiToken))
		if read(big); big.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a 5 MiB chunked body at /mcp: %d, want 413", big.StatusCode)
		}
	})

	t.Run("audit in the portal, then revoke", func(t *testing.T) {
		var calls []store.ProxyCall
		deadline := time.Now().Add(5 * time.Second)
		for len(calls) < 5 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			calls, _ = w.srv.store.ProxyCalls(ctx, store.ProxyCallFilter{UserID: alice.ID})
		}
		if len(calls) != 5 {
			t.Fatalf("audit rows: %+v", calls)
		}
		b := newBrowserSignedIn(t, w, "alice@example.com")
		p := b.get("/curl")
		wantPage(t, "curl page", p, http.StatusOK, "hubby, keyq", "GET /user/repos?page", "GET /search?q&amp;api_key", "POST /upload", "Active")
		if strings.Contains(p.body, sess.Token) || strings.Contains(p.body, "api_key=mine") {
			t.Fatal("the curl page shows a token or a query value")
		}
		id := regexp.MustCompile(`action="/curl/sessions/(cs_[a-z0-9]+)/revoke"`).FindStringSubmatch(p.body)
		if id == nil {
			t.Fatalf("no revoke button:\n%s", p.body)
		}
		wantPage(t, "revoked", b.do(http.MethodPost, "/curl/sessions/"+id[1]+"/revoke", url.Values{"csrf": {formToken(t, p)}}, true),
			http.StatusOK, "The curl session was revoked", "Revoked")
		resp := do("GET", sess.Endpoints["hubby"]+"user", nil, bearer(sess.Token))
		if body := read(resp); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "TOKEN_REVOKED") ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("after revocation: %d %s", resp.StatusCode, body)
		}
	})
}
