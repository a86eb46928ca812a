package connections

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

var ctx = context.Background()

const (
	secretAccess  = "gho_SECRET_access"
	secretRefresh = "ghr_SECRET_refresh"
	secretKey     = "nrk_SECRET_key"
)

type fixture struct {
	st         store.Store
	clock      *storetest.Clock
	keys       *secrets.Keyring
	svc        *Service
	alice, bob store.User
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, secrets.KeySize) }

func newFixture(t *testing.T, r Refresher) *fixture {
	t.Helper()
	clock := storetest.NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"), store.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, clock: clock, keys: secrets.NewKeyring(secrets.Config{Key: key(1)})}
	f.svc = New(st, f.keys, Options{Refresher: r, Now: clock.Now})
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

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []string{secretAccess, secretRefresh, secretKey} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error reveals a secret: %v", err)
		}
	}
}

func TestService_SaveCredential(t *testing.T) {
	f := newFixture(t, nil)
	future := f.clock.Now().Add(24 * time.Hour)
	tests := []struct {
		integration string
		sec         Secret
		check       func(t *testing.T, c *credential.Credential)
	}{
		{"github", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}, RefreshToken: secretRefresh, ExpiresAt: future},
			func(t *testing.T, c *credential.Credential) {
				if c.AccessToken != secretAccess || c.Fields != nil || c.Cookies != nil {
					t.Fatalf("oauth2 credential = %#v", *c)
				}
			}},
		{"newrelic", Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"api_key": secretKey, "region": "eu"}}},
			func(t *testing.T, c *credential.Credential) {
				if c.Fields["api_key"] != secretKey || c.Fields["region"] != "eu" || len(c.Fields) != 2 {
					t.Fatal("apikey fields did not round trip")
				}
			}},
		{"portal", Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: []*http.Cookie{
			{Name: "sid", Value: "v1", Domain: ".example.com", Path: "/", Expires: future, Secure: true, HttpOnly: true},
			{Name: "pref", Value: "v2", Domain: "example.com"},
		}}},
			func(t *testing.T, c *credential.Credential) {
				if len(c.Cookies) != 2 || c.Cookies[0].Name != "sid" || c.Cookies[0].Domain != ".example.com" || !c.Cookies[0].Expires.Equal(future) ||
					!c.Cookies[0].Secure || !c.Cookies[0].HttpOnly || c.Cookies[1].Value != "v2" {
					t.Fatalf("cookies did not round trip: %+v", c.Cookies)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.integration, func(t *testing.T) {
			row, err := f.svc.Save(ctx, f.alice.ID, tt.integration, tt.sec)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{secretAccess, secretRefresh, secretKey, "v1"} {
				if bytes.Contains(row.Sealed, []byte(s)) || bytes.Contains(row.SealedRefresh, []byte(s)) {
					t.Fatalf("row holds %q in clear", s)
				}
			}
			got, err := f.svc.Credential(ctx, f.alice.ID, tt.integration)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
			// Bob has no such connection.
			_, err = f.svc.Credential(ctx, f.bob.ID, tt.integration)
			if !errors.Is(err, failure.ErrNotConnected) {
				t.Fatalf("bob: err = %v, want ErrNotConnected", err)
			}
		})
	}

	_, err := f.svc.Credential(ctx, f.alice.ID, "slack")
	if !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("missing connection: err = %v", err)
	}
	must(t, f.svc.Disconnect(ctx, f.alice.ID, "github"))
	if _, err := f.svc.Credential(ctx, f.alice.ID, "github"); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("after Disconnect: err = %v", err)
	}
	if err := f.svc.Disconnect(ctx, f.bob.ID, "newrelic"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob disconnecting alice: err = %v", err)
	}
	if _, err := f.svc.Credential(ctx, f.alice.ID, "newrelic"); err != nil {
		t.Fatalf("alice's connection after bob's disconnect: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestService_Save_errors(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name string
		user string
		sec  Secret
		want error
	}{
		{"oauth2 without token", f.alice.ID, Secret{Mode: credential.ModeOAuth2}, store.ErrInvalid},
		{"apikey without fields", f.alice.ID, Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{AccessToken: "x"}}, store.ErrInvalid},
		{"cookie without cookies", f.alice.ID, Secret{Mode: credential.ModeCookie}, store.ErrInvalid},
		{"none mode", f.alice.ID, Secret{Mode: credential.ModeNone}, store.ErrInvalid},
		{"refresh token on apikey", f.alice.ID, Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"k": secretKey}}, RefreshToken: secretRefresh}, store.ErrInvalid},
		{"unknown user", "usr_missing", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}}, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Save(ctx, tt.user, "github", tt.sec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			noSecret(t, err)
		})
	}
}

// TestService_Credential_copiedRow: a sealed row copied into another user's
// row does not open there.
func TestService_Credential_copiedRow(t *testing.T) {
	f := newFixture(t, nil)
	row, err := f.svc.Save(ctx, f.alice.ID, "github", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}, RefreshToken: secretRefresh})
	must(t, err)
	row.UserID = f.bob.ID
	_, err = f.st.PutConnection(ctx, row)
	must(t, err)
	got, err := f.svc.Credential(ctx, f.bob.ID, "github")
	if !errors.Is(err, secrets.ErrOpen) || got != nil {
		t.Fatalf("copied row: credential %v, err = %v; want ErrOpen", got, err)
	}
	noSecret(t, err)
	// Swapping the refresh blob in as the credential fails too.
	row.UserID = f.alice.ID
	row.Sealed = row.SealedRefresh
	_, err = f.st.PutConnection(ctx, row)
	must(t, err)
	if _, err := f.svc.Credential(ctx, f.alice.ID, "github"); !errors.Is(err, secrets.ErrOpen) {
		t.Fatalf("refresh blob as credential: err = %v; want ErrOpen", err)
	}
}

func TestService_Status(t *testing.T) {
	f := newFixture(t, nil)
	now := f.clock.Now()
	save := func(integration string, sec Secret) {
		t.Helper()
		_, err := f.svc.Save(ctx, f.alice.ID, integration, sec)
		must(t, err)
	}
	save("live-cookies", Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: []*http.Cookie{
		{Name: "old", Value: "1", Domain: "a.test", Expires: now.Add(-time.Hour)},
		{Name: "new", Value: "2", Domain: "a.test", Expires: now.Add(time.Hour)},
	}}})
	save("session-cookie", Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: []*http.Cookie{{Name: "s", Value: "1", Domain: "a.test"}}}})
	save("dead-cookies", Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: []*http.Cookie{
		{Name: "old", Value: "1", Domain: "a.test", Expires: now.Add(-time.Hour)},
		{Name: "gone", Value: "2", Domain: "a.test", MaxAge: -1},
	}}})
	save("apikey", Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"api_key": secretKey}}})
	save("oauth-live", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}, ExpiresAt: now.Add(time.Hour)})
	save("oauth-forever", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}})
	save("oauth-expired", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}, RefreshToken: secretRefresh, ExpiresAt: now.Add(-time.Minute)})
	save("failed", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}})
	must(t, f.st.SetConnectionStatus(ctx, f.alice.ID, "failed", store.ConnectionFailed, "invalid_grant"))

	tests := []struct {
		integration, mode string
		connected         bool
		reason            string
	}{
		{"anything", credential.ModeNone, true, ""},
		{"missing", credential.ModeOAuth2, false, "not connected"},
		{"live-cookies", credential.ModeCookie, true, ""},
		{"session-cookie", credential.ModeCookie, true, ""},
		{"dead-cookies", credential.ModeCookie, false, "expired"},
		{"apikey", credential.ModeAPIKey, true, ""},
		{"apikey", credential.ModeOAuth2, false, "auth mode"},
		{"oauth-live", credential.ModeOAuth2, true, ""},
		{"oauth-forever", credential.ModeOAuth2, true, ""},
		{"oauth-expired", credential.ModeOAuth2, false, "cannot be refreshed"}, // no refresher configured
		{"failed", credential.ModeOAuth2, false, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.integration+"/"+tt.mode, func(t *testing.T) {
			st, err := f.svc.Status(ctx, f.alice.ID, tt.integration, tt.mode)
			must(t, err)
			if st.Connected != tt.connected || !strings.Contains(st.Reason, tt.reason) || tt.connected && st.Reason != "" {
				t.Fatalf("Status = %+v, want connected %v reason %q", st, tt.connected, tt.reason)
			}
			// Credential agrees with Status (none mode has no credential to fetch).
			if tt.mode == credential.ModeNone || tt.reason == "auth mode" {
				return
			}
			_, err = f.svc.Credential(ctx, f.alice.ID, tt.integration)
			if tt.connected != (err == nil) || err != nil && !errors.Is(err, failure.ErrNotConnected) {
				t.Fatalf("Credential err = %v, want connected %v", err, tt.connected)
			}
			noSecret(t, err)
		})
	}
	// Bob sees none of it.
	if st, err := f.svc.Status(ctx, f.bob.ID, "apikey", credential.ModeAPIKey); err != nil || st.Connected {
		t.Fatalf("bob's Status = %+v, %v", st, err)
	}
}

// fakeRefresher renews tokens like a provider would.
type fakeRefresher struct {
	calls atomic.Int32
	delay time.Duration
	err   error
	next  func(n int32) Token
}

func (r *fakeRefresher) Refresh(ctx context.Context, userID, integration, refreshToken string) (Token, error) {
	n := r.calls.Add(1)
	if refreshToken == "" {
		return Token{}, errors.New("no refresh token passed")
	}
	time.Sleep(r.delay)
	if r.err != nil {
		return Token{}, r.err
	}
	return r.next(n), nil
}

func TestService_Credential_refresh(t *testing.T) {
	r := &fakeRefresher{}
	f := newFixture(t, r)
	r.next = func(n int32) Token {
		return Token{AccessToken: fmt.Sprintf("access-%d", n), ExpiresAt: f.clock.Now().Add(time.Hour)}
	}
	_, err := f.svc.Save(ctx, f.alice.ID, "github", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess},
		RefreshToken: secretRefresh, ExpiresAt: f.clock.Now().Add(2 * time.Minute)})
	must(t, err)

	// Outside the window: no refresh.
	c, err := f.svc.Credential(ctx, f.alice.ID, "github")
	must(t, err)
	if c.AccessToken != secretAccess || r.calls.Load() != 0 {
		t.Fatalf("token %q after %d refreshes", c.AccessToken, r.calls.Load())
	}
	// 30 s before expiry: refreshed once, even with concurrent callers.
	f.clock.Advance(90 * time.Second)
	r.delay = 20 * time.Millisecond
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := f.svc.Credential(ctx, f.alice.ID, "github")
			if err != nil || c.AccessToken != "access-1" {
				t.Errorf("concurrent Credential = %v, %v; want access-1", c, err)
			}
		}()
	}
	wg.Wait()
	if r.calls.Load() != 1 {
		t.Fatalf("refresher called %d times, want 1", r.calls.Load())
	}
	row, err := f.st.Connection(ctx, f.alice.ID, "github")
	must(t, err)
	if !row.ExpiresAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Fatalf("stored expiry = %v", row.ExpiresAt)
	}
	// The refresh token was kept (the provider sent none) and is used next time.
	f.clock.Advance(time.Hour)
	c, err = f.svc.Credential(ctx, f.alice.ID, "github")
	must(t, err)
	if c.AccessToken != "access-2" {
		t.Fatalf("second refresh gave %q", c.AccessToken)
	}

	// A transient failure inside the window keeps the current token.
	f.clock.Advance(59*time.Minute + 30*time.Second)
	r.err = errors.New("connection reset")
	c, err = f.svc.Credential(ctx, f.alice.ID, "github")
	if err != nil || c.AccessToken != "access-2" {
		t.Fatalf("transient failure before expiry = %v, %v", c, err)
	}
	// After expiry a transient failure is an error, but not "not connected".
	f.clock.Advance(time.Minute)
	_, err = f.svc.Credential(ctx, f.alice.ID, "github")
	if err == nil || errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("transient failure after expiry: err = %v", err)
	}
	if st, _ := f.svc.Status(ctx, f.alice.ID, "github", credential.ModeOAuth2); !st.Connected {
		t.Fatalf("a transient failure disconnected the user: %+v", st)
	}

	// The provider rejects the refresh: the user is not connected, with the reason.
	r.err = fmt.Errorf("invalid_grant: the refresh token was revoked: %w", ErrRefreshRejected)
	_, err = f.svc.Credential(ctx, f.alice.ID, "github")
	if !errors.Is(err, failure.ErrNotConnected) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("rejected refresh: err = %v", err)
	}
	noSecret(t, err)
	calls := r.calls.Load()
	st, err := f.svc.Status(ctx, f.alice.ID, "github", credential.ModeOAuth2)
	must(t, err)
	if st.Connected || !strings.Contains(st.Reason, "invalid_grant") {
		t.Fatalf("Status after rejected refresh = %+v", st)
	}
	if _, err := f.svc.Credential(ctx, f.alice.ID, "github"); !errors.Is(err, failure.ErrNotConnected) || r.calls.Load() != calls {
		t.Fatalf("failed connection: err = %v, refresher calls %d -> %d", err, calls, r.calls.Load())
	}
	// Connecting again clears the failure.
	_, err = f.svc.Save(ctx, f.alice.ID, "github", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}})
	must(t, err)
	if _, err := f.svc.Credential(ctx, f.alice.ID, "github"); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
}

func TestService_Credential_expiredWithoutRefresher(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.svc.Save(ctx, f.alice.ID, "github", Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess},
		RefreshToken: secretRefresh, ExpiresAt: f.clock.Now().Add(30 * time.Second)})
	must(t, err)
	// Inside the window but not expired: the token is still served.
	if c, err := f.svc.Credential(ctx, f.alice.ID, "github"); err != nil || c.AccessToken != secretAccess {
		t.Fatalf("before expiry = %v, %v", c, err)
	}
	f.clock.Advance(30 * time.Second)
	_, err = f.svc.Credential(ctx, f.alice.ID, "github")
	if !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("expired without refresher: err = %v", err)
	}
	noSecret(t, err)
}

func TestService_Rotate(t *testing.T) {
	f := newFixture(t, nil)
	for _, u := range []store.User{f.alice, f.bob} {
		for _, integ := range []string{"github", "slack"} {
			_, err := f.svc.Save(ctx, u.ID, integ, Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: u.ID + integ}, RefreshToken: "r" + u.ID})
			must(t, err)
		}
	}
	rotated := New(f.st, secrets.NewKeyring(secrets.Config{Key: key(2), OldKeys: [][]byte{key(1)}}), Options{Now: f.clock.Now})
	n, err := rotated.Rotate(ctx)
	if err != nil || n != 4 {
		t.Fatalf("Rotate = %d, %v; want 4", n, err)
	}
	if n, err := rotated.Rotate(ctx); err != nil || n != 0 {
		t.Fatalf("second Rotate = %d, %v; want 0", n, err)
	}
	onlyNew := New(f.st, secrets.NewKeyring(secrets.Config{Key: key(2)}), Options{Now: f.clock.Now})
	for _, u := range []store.User{f.alice, f.bob} {
		for _, integ := range []string{"github", "slack"} {
			c, err := onlyNew.Credential(ctx, u.ID, integ)
			if err != nil || c.AccessToken != u.ID+integ {
				t.Fatalf("%s/%s after rotation = %v, %v", u.Email, integ, c, err)
			}
			row, _ := f.st.Connection(ctx, u.ID, integ)
			if _, refresh, err := onlyNew.open(row); err != nil || refresh != "r"+u.ID {
				t.Fatalf("%s/%s refresh after rotation = %q, %v", u.Email, integ, refresh, err)
			}
		}
	}
	// The old keyring can no longer read rotated rows.
	if _, err := f.svc.Credential(ctx, f.alice.ID, "github"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("old keyring after rotation: err = %v", err)
	}
}

func TestService_Verifier(t *testing.T) {
	f := newFixture(t, nil)
	sealed, keyID, err := f.svc.SealVerifier(f.alice, "github", "verifier-123")
	must(t, err)
	p, err := f.st.CreatePending(ctx, store.NewPending{UserID: f.alice.ID, Integration: "github", Mode: "oauth2",
		SealedVerifier: sealed, KeyID: keyID, ExpiresAt: f.clock.Now().Add(10 * time.Minute)})
	must(t, err)
	got, err := f.svc.OpenVerifier(p)
	if err != nil || got != "verifier-123" {
		t.Fatalf("OpenVerifier = %q, %v", got, err)
	}
	// The verifier is bound to the user and integration.
	for _, change := range []func(p *store.PendingConnection){
		func(p *store.PendingConnection) { p.UserID = f.bob.ID },
		func(p *store.PendingConnection) { p.Integration = "slack" },
	} {
		q := p
		change(&q)
		if _, err := f.svc.OpenVerifier(q); !errors.Is(err, secrets.ErrOpen) {
			t.Fatalf("OpenVerifier of a moved blob: err = %v", err)
		}
	}
	p.SealedVerifier = nil
	if _, err := f.svc.OpenVerifier(p); err == nil {
		t.Fatal("OpenVerifier without a verifier succeeded")
	}
}

func TestService_Seal(t *testing.T) {
	f := newFixture(t, nil)
	sec := Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"api_key": secretKey}}}
	row, err := f.svc.Seal(ctx, f.alice.ID, "newrelic", sec)
	must(t, err)
	if bytes.Contains(row.Sealed, []byte(secretKey)) || row.UserID != f.alice.ID || row.Integration != "newrelic" || row.KeyID == "" {
		t.Fatalf("Seal = %+v", row)
	}
	// Nothing is stored until the caller stores the row.
	if _, err := f.svc.Credential(ctx, f.alice.ID, "newrelic"); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("Credential before storing: err = %v", err)
	}
	p, err := f.st.CreatePending(ctx, store.NewPending{UserID: f.alice.ID, Integration: "newrelic", Mode: "apikey", ExpiresAt: f.clock.Now().Add(time.Minute)})
	must(t, err)
	if _, err := f.st.CompletePending(ctx, f.alice.ID, p.ID, store.Outcome{Status: store.PendingConnected, Connection: &row}); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Credential(ctx, f.alice.ID, "newrelic")
	if err != nil || got.Fields["api_key"] != secretKey {
		t.Fatalf("Credential after completing = %v, %v", got, err)
	}

	tests := []struct {
		name string
		user string
		sec  Secret
		want error
	}{
		{"unknown user", "usr_missing", sec, store.ErrNotFound},
		{"no fields", f.alice.ID, Secret{Mode: credential.ModeAPIKey}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.svc.Seal(ctx, tt.user, "newrelic", tt.sec); !errors.Is(err, tt.want) {
				t.Fatalf("Seal err = %v, want %v", err, tt.want)
			}
		})
	}
}

// manifests is a catalog of manifests by name.
type manifests map[string]*manifest.Manifest

func (m manifests) Manifest(name string) (*manifest.Manifest, bool) {
	v, ok := m[name]
	return v, ok
}

// TestService_Connected answers under the catalog's auth mode, refuses an
// integration the catalog does not know, and holds for that user only.
func TestService_Connected(t *testing.T) {
	f := newFixture(t, nil)
	f.svc = New(f.st, f.keys, Options{Now: f.clock.Now, Catalog: manifests{
		"keyed": {Name: "keyed", Auth: manifest.Auth{Mode: manifest.ModeAPIKey}},
		"open":  {Name: "open", Auth: manifest.Auth{Mode: manifest.ModeNone}},
	}})
	_, err := f.svc.Save(ctx, f.alice.ID, "keyed", Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"api_key": secretKey}}})
	must(t, err)
	tests := []struct {
		user, integration string
		want              bool
		wantErr           error
	}{
		{f.alice.ID, "keyed", true, nil},
		{f.bob.ID, "keyed", false, nil},
		{f.bob.ID, "open", true, nil},
		{f.alice.ID, "unknown", false, failure.ErrUnknownIntegration},
	}
	for _, tt := range tests {
		got, err := f.svc.Connected(ctx, tt.user, tt.integration)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("Connected(%s, %s) = %v, %v; want %v, %v", tt.user, tt.integration, got, err, tt.want, tt.wantErr)
		}
	}
}
func TestService_UpdateCookies(t *testing.T) {
	f := newFixture(t, nil)
	now := f.clock.Now()
	later := now.Add(time.Hour)
	bundle := func() Secret {
		return Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: []*http.Cookie{
			{Name: "sid", Value: "old", Domain: ".example.com", Path: "/"},
			{Name: "pref", Value: "dark", Domain: "app.example.com", Path: "/"},
		}}}
	}
	tests := []struct {
		name        string
		stored      *Secret // nil means no connection
		received    []*http.Cookie
		wantErr     error  // nil means success
		wantCookies string // name=value of the stored bundle after, in order; "" means not connected
	}{
		{"rotation is stored", ptr(bundle()), []*http.Cookie{{Name: "sid", Value: "new", Domain: "example.com", Path: "/", Expires: later}}, nil, "pref=dark sid=new"},
		{"new cookie is added", ptr(bundle()), []*http.Cookie{{Name: "csrf", Value: "c", Domain: "app.example.com", Path: "/"}}, nil, "sid=old pref=dark csrf=c"},
		{"deletion is honoured", ptr(bundle()), []*http.Cookie{{Name: "pref", Domain: "app.example.com", Path: "/", MaxAge: -1}}, nil, "sid=old"},
		{"deleting every cookie ends the connection", ptr(bundle()), []*http.Cookie{
			{Name: "sid", Domain: "example.com", Path: "/", MaxAge: -1},
			{Name: "pref", Domain: "app.example.com", Path: "/", Expires: now.Add(-time.Second)},
		}, nil, ""},
		{"no connection", nil, []*http.Cookie{{Name: "sid", Value: "x", Domain: "example.com", Path: "/"}}, failure.ErrNotConnected, ""},
		{"not a cookie connection", &Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: secretAccess}},
			[]*http.Cookie{{Name: "sid", Value: "x", Domain: "example.com", Path: "/"}}, failure.ErrNotConnected, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			integration := fmt.Sprintf("app%d", i)
			if tt.stored != nil {
				_, err := f.svc.Save(ctx, f.alice.ID, integration, *tt.stored)
				must(t, err)
			}
			err := f.svc.UpdateCookies(ctx, f.alice.ID, integration, tt.received)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("UpdateCookies err = %v, want %v", err, tt.wantErr)
				}
				noSecret(t, err)
				return
			}
			must(t, err)
			cred, err := f.svc.Credential(ctx, f.alice.ID, integration)
			if tt.wantCookies == "" {
				st, serr := f.svc.Status(ctx, f.alice.ID, integration, credential.ModeCookie)
				if !errors.Is(err, failure.ErrNotConnected) || serr != nil || st.Connected || !strings.Contains(st.Reason, "ended the session") {
					t.Fatalf("after deleting every cookie: Credential err = %v, Status = %+v, %v; want not connected", err, st, serr)
				}
				return
			}
			must(t, err)
			var got []string
			for _, c := range cred.Cookies {
				got = append(got, c.Name+"="+c.Value)
			}
			if strings.Join(got, " ") != tt.wantCookies {
				t.Fatalf("stored cookies = %v, want %s", got, tt.wantCookies)
			}
		})
	}
	// Bob's connection is his own.
	if err := f.svc.UpdateCookies(ctx, f.bob.ID, "app0", nil); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("bob: err = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
