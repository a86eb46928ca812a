package connect

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connect/fakeoauth"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

var ctx = context.Background()

const publicURL = "http://127.0.0.1:8420"

// catalog is a fixed Catalog.
type catalog map[string]*manifest.Manifest

func (c catalog) Manifest(name string) (*manifest.Manifest, bool) {
	m, ok := c[name]
	return m, ok
}

func oauthManifest(name, tokenAuth string) *manifest.Manifest {
	return &manifest.Manifest{Name: name, Auth: manifest.Auth{Mode: manifest.ModeOAuth2, OAuth2: &manifest.OAuth2{
		AuthorizeURL: "https://auth.example.com/authorize", TokenURL: "https://auth.example.com/token",
		Scopes: []string{"repo", "read:user"}, TokenAuth: tokenAuth}}}
}

var keyedFields = []manifest.Field{
	{Name: "site", Label: "Site", Required: true, Pattern: `[a-z0-9-]+`},
	{Name: "email", Label: "Email"},
	{Name: "api_token", Label: "API token", Secret: true, Required: true},
}

func testCatalog() catalog {
	return catalog{
		"plain":   {Name: "plain", Auth: manifest.Auth{Mode: manifest.ModeNone}},
		"cookied": {Name: "cookied", Auth: manifest.Auth{Mode: manifest.ModeCookie, Cookie: &manifest.Cookie{Domains: []string{"example.com"}, LoginURL: "https://example.com/login"}}},
		"keyed": {Name: "keyed", Auth: manifest.Auth{Mode: manifest.ModeAPIKey, APIKey: &manifest.APIKey{Fields: keyedFields,
			Placement: manifest.Placement{In: "basic", Username: "{email}", Password: "{api_token}"}}}},
		"basicly":   oauthManifest("basicly", "basic"),
		"posty":     oauthManifest("posty", "post"),
		"defaulted": oauthManifest("defaulted", ""),
		"unset":     oauthManifest("unset", "post"),
	}
}

// fixture is a Service over a SQLite store with a settable clock, fake
// providers for the oauth2 integrations and two users.
type fixture struct {
	clock      *storetest.Clock
	st         store.Store
	conns      *connections.Service
	providers  *Providers
	svc        *Service
	fakes      map[string]*fakeoauth.Provider
	env        map[string]string
	alice, bob store.User
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: storetest.NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)), fakes: map[string]*fakeoauth.Provider{}, env: map[string]string{}}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(f.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	cat := testCatalog()
	for name, auth := range map[string]string{"basicly": "basic", "posty": "post", "defaulted": "post"} {
		fake := fakeoauth.Start(t, fakeoauth.Config{ClientID: name + "-client", ClientSecret: name + " s3cret&=", TokenAuth: auth,
			RedirectURI: publicURL + CallbackPath + name, ExpiresIn: 3600})
		f.fakes[name] = fake
		prefix := manifest.EnvPrefix(name)
		f.env[prefix+"_CLIENT_ID"] = name + "-client"
		f.env[prefix+"_CLIENT_SECRET"] = name + " s3cret&="
		f.env[prefix+"_OAUTH_AUTHORIZE_URL"] = fake.AuthorizeURL()
		f.env[prefix+"_OAUTH_TOKEN_URL"] = fake.TokenURL()
	}
	f.providers = NewProviders(ProviderOptions{Catalog: cat, PublicURL: publicURL, Getenv: func(k string) string { return f.env[k] },
		AllowPrivate: true, Now: f.clock.Now})
	f.conns = connections.New(st, secrets.NewKeyring(secrets.Config{Key: bytes.Repeat([]byte{7}, secrets.KeySize)}),
		connections.Options{Refresher: f.providers, Now: f.clock.Now})
	f.svc, err = New(Options{Store: st, Vault: f.conns, Providers: f.providers, Catalog: cat, PublicURL: publicURL, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"alice@example.com", "bob@example.com"} {
		u, err := st.CreateUser(ctx, store.NewUser{Email: email})
		if err != nil {
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

// noRedirects is a client that reports redirects instead of following them.
var noRedirects = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorize runs the browser's part of an OAuth handshake started by
// Connect: it opens the provider's authorization URL and returns the
// callback the provider redirects to.
func (f *fixture) authorize(t *testing.T, userID, connectURL, id string) Callback {
	t.Helper()
	u, err := url.Parse(connectURL)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := f.svc.AuthorizeURL(ctx, userID, id, u.Query().Get("state"))
	if err != nil {
		t.Fatalf("AuthorizeURL: %v", err)
	}
	resp, err := noRedirects.Get(auth)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: status %d", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	q := back.Query()
	return Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), ErrorDescription: q.Get("error_description")}
}
