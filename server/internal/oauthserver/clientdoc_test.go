package oauthserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/clientaddr"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

const (
	publicURL   = "https://wb.example.com"
	redirectURI = "http://127.0.0.1:7777/cb"
	sessionRaw  = "session-cookie-value"
	csrfSecret  = "csrf-secret"
)

// fixture is an authorization server over a SQLite store with one signed-in
// user, served in memory through Fiber's app.Test. It trusts every peer as
// a proxy, so a request's X-Forwarded-For is its client address.
type fixture struct {
	srv   *Server
	app   *fiber.App
	st    store.Store
	clock *storetest.Clock
	user  store.User
	logs  *logBuffer
}

// logBuffer collects a server's log output; it is safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// resolverFunc resolves every name through a map; names outside it are
// unknown. It never asks a real DNS server.
type resolverFunc map[string][]netip.Addr

func (r resolverFunc) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func newFixture(t *testing.T, allowLoopback bool) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := storetest.NewClock(time.Now().UTC().Truncate(time.Second))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u, err := st.CreateUser(ctx, store.NewUser{Email: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateSession(ctx, store.Session{IDHash: secrets.HashToken(sessionRaw), UserID: u.ID, CSRFSecret: csrfSecret,
		ExpiresAt: clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	everyone, err := clientaddr.Parse("0.0.0.0/0, ::/0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	srv, err := New(Options{Store: st, PublicURL: publicURL, SessionCookie: "wb_session", AllowLoopbackDocuments: allowLoopback,
		Resolver: resolverFunc{
			"docs.test":     {netip.MustParseAddr("127.0.0.1")},
			"internal.test": {netip.MustParseAddr("10.1.2.3")},
			"mapped.test":   {netip.MustParseAddr("::ffff:192.168.1.1")},
		}, ClientAddr: everyone, Now: clock.Now, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	srv.Mount(app)
	return &fixture{srv: srv, app: app, st: st, clock: clock, user: u, logs: logs}
}

// request is one request to the fixture: a form body, a JSON body or none,
// from addr (the fixture's default address when empty).
type request struct {
	method, target, addr string
	form                 url.Values
	json                 string
}

// response is what the fixture answered.
type response struct {
	status int
	header http.Header
	body   string
}

// send sends r to the server in memory, with the signed-in user's cookie.
func (f *fixture) send(t *testing.T, r request) response {
	t.Helper()
	var body io.Reader
	switch {
	case r.form != nil:
		body = strings.NewReader(r.form.Encode())
	case r.json != "":
		body = strings.NewReader(r.json)
	}
	req := httptest.NewRequest(r.method, r.target, body)
	switch {
	case r.form != nil:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case r.json != "":
		req.Header.Set("Content-Type", "application/json")
	}
	if r.addr != "" {
		req.Header.Set("X-Forwarded-For", r.addr)
	}
	req.AddCookie(&http.Cookie{Name: "wb_session", Value: sessionRaw})
	resp, err := f.app.Test(req, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// do sends a request to the server in memory and returns the status, the
// Location header and the body.
func (f *fixture) do(t *testing.T, method, target string, form url.Values) (int, string, string) {
	t.Helper()
	r := f.send(t, request{method: method, target: target, form: form})
	return r.status, r.header.Get("Location"), r.body
}

// authQuery returns the parameters of an authorization request.
func authQuery(clientID, verifier, scope string) url.Values {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI}, "state": {"s1"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {publicURL + "/mcp"}}
	if scope != "" {
		q.Set("scope", scope)
	}
	return q
}

// approve consents to q and returns the code.
func (f *fixture) approve(t *testing.T, q url.Values) string {
	t.Helper()
	form := url.Values{"csrf": {csrfSecret}, "decision": {"allow"}}
	for k, v := range q {
		form[k] = v
	}
	status, loc, body := f.do(t, http.MethodPost, "/oauth/authorize", form)
	u, err := url.Parse(loc)
	if status != http.StatusFound || err != nil || u.Query().Get("code") == "" {
		t.Fatalf("approve = %d %q %s", status, loc, body)
	}
	return u.Query().Get("code")
}

// tokens posts a token request and decodes the answer.
func (f *fixture) tokens(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	return decodeJSON(t, f.send(t, request{method: http.MethodPost, target: "/oauth/token", form: form}))
}

// docHost serves client ID metadata documents on 127.0.0.1 and counts
// fetches per path.
type docHost struct {
	*httptest.Server
	mu      sync.Mutex
	handler map[string]http.HandlerFunc
	fetches map[string]int
}

func newDocHost(t *testing.T) *docHost {
	h := &docHost{handler: map[string]http.HandlerFunc{}, fetches: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.fetches[r.URL.Path]++
		fn := h.handler[r.URL.Path]
		h.mu.Unlock()
		if fn == nil {
			http.NotFound(w, r)
			return
		}
		fn(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

// serve makes path answer with a JSON document built by doc from the
// document's own URL.
func (h *docHost) serve(path string, doc func(id string) any) string {
	id := h.URL + path
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handler[path] = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc(id))
	}
	return id
}

func (h *docHost) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fetches[path]
}

func validDoc(name string) func(string) any {
	return func(id string) any {
		return map[string]any{"client_id": id, "client_name": name, "redirect_uris": []string{redirectURI},
			"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}}
	}
}

// TestServer_ClientIDMetadataDocument runs the authorization code flow for a
// client identified by the URL of its metadata document, and checks that
// the document is fetched once per TTL and its changes are picked up.
func TestServer_ClientIDMetadataDocument(t *testing.T) {
	f := newFixture(t, true)
	host := newDocHost(t)
	id := host.serve("/agent/client.json", validDoc("Doc Agent"))
	verifier := strings.Repeat("a", 43)
	q := authQuery(id, verifier, "")

	status, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
	if status != http.StatusOK || !strings.Contains(body, "Doc Agent") || !strings.Contains(body, id) {
		t.Fatalf("consent page = %d\n%s", status, body)
	}
	code := f.approve(t, q)
	if n := host.count("/agent/client.json"); n != 1 {
		t.Errorf("the document was fetched %d times for a consent and an approval, want 1 (cached)", n)
	}
	st, tok := f.tokens(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {id}})
	access, _ := tok["access_token"].(string)
	if st != http.StatusOK || access == "" || tok["scope"] != ScopeMCP {
		t.Fatalf("token = %d %v", st, tok)
	}
	at, err := f.srv.Authenticate(context.Background(), access)
	if err != nil || at.ClientID != id || at.UserID != f.user.ID {
		t.Fatalf("Authenticate = %+v, %v", at, err)
	}

	// After the TTL the document is fetched again and a new name shows.
	host.serve("/agent/client.json", validDoc("Doc Agent Renamed"))
	f.clock.Advance(clientDocumentTTL + time.Second)
	if _, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil); !strings.Contains(body, "Doc Agent Renamed") {
		t.Errorf("the renamed client does not show after the TTL:\n%s", body)
	}
	if n := host.count("/agent/client.json"); n != 2 {
		t.Errorf("fetches after the TTL = %d, want 2", n)
	}
	if cl, err := f.st.OAuthClient(context.Background(), id); err != nil || cl.Name != "Doc Agent Renamed" {
		t.Errorf("stored client = %+v, %v", cl, err)
	}
}

// TestServer_ClientIDMetadataDocumentRefused checks each rule a document
// and its URL must meet; every failure is a 400 that names the problem,
// never a redirect.
func TestServer_ClientIDMetadataDocumentRefused(t *testing.T) {
	f := newFixture(t, true)
	f.srv.docs.timeout = 300 * time.Millisecond
	host := newDocHost(t)
	raw := func(path, contentType, body string) string {
		host.mu.Lock()
		defer host.mu.Unlock()
		host.handler[path] = func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			_, _ = io.WriteString(w, body)
		}
		return host.URL + path
	}
	docWith := func(path string, change func(id string, doc map[string]any)) string {
		return host.serve(path, func(id string) any {
			doc := validDoc("x")(id).(map[string]any)
			change(id, doc)
			return doc
		})
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	host.mu.Lock()
	host.handler["/slow.json"] = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	host.handler["/moved.json"] = func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere.json", http.StatusFound)
	}
	host.mu.Unlock()

	tests := []struct {
		name     string
		clientID string
		want     string
	}{
		{"client_id differs", docWith("/other-id.json", func(_ string, d map[string]any) { d["client_id"] = host.URL + "/else.json" }), "is not the URL it was fetched from"},
		{"redirect_uri not listed", docWith("/other-uri.json", func(_ string, d map[string]any) { d["redirect_uris"] = []string{"https://app.example.com/cb"} }), "redirect_uri is not one the client registered"},
		{"no redirect_uris", docWith("/no-uris.json", func(_ string, d map[string]any) { delete(d, "redirect_uris") }), "redirect_uris"},
		{"bad redirect_uri", docWith("/bad-uri.json", func(_ string, d map[string]any) { d["redirect_uris"] = []string{"http://app.example.com/cb"} }), "loopback"},
		{"client secret", docWith("/secret.json", func(_ string, d map[string]any) { d["client_secret"] = "s" }), "client_secret"},
		{"confidential client", docWith("/basic.json", func(_ string, d map[string]any) { d["token_endpoint_auth_method"] = "client_secret_basic" }), "not supported"},
		{"implicit grant", docWith("/implicit.json", func(_ string, d map[string]any) { d["grant_types"] = []string{"implicit"} }), "grant type"},
		{"not JSON", raw("/text.json", "application/json", "<html>"), "not a JSON object"},
		{"wrong content type", raw("/html.json", "text/html", `{}`), "application/json"},
		{"too large", raw("/big.json", "application/json", `{"client_name":"`+strings.Repeat("x", MaxClientDocumentBytes)+`"}`), "larger than"},
		{"missing", host.URL + "/missing.json", "answered 404"},
		{"redirect", host.URL + "/moved.json", "answered 302"},
		{"too slow", host.URL + "/slow.json", "could not be fetched"},
		{"name resolves to loopback", "https://docs.test/client.json", "could not be fetched"},
		{"private address", "https://internal.test/client.json", "could not be fetched"},
		{"IPv4-mapped private address", "https://mapped.test/client.json", "could not be fetched"},
		{"private literal", "https://10.0.0.7/client.json", "could not be fetched"},
		{"unknown host", "https://nowhere.test/client.json", "could not be fetched"},
		{"http off loopback", "http://docs.test/client.json", "must use https"},
		{"no path", "https://docs.test/", "needs a path"},
		{"query", "https://docs.test/client.json?v=1", "query"},
		{"fragment", "https://docs.test/client.json#x", "fragment"},
		{"credentials", "https://user:pw@docs.test/client.json", "credentials"},
		{"dot segment", "https://docs.test/a/../client.json", "dot segments"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := authQuery(tt.clientID, strings.Repeat("a", 43), "")
			// Each from its own address, so that no row meets the fetch limit.
			r := f.send(t, request{method: http.MethodGet, target: "/oauth/authorize?" + q.Encode(), addr: fmt.Sprintf("192.0.2.%d", i+1)})
			if r.status != http.StatusBadRequest || r.header.Get("Location") != "" || !strings.Contains(r.body, tt.want) ||
				!strings.Contains(r.body, "invalid_request") {
				t.Errorf("authorize = %d %q %s; want 400 naming %q", r.status, r.header.Get("Location"), r.body, tt.want)
			}
		})
	}
	// A failure is remembered for a while: a flood of requests is not a
	// flood of fetches.
	before := host.count("/missing.json")
	q := authQuery(host.URL+"/missing.json", strings.Repeat("a", 43), "")
	f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
	if n := host.count("/missing.json"); n != before {
		t.Errorf("a failed document was fetched again within %s (%d fetches)", failedDocumentTTL, n)
	}
}

// TestServer_ClientIDMetadataDocumentNeedsDevFlagForHTTP: without
// EGRESS_ALLOW_PRIVATE an http://127.0.0.1 client_id is refused before any
// fetch.
func TestServer_ClientIDMetadataDocumentNeedsDevFlagForHTTP(t *testing.T) {
	f := newFixture(t, false)
	host := newDocHost(t)
	id := host.serve("/client.json", validDoc("Doc Agent"))
	q := authQuery(id, strings.Repeat("a", 43), "")
	status, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "must use https") || host.count("/client.json") != 0 {
		t.Errorf("authorize = %d %s, fetches %d", status, body, host.count("/client.json"))
	}
}

// TestServer_ClientIDMetadataDocumentHidesAddresses: a document whose
// host the egress rule refuses is answered with a generic message that says
// nothing of what the host resolved to; the log has the detail.
func TestServer_ClientIDMetadataDocumentHidesAddresses(t *testing.T) {
	tests := []struct {
		name, clientID, hidden, logged string
	}{
		{"loopback", "https://docs.test/client.json", "127.0.0.1", "resolves to loopback address 127.0.0.1"},
		{"private", "https://internal.test/client.json", "10.1.2.3", "resolves to private address 10.1.2.3"},
		{"IPv4-mapped", "https://mapped.test/client.json", "192.168.1.1", "IPv4-mapped form of 192.168.1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			q := authQuery(tt.clientID, strings.Repeat("a", 43), "")
			status, _, body := f.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
			if status != http.StatusBadRequest || !strings.Contains(body, "could not be fetched") {
				t.Errorf("authorize = %d %s; want 400 with a generic message", status, body)
			}
			for _, leak := range []string{tt.hidden, "loopback", "private", "resolves"} {
				if strings.Contains(body, leak) {
					t.Errorf("the answer says %q: %s", leak, body)
				}
			}
			if logs := f.logs.String(); !strings.Contains(logs, tt.logged) || !strings.Contains(logs, tt.clientID) {
				t.Errorf("the log lacks %q for %s:\n%s", tt.logged, tt.clientID, logs)
			}
		})
	}
}

// TestServer_ClientIDMetadataDocumentFetchLimit: one address gets a bounded
// number of document fetches; past it the answer is 429 with Retry-After
// and nothing is fetched, while cached documents and other addresses are
// unaffected.
func TestServer_ClientIDMetadataDocumentFetchLimit(t *testing.T) {
	f := newFixture(t, true)
	host := newDocHost(t)
	const attacker, other = "203.0.113.9", "198.51.100.4"
	authorize := func(path, addr string) response {
		id := host.serve(path, validDoc("Agent"))
		q := authQuery(id, strings.Repeat("a", 43), "")
		return f.send(t, request{method: http.MethodGet, target: "/oauth/authorize?" + q.Encode(), addr: addr})
	}
	for i := range documentFetchPolicy.Free {
		if r := authorize(fmt.Sprintf("/c%d.json", i), attacker); r.status != http.StatusOK {
			t.Fatalf("fetch %d = %d %s", i+1, r.status, r.body)
		}
	}
	r := authorize("/one-too-many.json", attacker)
	_, out := decodeJSON(t, r)
	desc, _ := out["error_description"].(string)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "3600" || out["error"] != "temporarily_unavailable" ||
		!strings.Contains(desc, fmt.Sprintf("at most %d an hour", documentFetchPolicy.Free)) {
		t.Errorf("fetch past the limit = %d Retry-After %q %v", r.status, r.header.Get("Retry-After"), out)
	}
	if n := host.count("/one-too-many.json"); n != 0 {
		t.Errorf("the refused document was fetched %d times", n)
	}
	if r := authorize("/c0.json", attacker); r.status != http.StatusOK {
		t.Errorf("a cached document past the limit = %d %s", r.status, r.body)
	}
	if r := authorize("/one-too-many.json", other); r.status != http.StatusOK {
		t.Errorf("another address = %d %s", r.status, r.body)
	}
	f.clock.Advance(time.Hour)
	if r := authorize("/after-an-hour.json", attacker); r.status != http.StatusOK {
		t.Errorf("an hour later = %d %s", r.status, r.body)
	}
}

// TestClientDocuments_CacheBound fills the cache past its bound.
func TestClientDocuments_CacheBound(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	d := newClientDocuments(false, resolverFunc{}, clock.Now, slog.New(slog.DiscardHandler))
	for i := range maxCachedDocuments + 50 {
		if i == maxCachedDocuments/2 {
			clock.Advance(failedDocumentTTL + time.Second) // the first half expires
		}
		d.remember(fmt.Sprintf("https://c%d.example.com/c", i), cachedDocument{err: errors.New("x"), expires: clock.Now().Add(failedDocumentTTL)}, clock.Now())
	}
	d.mu.Lock()
	n := len(d.cache)
	_, kept := d.cache[fmt.Sprintf("https://c%d.example.com/c", maxCachedDocuments+49)]
	d.mu.Unlock()
	if n > maxCachedDocuments || !kept {
		t.Errorf("cache holds %d entries (bound %d), newest kept: %v", n, maxCachedDocuments, kept)
	}
}

// FuzzParseClientDocument: any bytes give a client that passes the checks
// or an ErrClientDocument, never a panic.
func FuzzParseClientDocument(f *testing.F) {
	id := "https://app.example.com/client.json"
	f.Add([]byte(`{"client_id":"https://app.example.com/client.json","redirect_uris":["http://127.0.0.1/cb"]}`))
	f.Add([]byte(`{"client_id":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		cl, err := parseClientDocument(id, body)
		if err != nil {
			if !errors.Is(err, ErrClientDocument) {
				t.Fatalf("error %v does not wrap ErrClientDocument", err)
			}
			return
		}
		if cl.ID != id || cl.Name == "" || len(cl.RedirectURIs) == 0 {
			t.Fatalf("accepted client %+v", cl)
		}
		for _, u := range cl.RedirectURIs {
			if CheckRedirectURI(u) != nil {
				t.Fatalf("accepted redirect URI %q", u)
			}
		}
	})
}

// postJSON posts a JSON body and decodes the JSON answer.
func (f *fixture) postJSON(t *testing.T, target, body string) (int, map[string]any) {
	t.Helper()
	return decodeJSON(t, f.send(t, request{method: http.MethodPost, target: target, json: body}))
}

// decodeJSON returns a response's status and JSON body.
func decodeJSON(t *testing.T, r response) (int, map[string]any) {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("answer %d %q: %v", r.status, r.body, err)
	}
	return r.status, out
}
