package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connect/fakeoauth"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// oauthSetup starts a fake provider for an oauth fixture and points the
// integration at it through the documented environment variables.
func oauthSetup(t *testing.T, integration, tokenAuth, publicURL, apiURL string) *fakeoauth.Provider {
	t.Helper()
	fake := fakeoauth.Start(t, fakeoauth.Config{ClientID: integration + "-id", ClientSecret: integration + " secret/+=", TokenAuth: tokenAuth,
		RedirectURI: publicURL + "/oauth/callback/" + integration, ExpiresIn: 3600})
	prefix := strings.ToUpper(integration)
	t.Setenv(prefix+"_CLIENT_ID", integration+"-id")
	t.Setenv(prefix+"_CLIENT_SECRET", integration+" secret/+=")
	t.Setenv(prefix+"_OAUTH_AUTHORIZE_URL", fake.AuthorizeURL())
	t.Setenv(prefix+"_OAUTH_TOKEN_URL", fake.TokenURL())
	t.Setenv(prefix+"_BASE_URL", apiURL)
	return fake
}

// connectViaBrowser runs the user's side of an OAuth connect: open the URL
// the agent got, sign in, continue to the provider, come back. It returns
// the final page.
func connectViaBrowser(t *testing.T, b *webBrowser, link, email string) page {
	t.Helper()
	p := b.open(link)
	if strings.Contains(p.body, `action="/login"`) {
		p = b.signIn(p, email)
	}
	wantPage(t, "connect page", p, http.StatusOK, "Continue to 127.0.0.1:")
	cont := regexp.MustCompile(`id="continue" href="([^"]+)"`).FindStringSubmatch(p.body)
	if cont == nil {
		t.Fatalf("no continue link:\n%s", p.body)
	}
	return b.open(htmlUnescape(cont[1]))
}

// TestServer_OAuthConnect drives the OAuth connect flow end to end through
// the real server: an agent starts it (connect), the user's browser signs
// in, authorizes at a fake provider and comes back, the agent's wait ends
// CONNECTED, and a plugin call carries the token; then refresh, replay,
// wrong-verifier and cross-user cases.
func TestServer_OAuthConnect(t *testing.T) {
	addr := freeAddr(t)
	public := "http://" + addr
	api := whoamiAPI(t)
	fakes := map[string]*fakeoauth.Provider{
		"oauthy": oauthSetup(t, "oauthy", "basic", public, api.URL),
		"posty":  oauthSetup(t, "posty", "post", public, api.URL),
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	buildAuthPlugins(t, plugins)
	w := startWorkbench(t, Config{ListenAddr: addr, DataDir: t.TempDir(), PluginsDir: plugins, EgressAllowPrivate: true})
	alice, bob := w.addUser(t, "alice@example.com"), w.addUser(t, "bob@example.com")
	svc := serviceOf[*connect.Service](t, w.srv)
	ctx := context.Background()
	// Alice's browser signs in when the first connect link sends it to the
	// sign-in page; Bob's signs in now. (Each sign-in costs an argon2id
	// verification, slow under the race detector.)
	aliceB, bobB := newBrowser(t, w.base), newBrowserSignedIn(t, w, "bob@example.com")

	for _, integration := range []string{"oauthy", "posty"} {
		fake := fakes[integration]
		t.Run("connect "+integration, func(t *testing.T) {
			link, id, err := svc.Connect(ctx, alice.ID, integration)
			if err != nil {
				t.Fatal(err)
			}
			waited := make(chan store.PendingStatus, 1)
			go func() {
				status, _, err := svc.Wait(ctx, alice.ID, id, 30*time.Second)
				if err != nil {
					t.Error(err)
				}
				waited <- status
			}()
			done := connectViaBrowser(t, aliceB, link, "alice@example.com")
			wantPage(t, "callback", done, http.StatusOK, "You are connected to")
			select {
			case s := <-waited:
				if s != store.PendingConnected {
					t.Fatalf("wait_for_connection saw %s", s)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the wait did not end after the callback")
			}
			if got := fake.Scopes(); len(got) == 0 || !slices.Equal(got, strings.Fields(map[string]string{"oauthy": "read write", "posty": "read"}[integration])) {
				t.Errorf("scopes asked for: %v", got)
			}
			seen, err := w.callTool(t, alice.ID, integration, integration+"_whoami")
			if err != nil {
				t.Fatal(err)
			}
			token, ok := strings.CutPrefix(seen["authorization"], "Bearer ")
			if !ok || !fake.Issued(token) {
				t.Fatalf("upstream saw Authorization %q; want a token the provider issued", seen["authorization"])
			}
			var terr *failure.Error
			if _, err := w.callTool(t, bob.ID, integration, integration+"_whoami"); !errors.As(err, &terr) || terr.Code != failure.NotConnected {
				t.Fatalf("bob's call: %v, want NOT_CONNECTED", err)
			}
			// The callback works once.
			wantPage(t, "replayed callback", aliceB.get(strings.TrimPrefix(done.url, w.base)), http.StatusBadRequest, "already used")
		})
	}

	t.Run("refresh", func(t *testing.T) {
		fake := fakes["oauthy"]
		fake.SetExpiresIn(30) // inside the refresh window from the start
		link, _, err := svc.Connect(ctx, alice.ID, "oauthy")
		if err != nil {
			t.Fatal(err)
		}
		wantPage(t, "reconnect", connectViaBrowser(t, aliceB, link, "alice@example.com"), http.StatusOK, "You are connected")
		_, before := fake.Counts()
		seen, err := w.callTool(t, alice.ID, "oauthy", "oauthy_whoami")
		if err != nil {
			t.Fatal(err)
		}
		if _, after := fake.Counts(); after != before+1 || !fake.Issued(strings.TrimPrefix(seen["authorization"], "Bearer ")) {
			t.Fatalf("refreshes %d -> %d, upstream saw %q", before, after, seen["authorization"])
		}
		// The user revokes the app at the provider: the next refresh is
		// rejected and the user is not connected, with the provider's reason.
		fake.RevokeRefreshTokens()
		var terr *failure.Error
		if _, err := w.callTool(t, alice.ID, "oauthy", "oauthy_whoami"); !errors.As(err, &terr) || terr.Code != failure.NotConnected {
			t.Fatalf("call after revocation: %v, want NOT_CONNECTED", err)
		}
		wantPage(t, "integrations after revocation", aliceB.get("/integrations"), http.StatusOK,
			`id="status-oauthy">Not connected`, "The refresh token is invalid or was revoked.")
	})

	t.Run("wrong PKCE verifier", func(t *testing.T) {
		link, id, err := svc.Connect(ctx, alice.ID, "posty")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(link)
		// A code bound to a challenge that is not this request's.
		verifier := make([]byte, 32)
		rand.Read(verifier)
		sum := sha256.Sum256([]byte(base64.RawURLEncoding.EncodeToString(verifier)))
		code := fakes["posty"].IssueCode(base64.RawURLEncoding.EncodeToString(sum[:]))
		p := aliceB.get("/oauth/callback/posty?" + url.Values{"state": {u.Query().Get("state")}, "code": {code}}.Encode())
		wantPage(t, "callback", p, http.StatusBadGateway, "PKCE verification failed")
		status, reason, err := svc.Wait(ctx, alice.ID, id, time.Second)
		if err != nil || status != store.PendingFailed || !strings.Contains(reason, "PKCE verification failed") {
			t.Fatalf("Wait = %s, %q, %v", status, reason, err)
		}
	})

	t.Run("denied", func(t *testing.T) {
		fakes["posty"].Deny("access_denied")
		defer fakes["posty"].Deny("")
		link, id, err := svc.Connect(ctx, alice.ID, "posty")
		if err != nil {
			t.Fatal(err)
		}
		wantPage(t, "callback", connectViaBrowser(t, aliceB, link, "alice@example.com"), http.StatusBadGateway, "access_denied")
		if status, reason, _ := svc.Wait(ctx, alice.ID, id, time.Second); status != store.PendingFailed || !strings.Contains(reason, "The user declined.") {
			t.Fatalf("Wait = %s, %q", status, reason)
		}
	})

	t.Run("callback in another user's session", func(t *testing.T) {
		if err := serviceOf[*connections.Service](t, w.srv).Disconnect(ctx, alice.ID, "posty"); err != nil {
			t.Fatal(err)
		}
		link, id, err := svc.Connect(ctx, alice.ID, "posty")
		if err != nil {
			t.Fatal(err)
		}
		// Alice's browser goes to the provider; the answer lands in Bob's.
		p := aliceB.open(link)
		cont := regexp.MustCompile(`id="continue" href="([^"]+)"`).FindStringSubmatch(p.body)
		if cont == nil {
			t.Fatalf("no continue link:\n%s", p.body)
		}
		resp := aliceB.get(htmlUnescape(cont[1])) // the provider's redirect, not followed
		if resp.status != http.StatusFound {
			t.Fatalf("provider answered %d", resp.status)
		}
		wantPage(t, "bob's callback", bobB.open(resp.location), http.StatusForbidden, "another user")
		if status, _, _ := svc.Wait(ctx, alice.ID, id, 0); status != store.PendingFailed {
			t.Fatalf("alice's request is %s", status)
		}
		for _, u := range []store.User{alice, bob} {
			if _, err := w.srv.store.Connection(ctx, u.ID, "posty"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s got a connection: %v", u.Email, err)
			}
		}
		// Bob cannot see or wait on Alice's request either.
		wantPage(t, "bob opens alice's link", bobB.get(strings.TrimPrefix(link, w.base)), http.StatusNotFound)
		if _, _, err := svc.Wait(ctx, bob.ID, id, 0); err == nil {
			t.Fatal("bob waited on alice's request")
		}
	})
}

// newBrowserSignedIn returns a browser signed in as email.
func newBrowserSignedIn(t *testing.T, w *workbench, email string) *webBrowser {
	t.Helper()
	b := newBrowser(t, w.base)
	landed := b.signIn(b.get("/login"), email)
	wantPage(t, "sign-in", landed, http.StatusOK, "Integrations")
	return b
}

// TestServer_connectErrors checks the clear errors of bad connect input
// through the portal and the connect service.
func TestServer_connectErrors(t *testing.T) {
	plugins := filepath.Join(t.TempDir(), "plugins")
	buildAuthPlugins(t, plugins)
	t.Setenv("OAUTHY_CLIENT_ID", "")
	w := startWorkbench(t, Config{DataDir: t.TempDir(), PluginsDir: plugins, ConnectWindow: 3 * time.Second})
	alice := w.addUser(t, "alice@example.com")
	b := newBrowserSignedIn(t, w, "alice@example.com")
	tok := formToken(t, b.get("/integrations"))
	ctx := context.Background()

	wantPage(t, "unknown integration", b.post("/integrations/nope/connect", url.Values{"csrf": {tok}}), http.StatusNotFound, "nope")
	wantPage(t, "oauth without a client", b.post("/integrations/oauthy/connect", url.Values{"csrf": {tok}}), http.StatusConflict, "OAUTHY_CLIENT_ID")
	wantPage(t, "wrong connection id", b.get("/connect/pc_aaaaaaaaaaaaaaaaaaaaaaaaaa"), http.StatusNotFound, "No such connection request")

	form := b.post("/integrations/keyed/connect", url.Values{"csrf": {tok}})
	if form.status != http.StatusSeeOther {
		t.Fatalf("connect keyed: %d", form.status)
	}
	wantPage(t, "missing field", b.post(form.location, url.Values{"csrf": {tok}, "f_site": {"acme"}}), http.StatusUnprocessableEntity, "API key is required")
	wantPage(t, "pattern mismatch", b.post(form.location, url.Values{"csrf": {tok}, "f_site": {"ACME!"}, "f_api_key": {"k"}}), http.StatusUnprocessableEntity,
		"Site is not in the expected format")
	id := strings.TrimPrefix(form.location, "/connect/")
	p, err := w.srv.store.Pending(ctx, alice.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(p.ExpiresAt) + 50*time.Millisecond)
	wantPage(t, "expired", b.post(form.location, url.Values{"csrf": {tok}, "f_site": {"acme"}, "f_api_key": {"k"}}), http.StatusGone, "ran out of time")
	status, reason, err := serviceOf[*connect.Service](t, w.srv).Wait(ctx, alice.ID, id, time.Second)
	if err != nil || status != store.PendingExpired || reason == "" {
		t.Fatalf("Wait on the expired request = %s, %q, %v", status, reason, err)
	}
	if _, _, err := serviceOf[*connect.Service](t, w.srv).Wait(ctx, alice.ID, "pc_nope", time.Second); err == nil || !strings.Contains(err.Error(), "unknown connection") {
		t.Fatalf("Wait on a wrong id: %v", err)
	}
}
