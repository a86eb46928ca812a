package portal

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

func TestPortal_headers(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	for _, path := range []string{"/login", "/login/once/wbl_x", "/connect/pc_abc"} {
		resp := b.get(path)
		for k, v := range securityHeaders(f.base) {
			if got := resp.header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", path, k, got, v)
			}
		}
		if cc := resp.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, cc)
		}
	}
	// Styles come from the portal's stylesheet only, not from whatever
	// else the origin serves (a jot's uploaded CSS under /j/).
	if csp := b.get("/login").header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src "+f.base+"/static/portal.css;") ||
		strings.Contains(csp, "style-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not confine style-src to the portal's stylesheet", csp)
	}
	css := b.get("/static/portal.css")
	if css.status != http.StatusOK || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") || !strings.Contains(css.body, ":focus-visible") {
		t.Fatalf("stylesheet: %d %q", css.status, css.header.Get("Content-Type"))
	}
}

func TestPortal_login(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name       string
		form       func(token string) url.Values
		wantStatus int
		wantBody   string
		wantTo     string
	}{
		{"wrong password", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {"nope"}}
		}, http.StatusUnauthorized, "Wrong email or password.", ""},
		{"unknown email", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"carol@example.com"}, "password": {password}}
		}, http.StatusUnauthorized, "Wrong email or password.", ""},
		{"missing CSRF token", func(string) url.Values {
			return url.Values{"email": {"alice@example.com"}, "password": {password}}
		}, http.StatusForbidden, "Form expired", ""},
		{"wrong CSRF token", func(string) url.Values {
			return url.Values{"csrf": {strings.Repeat("A", 43)}, "email": {"alice@example.com"}, "password": {password}}
		}, http.StatusForbidden, "Form expired", ""},
		{"right password", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"ALICE@example.com"}, "password": {password}, "next": {"/account"}}
		}, http.StatusSeeOther, "", "/account"},
		{"open redirect refused", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {password}, "next": {"//evil.example/x"}}
		}, http.StatusSeeOther, "", "/integrations"},
		{"no loop back to sign-in", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {password}, "next": {"/login?next=/login"}}
		}, http.StatusSeeOther, "", "/integrations"},
		{"backslash redirect refused", func(tok string) url.Values {
			return url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {password}, "next": {"/\\evil.example"}}
		}, http.StatusSeeOther, "", "/integrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := f.browser(t)
			page := b.get("/login")
			wantStatus(t, "GET /login", page, http.StatusOK, `<label for="email">Email</label>`, `autocomplete="current-password"`)
			resp := b.post("/login", tt.form(csrf(t, page.body)))
			wantStatus(t, "POST /login", resp, tt.wantStatus, tt.wantBody)
			if loc := resp.header.Get("Location"); loc != tt.wantTo {
				t.Fatalf("Location %q, want %q", loc, tt.wantTo)
			}
			signedIn := b.get("/account").status == http.StatusOK
			if signedIn != (tt.wantTo != "") {
				t.Fatalf("signed in = %v after %s", signedIn, tt.name)
			}
		})
	}
}

func TestPortal_sessionCookie(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	page := b.get("/login")
	resp := b.post("/login", url.Values{"csrf": {csrf(t, page.body)}, "email": {"alice@example.com"}, "password": {password}})
	var session string
	for _, c := range resp.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, sessionCookie+"=") {
			session = c
		}
	}
	for _, want := range []string{"HttpOnly", "SameSite=Lax", "path=/", "max-age=43200"} {
		if !strings.Contains(strings.ToLower(session), strings.ToLower(want)) {
			t.Errorf("session cookie %q lacks %s", session, want)
		}
	}
	if strings.Contains(strings.ToLower(session), "secure") {
		t.Errorf("session cookie %q is Secure on an http server", session)
	}
	// The store keeps only the cookie's hash.
	raw := strings.TrimPrefix(strings.SplitN(session, ";", 2)[0], sessionCookie+"=")
	if _, err := f.st.SessionByHash(ctx, raw); err == nil {
		t.Fatal("the session is stored under the raw cookie value")
	}

	// Sign-out ends the session server-side.
	tok := csrf(t, b.get("/account").body)
	wantStatus(t, "logout without CSRF", b.post("/logout", url.Values{}), http.StatusForbidden)
	out := b.post("/logout", url.Values{"csrf": {tok}})
	if out.status != http.StatusSeeOther || out.header.Get("Location") != "/login?notice=signed-out" {
		t.Fatalf("logout: %d %s", out.status, out.header.Get("Location"))
	}
	if resp := b.get("/account"); resp.status != http.StatusSeeOther || !strings.HasPrefix(resp.header.Get("Location"), "/login?next=%2Faccount") {
		t.Fatalf("after logout /account = %d %s", resp.status, resp.header.Get("Location"))
	}
	wantStatus(t, "login page notice", b.get("/login?notice=signed-out"), http.StatusOK, "You are signed out.")
}

func TestPortal_secureCookies(t *testing.T) {
	f := newFixture(t)
	p, err := New(Options{Store: f.st, Catalog: testCatalog(), Connections: f.conns, Connector: noConnector{}, SignIn: f.signIn, Passwords: f.passwords,
		PublicURL: "https://wb.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	p.Mount(app)
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/login", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"__Host-wb_login=", "secure", "HttpOnly", "SameSite=Lax", "path=/"} {
		if !strings.Contains(strings.ToLower(c), strings.ToLower(want)) {
			t.Errorf("cookie %q lacks %s", c, want)
		}
	}
	if _, err := New(Options{Store: f.st, Catalog: testCatalog(), Connections: f.conns}); err == nil {
		t.Fatal("New without a connector succeeded")
	}
}

// noConnector is a Connector for pages that never reach it.
type noConnector struct{ Connector }

func TestPortal_requireSession(t *testing.T) {
	f := newFixture(t)
	anon := f.browser(t)
	for _, path := range []string{"/integrations", "/account", "/connect/pc_abc?state=x", "/oauth/callback/keyed?code=c&state=s"} {
		resp := anon.get(path)
		want := "/login?" + url.Values{"next": {path}}.Encode()
		if resp.status != http.StatusSeeOther || resp.header.Get("Location") != want {
			t.Errorf("GET %s signed out: %d %q, want a redirect to %s", path, resp.status, resp.header.Get("Location"), want)
		}
	}
	for _, path := range []string{"/integrations/keyed/connect", "/account/tokens", "/logout"} {
		wantStatus(t, "POST "+path+" signed out", anon.post(path, url.Values{}), http.StatusForbidden, "Signed out")
	}
	b := f.browser(t)
	tok := b.signIn("alice@example.com")
	for _, path := range []string{"/integrations/keyed/connect", "/account/tokens", "/account/password"} {
		wantStatus(t, "POST "+path+" without CSRF", b.post(path, url.Values{}), http.StatusForbidden, "Form expired")
		wantStatus(t, "POST "+path+" with another session's CSRF", b.post(path, url.Values{"csrf": {tok + "x"}}), http.StatusForbidden)
	}
	// Nothing was started by the refused POSTs.
	if toks, _ := f.st.Tokens(ctx, f.alice.ID); len(toks) != 1 {
		t.Fatalf("alice has %d tokens after refused POSTs", len(toks))
	}
	wantStatus(t, "root", b.get("/"), http.StatusSeeOther)
}

func TestPortal_onceLink(t *testing.T) {
	f := newFixture(t)
	token, _, err := accounts.CreateLoginLink(ctx, f.st, f.alice.ID, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	stale, _, err := accounts.CreateLoginLink(ctx, f.st, f.bob.ID, f.clock.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	use := func(b *browser, tok string) response {
		page := b.get("/login/once/" + tok)
		wantStatus(t, "GET once", page, http.StatusOK, "Sign in with a one-time link")
		return b.post("/login/once/"+tok, url.Values{"csrf": {csrf(t, page.body)}})
	}
	b := f.browser(t)
	// Fetching the link (a preview) does not spend it.
	b.get("/login/once/" + token)
	resp := use(b, token)
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/account?notice=signed-in-once" {
		t.Fatalf("first use: %d %s\n%s", resp.status, resp.header.Get("Location"), resp.body)
	}
	wantStatus(t, "account after the link", b.get("/account?notice=signed-in-once"), http.StatusOK, "Signed in as <strong>alice@example.com</strong>", "Set a password below")

	wantStatus(t, "second use", use(f.browser(t), token), http.StatusBadRequest, "not valid or was already used")
	wantStatus(t, "expired", use(f.browser(t), stale), http.StatusGone, "expired")
	wantStatus(t, "garbage", use(f.browser(t), "wbl_garbage"), http.StatusBadRequest)
	other := f.browser(t)
	other.get("/login/once/" + token)
	wantStatus(t, "without CSRF", other.post("/login/once/"+token, url.Values{}), http.StatusForbidden)
}

func TestPortal_integrations(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	tok := b.signIn("alice@example.com")
	page := b.get("/integrations")
	wantStatus(t, "integrations", page, http.StatusOK,
		`<h2 id="title-keyed">Keyed &lt;Service&gt;</h2>`, `id="status-plain">Connected`, `id="status-keyed">Not connected`, `id="connect-keyed"`)
	if strings.Contains(page.body, "javascript:") || strings.Contains(page.body, `id="connect-plain"`) || strings.Contains(page.body, `id="disconnect-keyed"`) {
		t.Fatalf("integrations page shows an unsafe logo or wrong buttons:\n%s", page.body)
	}

	// Connect through the form.
	resp := b.post("/integrations/keyed/connect", url.Values{"csrf": {tok}})
	loc := resp.header.Get("Location")
	if resp.status != http.StatusSeeOther || !regexp.MustCompile(`^/connect/pc_[a-z2-7]+$`).MatchString(loc) {
		t.Fatalf("connect: %d %q", resp.status, loc)
	}
	form := b.get(loc)
	wantStatus(t, "API-key form", form, http.StatusOK, `<label for="field-site">Site <span aria-hidden="true">*</span></label>`,
		`id="field-api_token" name="f_api_token" value=""`, `type="password"`, `placeholder="acme"`)

	bad := []struct {
		name   string
		values url.Values
		want   []string
	}{
		{"missing field", url.Values{"f_site": {"acme"}}, []string{"API token is required", `id="field-api_token"`, `aria-invalid="true" aria-describedby="error-api_token"`, `value="acme"`}},
		{"pattern mismatch", url.Values{"f_site": {"Acme Inc"}, "f_api_token": {"s3cret-key"}}, []string{"Site is not in the expected format", `aria-describedby="error-site" autofocus`}},
	}
	for _, tt := range bad {
		tt.values.Set("csrf", tok)
		resp := b.post(loc, tt.values)
		wantStatus(t, tt.name, resp, http.StatusUnprocessableEntity, tt.want...)
		if strings.Contains(resp.body, "s3cret-key") {
			t.Fatalf("%s: the form echoes the secret value", tt.name)
		}
	}
	done := b.post(loc, url.Values{"csrf": {tok}, "f_site": {"acme"}, "f_api_token": {"s3cret-key"}})
	if done.status != http.StatusSeeOther || done.header.Get("Location") != loc {
		t.Fatalf("submit: %d %s\n%s", done.status, done.header.Get("Location"), done.body)
	}
	wantStatus(t, "result", b.get(loc), http.StatusOK, "You are connected to Keyed &lt;Service&gt;.")
	wantStatus(t, "replayed submit", b.post(loc, url.Values{"csrf": {tok}, "f_site": {"other"}, "f_api_token": {"k"}}), http.StatusConflict, "already ended")
	cred, err := f.conns.Credential(ctx, f.alice.ID, "keyed")
	if err != nil || cred.Fields["site"] != "acme" || cred.Fields["api_token"] != "s3cret-key" {
		t.Fatalf("stored credential: %v", err)
	}
	wantStatus(t, "integrations after connecting", b.get("/integrations"), http.StatusOK, `id="status-keyed">Connected`, `id="disconnect-keyed"`, "Reconnect")

	// Disconnect.
	resp = b.post("/integrations/keyed/disconnect", url.Values{"csrf": {tok}})
	if resp.status != http.StatusSeeOther {
		t.Fatalf("disconnect: %d", resp.status)
	}
	wantStatus(t, "after disconnect", b.get("/integrations?notice=disconnected"), http.StatusOK, "The integration was disconnected.", `id="status-keyed">Not connected`)

	// A cookie integration explains why it cannot connect, honestly failed.
	resp = b.post("/integrations/cookied/connect", url.Values{"csrf": {tok}})
	wantStatus(t, "cookie handshake", b.get(resp.header.Get("Location")), http.StatusOK, "cookie capture is not available on this server yet", "did not succeed")
	wantStatus(t, "unknown integration", b.post("/integrations/nope/connect", url.Values{"csrf": {tok}}), http.StatusNotFound, "nope")
}

func TestPortal_handshakeErrors(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	tok := b.signIn("alice@example.com")
	resp := b.post("/integrations/keyed/connect", url.Values{"csrf": {tok}})
	loc := resp.header.Get("Location")
	wantStatus(t, "wrong id", b.get("/connect/pc_doesnotexist"), http.StatusNotFound, "No such connection request")
	wantStatus(t, "garbage id", b.get("/connect/%3Cscript%3E"), http.StatusNotFound)
	f.clock.Advance(11 * time.Minute)
	wantStatus(t, "expired page", b.get(loc), http.StatusOK, "Request expired", "handshake window")
	wantStatus(t, "expired submit", b.post(loc, url.Values{"csrf": {tok}, "f_site": {"acme"}, "f_api_token": {"k"}}), http.StatusGone, "ran out of time")
	wantStatus(t, "callback with a made-up state", b.get("/oauth/callback/keyed?state=made-up&code=x"), http.StatusBadRequest, "already used")
}

// TestPortal_isolation checks that Bob, signed in, can neither see, complete,
// disconnect nor revoke anything of Alice's.
func TestPortal_isolation(t *testing.T) {
	f := newFixture(t)
	alice, bob := f.browser(t), f.browser(t)
	aliceTok, bobTok := alice.signIn("alice@example.com"), bob.signIn("bob@example.com")
	loc := alice.post("/integrations/keyed/connect", url.Values{"csrf": {aliceTok}}).header.Get("Location")
	pendingID := strings.TrimPrefix(loc, "/connect/")

	wantStatus(t, "bob opens alice's request", bob.get(loc), http.StatusNotFound, "No such connection request")
	wantStatus(t, "bob submits alice's form", bob.post(loc, url.Values{"csrf": {bobTok}, "f_site": {"evil"}, "f_api_token": {"bobs"}}), http.StatusNotFound)
	wantStatus(t, "bob submits with alice's CSRF", bob.post(loc, url.Values{"csrf": {aliceTok}, "f_site": {"evil"}, "f_api_token": {"bobs"}}), http.StatusForbidden)
	p, err := f.st.Pending(ctx, f.alice.ID, pendingID)
	if err != nil || p.Status != store.PendingWaiting {
		t.Fatalf("alice's request after bob's attempts: %+v, %v", p, err)
	}
	wantStatus(t, "alice completes hers", alice.post(loc, url.Values{"csrf": {aliceTok}, "f_site": {"acme"}, "f_api_token": {"alices"}}), http.StatusSeeOther)

	// Bob's disconnect leaves Alice's connection alone.
	bob.post("/integrations/keyed/disconnect", url.Values{"csrf": {bobTok}})
	if cred, err := f.conns.Credential(ctx, f.alice.ID, "keyed"); err != nil || cred.Fields["api_token"] != "alices" {
		t.Fatalf("alice's connection after bob's disconnect: %v", err)
	}
	wantStatus(t, "bob's integrations", bob.get("/integrations"), http.StatusOK, `id="status-keyed">Not connected`)
	if _, err := f.st.Connection(ctx, f.bob.ID, "keyed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob has a keyed connection: %v", err)
	}

	// Bob cannot revoke Alice's token.
	toks, err := f.st.Tokens(ctx, f.alice.ID)
	if err != nil || len(toks) != 1 {
		t.Fatal(toks, err)
	}
	wantStatus(t, "bob revokes alice's token", bob.post("/account/tokens/"+toks[0].ID+"/revoke", url.Values{"csrf": {bobTok}}), http.StatusNotFound)
	if toks, _ := f.st.Tokens(ctx, f.alice.ID); !toks[0].RevokedAt.IsZero() {
		t.Fatal("bob revoked alice's token")
	}
	if strings.Contains(bob.get("/account").body, toks[0].ID) {
		t.Fatal("bob's account page lists alice's token")
	}
}

func TestPortal_account(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	tok := b.signIn("alice@example.com")
	resp := b.post("/account/tokens", url.Values{"csrf": {tok}, "name": {"ci runner"}})
	wantStatus(t, "create token", resp, http.StatusCreated, "Your new API token", "ci runner")
	m := regexp.MustCompile(`id="new-token" tabindex="0">(wb_[A-Za-z0-9_-]+)<`).FindStringSubmatch(resp.body)
	if m == nil {
		t.Fatalf("no token on the page:\n%s", resp.body)
	}
	rec, err := accounts.Authenticate(ctx, f.st, m[1])
	if err != nil || rec.UserID != f.alice.ID || rec.Name != "ci runner" {
		t.Fatalf("the shown token = %+v, %v", rec, err)
	}
	page := b.get("/account")
	if strings.Contains(page.body, m[1]) {
		t.Fatal("the account page shows the token again")
	}
	wantStatus(t, "long name", b.post("/account/tokens", url.Values{"csrf": {tok}, "name": {strings.Repeat("n", 101)}}), http.StatusUnprocessableEntity, "at most 100 characters")

	wantStatus(t, "revoke", b.post("/account/tokens/"+rec.ID+"/revoke", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	if _, err := accounts.Authenticate(ctx, f.st, m[1]); !errors.Is(err, failure.ErrUnauthenticated) {
		t.Fatalf("revoked token still authenticates: %v", err)
	}
	wantStatus(t, "revoke unknown", b.post("/account/tokens/tok_nope/revoke", url.Values{"csrf": {tok}}), http.StatusNotFound)

	pw := []struct {
		name   string
		form   url.Values
		status int
		want   string
	}{
		{"too short", url.Values{"current": {password}, "new": {"short"}, "confirm": {"short"}}, http.StatusUnprocessableEntity, "at least 10 characters"},
		{"mismatch", url.Values{"current": {password}, "new": {"new password 1"}, "confirm": {"new password 2"}}, http.StatusUnprocessableEntity, "differ"},
		{"wrong current", url.Values{"current": {"guess"}, "new": {"new password 1"}, "confirm": {"new password 1"}}, http.StatusUnprocessableEntity, "current password is wrong"},
		{"ok", url.Values{"current": {password}, "new": {"new password 1"}, "confirm": {"new password 1"}}, http.StatusSeeOther, ""},
	}
	for _, tt := range pw {
		tt.form.Set("csrf", tok)
		wantStatus(t, "password "+tt.name, b.post("/account/password", tt.form), tt.status, tt.want)
	}
	if _, err := f.signIn.Login(ctx, "192.0.2.1", "", "alice@example.com", "new password 1"); err != nil {
		t.Fatalf("login with the new password: %v", err)
	}
}

// TestPortal_loginThrottled guesses one account's password until the
// portal refuses to check it: 429 with Retry-After, and the right password
// waits too.
func TestPortal_loginThrottled(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	tok := csrf(t, b.get("/login").body)
	for i := range accounts.DefaultPerAccount.Free {
		resp := b.post("/login", url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {"guess"}})
		wantStatus(t, fmt.Sprintf("guess %d", i+1), resp, http.StatusUnauthorized, "Wrong email or password.")
	}
	resp := b.post("/login", url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {password}})
	wantStatus(t, "right password while throttled", resp, http.StatusTooManyRequests, "Too many sign-in attempts from this account")
	if got, want := resp.header.Get("Retry-After"), strconv.Itoa(int(accounts.DefaultPerAccount.Wait.Seconds())); got != want {
		t.Fatalf("Retry-After %q, want %q", got, want)
	}
	f.clock.Advance(accounts.DefaultPerAccount.Wait)
	resp = b.post("/login", url.Values{"csrf": {tok}, "email": {"alice@example.com"}, "password": {password}})
	wantStatus(t, "right password after the wait", resp, http.StatusSeeOther)
}

// TestPortal_loginBounded sends 32 wrong-password sign-ins at once to a
// portal allowed one password check at a time and no queue: each is either
// checked (401) or refused at once with 503 and Retry-After, never queued
// without end. The production cost makes each check hold its slot long
// enough for the others to find it taken.
func TestPortal_loginBounded(t *testing.T) {
	f := newFixtureWith(t, func(st store.Store) (*accounts.SignIn, *secrets.Passwords) {
		pw := secrets.NewPasswords(secrets.PasswordOptions{Concurrency: 1, Queue: -1})
		generous := store.AttemptPolicy{Free: 1000, Wait: time.Second, MaxWait: time.Second, Forget: time.Hour}
		return accounts.NewSignIn(st, pw, accounts.SignInOptions{PerAddress: generous, PerAccount: generous}), pw
	})
	const n = 32
	statuses := make(chan response, n)
	var wg sync.WaitGroup
	for i := range n {
		b := f.browser(t)
		tok := csrf(t, b.get("/login").body)
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- b.post("/login", url.Values{"csrf": {tok}, "email": {fmt.Sprintf("user%d@example.com", i)}, "password": {"guess"}})
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for resp := range statuses {
		counts[resp.status]++
		if resp.status == http.StatusServiceUnavailable && resp.header.Get("Retry-After") != "1" {
			t.Errorf("503 without Retry-After: %v", resp.header)
		}
	}
	if counts[http.StatusUnauthorized] < 1 || counts[http.StatusServiceUnavailable] < 1 ||
		counts[http.StatusUnauthorized]+counts[http.StatusServiceUnavailable] != n {
		t.Fatalf("statuses %v: want some 401 (checked) and some 503 (refused), nothing else", counts)
	}
}
