package portal

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/argon2"

	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

var ctx = context.Background()

// catalog is a fixed catalog of manifests.
type catalog map[string]*manifest.Manifest

func (c catalog) Manifest(name string) (*manifest.Manifest, bool) {
	m, ok := c[name]
	return m, ok
}

func (c catalog) Manifests() []*manifest.Manifest {
	var out []*manifest.Manifest
	for _, m := range c {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *manifest.Manifest) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func testCatalog() catalog {
	return catalog{
		"plain": {Name: "plain", Title: "Plain", Description: "Needs nothing.", Auth: manifest.Auth{Mode: manifest.ModeNone}},
		"keyed": {Name: "keyed", Title: "Keyed <Service>", Description: "Takes a key.", Logo: "javascript:alert(1)",
			Auth: manifest.Auth{Mode: manifest.ModeAPIKey, APIKey: &manifest.APIKey{
				Fields: []manifest.Field{
					{Name: "site", Label: "Site", Required: true, Pattern: `[a-z0-9-]+`, Placeholder: "acme"},
					{Name: "api_token", Label: "API token", Secret: true, Required: true},
				},
				Placement: manifest.Placement{In: "header", Name: "X-Key", Value: "{api_token}"}}}},
		"cookied": {Name: "cookied", Description: "Browser cookies.", Auth: manifest.Auth{Mode: manifest.ModeCookie,
			Cookie: &manifest.Cookie{Domains: []string{"example.com"}, LoginURL: "https://example.com/login"}}},
	}
}

const password = "correct horse battery"

// passwordHash is an argon2id hash of password with cheap parameters the
// verifier accepts: sign-ins run the real verification without the cost of
// the production parameters (slow on purpose, more so under the race
// detector).
var passwordHash = sync.OnceValue(func() string {
	salt := []byte("0123456789abcdef")
	sum := argon2.IDKey([]byte(password), salt, 1, 64, 1, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=64,t=1,p=1$%s$%s", argon2.Version,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum))
})

// fixture is a portal on 127.0.0.1 over a SQLite store, with two users who
// have passwords.
type fixture struct {
	base       string
	clock      *storetest.Clock
	st         store.Store
	conns      *connections.Service
	signIn     *accounts.SignIn
	passwords  *secrets.Passwords
	alice, bob store.User
}

// cheapPasswords hashes new passwords with the cheap parameters.
func cheapPasswords(o secrets.PasswordOptions) *secrets.Passwords {
	o.Cost = secrets.PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}
	return secrets.NewPasswords(o)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, func(st store.Store) (*accounts.SignIn, *secrets.Passwords) {
		pw := cheapPasswords(secrets.PasswordOptions{})
		return accounts.NewSignIn(st, pw, accounts.SignInOptions{}), pw
	})
}

// newFixtureWith is newFixture with the sign-in and password hashing
// signIn returns.
func newFixtureWith(t *testing.T, signIn func(store.Store) (*accounts.SignIn, *secrets.Passwords)) *fixture {
	t.Helper()
	f := &fixture{clock: storetest.NewClock(time.Now().UTC().Truncate(time.Second))}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(f.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.base = "http://" + ln.Addr().String()
	cat := testCatalog()
	providers := connect.NewProviders(connect.ProviderOptions{Catalog: cat, PublicURL: f.base, Getenv: func(string) string { return "" }, Now: f.clock.Now})
	f.conns = connections.New(st, secrets.NewKeyring(secrets.Config{Key: bytes.Repeat([]byte{3}, secrets.KeySize)}), connections.Options{Refresher: providers, Now: f.clock.Now})
	svc, err := connect.New(connect.Options{Store: st, Vault: f.conns, Providers: providers, Catalog: cat, PublicURL: f.base, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.signIn, f.passwords = signIn(st)
	p, err := New(Options{Store: st, Catalog: cat, Connections: f.conns, Connector: svc, SignIn: f.signIn, Passwords: f.passwords,
		PublicURL: f.base, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	p.Mount(app)
	go app.Listener(ln)
	t.Cleanup(func() { app.ShutdownWithTimeout(5 * time.Second) })
	for _, email := range []string{"alice@example.com", "bob@example.com"} {
		u, err := st.CreateUser(ctx, store.NewUser{Email: email, PasswordHash: passwordHash()})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := accounts.CreateToken(ctx, st, u.ID, "default"); err != nil {
			t.Fatal(err)
		}
		if f.alice.ID == "" {
			f.alice = u
		} else {
			f.bob = u
		}
	}
	return f
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see each one.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: f.base, client: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// response is what a request returned.
type response struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values) response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		b.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

func (b *browser) get(path string) response { return b.do(http.MethodGet, path, nil) }

func (b *browser) post(path string, form url.Values) response {
	return b.do(http.MethodPost, path, form)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the CSRF token of the first form on a page.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("page has no CSRF field:\n%s", page)
	}
	return m[1]
}

// signIn signs the browser in with email and password and returns the
// session's CSRF token.
func (b *browser) signIn(email string) string {
	b.t.Helper()
	page := b.get("/login")
	resp := b.post("/login", url.Values{"csrf": {csrf(b.t, page.body)}, "email": {email}, "password": {password}})
	if resp.status != http.StatusSeeOther {
		b.t.Fatalf("sign-in: status %d\n%s", resp.status, resp.body)
	}
	return csrf(b.t, b.get("/account").body)
}

// wantStatus fails unless resp has the status and its body every string.
func wantStatus(t *testing.T, what string, resp response, status int, contains ...string) {
	t.Helper()
	if resp.status != status {
		t.Fatalf("%s: status %d, want %d\n%s", what, resp.status, status, resp.body)
	}
	for _, c := range contains {
		if !strings.Contains(resp.body, c) {
			t.Fatalf("%s: body lacks %q\n%s", what, c, resp.body)
		}
	}
}
