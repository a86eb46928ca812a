package connect

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

func TestService_Connect(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		integration string
		wantStatus  store.PendingStatus
		wantReason  string
		wantState   bool
	}{
		{"plain", store.PendingConnected, "", false},
		{"cookied", store.PendingFailed, CookieUnavailable, false},
		{"keyed", store.PendingWaiting, "", false},
		{"posty", store.PendingWaiting, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.integration, func(t *testing.T) {
			link, id, err := f.svc.Connect(ctx, f.alice.ID, tt.integration)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(link)
			if err != nil || !strings.HasPrefix(link, publicURL+ConnectPath+id) || !strings.HasPrefix(id, store.PrefixPending) {
				t.Fatalf("Connect = %q, %q, %v", link, id, err)
			}
			if got := u.Query().Get("state") != ""; got != tt.wantState {
				t.Errorf("URL %q has a state: %v, want %v", link, got, tt.wantState)
			}
			status, reason, err := f.svc.Wait(ctx, f.alice.ID, id, 0)
			if err != nil || status != tt.wantStatus || reason != tt.wantReason {
				t.Errorf("Wait = %s, %q, %v; want %s, %q", status, reason, err, tt.wantStatus, tt.wantReason)
			}
			h, err := f.svc.Handshake(ctx, f.alice.ID, id)
			if err != nil || h.Manifest == nil || h.Manifest.Name != tt.integration || h.Pending.ExpiresAt.Sub(f.clock.Now()) != DefaultHandshakeWindow {
				t.Errorf("Handshake = %+v, %v", h, err)
			}
		})
	}
}

func TestService_Connect_errors(t *testing.T) {
	f := newFixture(t)
	f.env["POSTY_OAUTH_TOKEN_URL"] = "http://auth.example.com/token"
	f.env["DEFAULTED_OAUTH_AUTHORIZE_URL"] = "not a url"
	tests := []struct {
		name, integration string
		want              error
		wantText          string
	}{
		{"unknown integration", "nope", failure.ErrUnknownIntegration, `"nope" is not loaded`},
		{"no client id", "unset", failure.ErrNotConfigured, "UNSET_CLIENT_ID and UNSET_CLIENT_SECRET"},
		{"http override off loopback", "posty", failure.ErrNotConfigured, "POSTY_OAUTH_TOKEN_URL"},
		{"malformed override", "defaulted", failure.ErrNotConfigured, "DEFAULTED_OAUTH_AUTHORIZE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := f.svc.Connect(ctx, f.alice.ID, tt.integration)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Connect err = %v, want %v naming %q", err, tt.want, tt.wantText)
			}
		})
	}
	if _, _, err := f.svc.Connect(ctx, "usr_missing", "keyed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Connect for an unknown user: %v", err)
	}
}

func TestService_CompleteOAuth(t *testing.T) {
	for _, integration := range []string{"basicly", "posty", "defaulted"} {
		t.Run(integration, func(t *testing.T) {
			f := newFixture(t)
			link, id, err := f.svc.Connect(ctx, f.alice.ID, integration)
			if err != nil {
				t.Fatal(err)
			}
			cb := f.authorize(t, f.alice.ID, link, id)
			if cb.Code == "" || cb.Error != "" {
				t.Fatalf("provider answered %+v", cb)
			}
			if got := f.fakes[integration].Scopes(); !slices.Equal(got, []string{"repo", "read:user"}) {
				t.Errorf("requested scopes %v", got)
			}
			p, err := f.svc.CompleteOAuth(ctx, f.alice.ID, integration, cb)
			if err != nil || p.Status != store.PendingConnected {
				t.Fatalf("CompleteOAuth = %+v, %v", p, err)
			}
			cred, err := f.conns.Credential(ctx, f.alice.ID, integration)
			if err != nil || !f.fakes[integration].Issued(cred.AccessToken) {
				t.Fatalf("stored credential = %v, %v; want a token the provider issued", cred, err)
			}
			row, err := f.st.Connection(ctx, f.alice.ID, integration)
			if err != nil || !row.ExpiresAt.Equal(f.clock.Now().Add(time.Hour)) || row.SealedRefresh == nil {
				t.Fatalf("row = %+v, %v; want an expiry in an hour and a refresh token", row, err)
			}
			if status, _, err := f.svc.Wait(ctx, f.alice.ID, id, time.Second); err != nil || status != store.PendingConnected {
				t.Fatalf("Wait = %s, %v", status, err)
			}
			// The state works once.
			if _, err := f.svc.CompleteOAuth(ctx, f.alice.ID, integration, cb); !errors.Is(err, ErrUnknownState) {
				t.Fatalf("replayed state: %v, want ErrUnknownState", err)
			}
			if exchanges, _ := f.fakes[integration].Counts(); exchanges != 1 {
				t.Fatalf("%d code exchanges, want 1", exchanges)
			}
		})
	}
}

func TestService_CompleteOAuth_failures(t *testing.T) {
	tests := []struct {
		name string
		// run completes the handshake in some wrong way and returns the error.
		run        func(t *testing.T, f *fixture, link, id string) error
		want       error
		wantStatus store.PendingStatus // of the handshake afterwards
		wantReason string
	}{
		{
			name: "wrong PKCE verifier",
			run: func(t *testing.T, f *fixture, link, id string) error {
				cb := f.authorize(t, f.alice.ID, link, id)
				// A code the provider bound to another challenge.
				cb.Code = f.fakes["posty"].IssueCode(pkceChallenge(newVerifier()))
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", cb)
				return err
			},
			want: ErrAuthorization, wantStatus: store.PendingFailed, wantReason: "PKCE verification failed",
		},
		{
			name: "provider denies",
			run: func(t *testing.T, f *fixture, link, id string) error {
				f.fakes["posty"].Deny("access_denied")
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", f.authorize(t, f.alice.ID, link, id))
				return err
			},
			want: ErrAuthorization, wantStatus: store.PendingFailed, wantReason: "access_denied: The user declined.",
		},
		{
			name: "wrong client secret",
			run: func(t *testing.T, f *fixture, link, id string) error {
				cb := f.authorize(t, f.alice.ID, link, id)
				f.env["POSTY_CLIENT_SECRET"] = "guess"
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", cb)
				return err
			},
			want: ErrAuthorization, wantStatus: store.PendingFailed, wantReason: "invalid_client",
		},
		{
			name: "another user's session",
			run: func(t *testing.T, f *fixture, link, id string) error {
				_, err := f.svc.CompleteOAuth(ctx, f.bob.ID, "posty", f.authorize(t, f.alice.ID, link, id))
				return err
			},
			want: ErrWrongUser, wantStatus: store.PendingFailed, wantReason: "another user's browser session",
		},
		{
			name: "callback of another integration",
			run: func(t *testing.T, f *fixture, link, id string) error {
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "basicly", f.authorize(t, f.alice.ID, link, id))
				return err
			},
			want: ErrUnknownState, wantStatus: store.PendingFailed, wantReason: "request was for posty",
		},
		{
			name: "no code",
			run: func(t *testing.T, f *fixture, link, id string) error {
				cb := f.authorize(t, f.alice.ID, link, id)
				cb.Code = ""
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", cb)
				return err
			},
			want: ErrAuthorization, wantStatus: store.PendingFailed, wantReason: "no authorization code",
		},
		{
			name: "unknown state",
			run: func(t *testing.T, f *fixture, link, id string) error {
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", Callback{State: "made-up", Code: "x"})
				return err
			},
			want: ErrUnknownState, wantStatus: store.PendingWaiting,
		},
		{
			name: "after the handshake window",
			run: func(t *testing.T, f *fixture, link, id string) error {
				cb := f.authorize(t, f.alice.ID, link, id)
				f.clock.Advance(DefaultHandshakeWindow)
				_, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "posty", cb)
				return err
			},
			want: store.ErrExpired, wantStatus: store.PendingExpired, wantReason: "handshake window",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			link, id, err := f.svc.Connect(ctx, f.alice.ID, "posty")
			if err != nil {
				t.Fatal(err)
			}
			err = tt.run(t, f, link, id)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error reveals the client secret: %v", err)
			}
			status, reason, err := f.svc.Wait(ctx, f.alice.ID, id, 0)
			if err != nil || status != tt.wantStatus || !strings.Contains(reason, tt.wantReason) {
				t.Fatalf("Wait = %s, %q, %v; want %s with %q", status, reason, err, tt.wantStatus, tt.wantReason)
			}
			for _, u := range []store.User{f.alice, f.bob} {
				if _, err := f.st.Connection(ctx, u.ID, "posty"); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("a connection was stored for %s: %v", u.Email, err)
				}
			}
		})
	}
}

func TestService_AuthorizeURL(t *testing.T) {
	f := newFixture(t)
	link, id, err := f.svc.Connect(ctx, f.alice.ID, "basicly")
	if err != nil {
		t.Fatal(err)
	}
	state := mustParse(t, link).Query().Get("state")
	auth, err := f.svc.AuthorizeURL(ctx, f.alice.ID, id, state)
	if err != nil {
		t.Fatal(err)
	}
	q := mustParse(t, auth).Query()
	want := map[string]string{"response_type": "code", "client_id": "basicly-client", "redirect_uri": publicURL + "/oauth/callback/basicly",
		"scope": "repo read:user", "state": state, "code_challenge_method": "S256"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if len(q.Get("code_challenge")) != 43 || strings.Contains(auth, "s3cret") {
		t.Errorf("authorize URL %s", auth)
	}
	_, keyedID, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user, id, state string
		want                  error
	}{
		{"another user's handshake", f.bob.ID, id, state, failure.ErrUnknownConnection},
		{"malformed id", f.alice.ID, "pc_<script>", state, failure.ErrUnknownConnection},
		{"no state", f.alice.ID, id, "", ErrUnknownState},
		{"apikey handshake", f.alice.ID, keyedID, state, ErrWrongMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.svc.AuthorizeURL(ctx, tt.user, tt.id, tt.state); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestProviders_Refresh(t *testing.T) {
	f := newFixture(t)
	link, id, err := f.svc.Connect(ctx, f.alice.ID, "basicly")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.CompleteOAuth(ctx, f.alice.ID, "basicly", f.authorize(t, f.alice.ID, link, id)); err != nil {
		t.Fatal(err)
	}
	first, err := f.conns.Credential(ctx, f.alice.ID, "basicly")
	if err != nil {
		t.Fatal(err)
	}
	// Within the refresh window the host renews the token through Providers.
	f.clock.Advance(time.Hour - connections.RefreshWindow/2)
	second, err := f.conns.Credential(ctx, f.alice.ID, "basicly")
	if err != nil || second.AccessToken == first.AccessToken || !f.fakes["basicly"].Issued(second.AccessToken) {
		t.Fatalf("after refresh: %v, %v", second, err)
	}
	if _, refreshes := f.fakes["basicly"].Counts(); refreshes != 1 {
		t.Fatalf("%d refreshes, want 1", refreshes)
	}

	// A revoked refresh token leaves the user not connected, with the
	// provider's reason.
	f.fakes["basicly"].RevokeRefreshTokens()
	f.clock.Advance(2 * time.Hour)
	_, err = f.conns.Credential(ctx, f.alice.ID, "basicly")
	if !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("after revocation: %v", err)
	}
	st, err := f.conns.Status(ctx, f.alice.ID, "basicly", "oauth2")
	if err != nil || st.Connected || !strings.Contains(st.Reason, "invalid_grant: The refresh token is invalid or was revoked.") {
		t.Fatalf("Status = %+v, %v", st, err)
	}

	// Refresh errors straight from Providers.
	tests := []struct {
		name        string
		integration string
		rejected    bool
	}{
		{"unknown refresh token", "posty", true},
		{"not loaded", "gone", false},
		{"no client", "unset", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.providers.Refresh(ctx, f.alice.ID, tt.integration, "rt-unknown")
			if err == nil || errors.Is(err, connections.ErrRefreshRejected) != tt.rejected {
				t.Fatalf("Refresh err = %v, want rejected %v", err, tt.rejected)
			}
		})
	}
}

func TestService_SubmitAPIKey(t *testing.T) {
	f := newFixture(t)
	_, id, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name   string
		user   string
		values map[string]string
		want   error
		field  string
	}{
		{"missing field", f.alice.ID, map[string]string{"site": "acme"}, ErrInvalidInput, "api_token"},
		{"pattern mismatch", f.alice.ID, map[string]string{"site": "Acme Corp", "api_token": "t"}, ErrInvalidInput, "site"},
		{"another user", f.bob.ID, map[string]string{"site": "acme", "api_token": "t"}, failure.ErrUnknownConnection, ""},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.SubmitAPIKey(ctx, tt.user, id, tt.values)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var fe FieldErrors
			if tt.field != "" && (!errors.As(err, &fe) || fe[0].Field != tt.field) {
				t.Fatalf("field errors = %v, want one about %s", fe, tt.field)
			}
		})
	}
	p, err := f.svc.SubmitAPIKey(ctx, f.alice.ID, id, map[string]string{"site": " acme ", "api_token": "tok-1", "extra": "ignored"})
	if err != nil || p.Status != store.PendingConnected {
		t.Fatalf("SubmitAPIKey = %+v, %v", p, err)
	}
	cred, err := f.conns.Credential(ctx, f.alice.ID, "keyed")
	if err != nil || len(cred.Fields) != 2 || cred.Fields["site"] != "acme" || cred.Fields["api_token"] != "tok-1" {
		t.Fatalf("stored fields: %v", err)
	}
	if _, err := f.svc.SubmitAPIKey(ctx, f.alice.ID, id, map[string]string{"site": "acme", "api_token": "tok-2"}); !errors.Is(err, store.ErrNotPending) {
		t.Fatalf("second submit: %v, want store.ErrNotPending", err)
	}

	_, late, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(DefaultHandshakeWindow + time.Second)
	if _, err := f.svc.SubmitAPIKey(ctx, f.alice.ID, late, map[string]string{"site": "acme", "api_token": "tok-3"}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("submit after the window: %v, want store.ErrExpired", err)
	}
	if cred, err := f.conns.Credential(ctx, f.alice.ID, "keyed"); err != nil || cred.Fields["api_token"] != "tok-1" {
		t.Fatalf("an expired handshake changed the connection: %v", err)
	}
}

func TestValidateFields(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]string
		want    map[string]string
		wantErr []string // messages
	}{
		{"ok", map[string]string{"site": "acme-1", "api_token": "k", "email": "a@b.c"}, map[string]string{"site": "acme-1", "api_token": "k", "email": "a@b.c"}, nil},
		{"optional left out", map[string]string{"site": "acme", "api_token": "k", "email": "  "}, map[string]string{"site": "acme", "api_token": "k"}, nil},
		{"missing", map[string]string{}, nil, []string{"Site is required", "API token is required"}},
		{"partial match is not enough", map[string]string{"site": "acme/evil", "api_token": "k"}, nil, []string{"Site is not in the expected format (it must match [a-z0-9-]+)"}},
		{"control characters", map[string]string{"site": "acme", "api_token": "k\r\nX-Injected: 1"}, nil, []string{"API token contains control characters"}},
		{"too long", map[string]string{"site": "acme", "api_token": strings.Repeat("k", MaxFieldLen+1)}, nil, []string{"API token is longer than 4096 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateFields(keyedFields, tt.values)
			if tt.wantErr == nil {
				if err != nil || len(got) != len(tt.want) {
					t.Fatalf("ValidateFields = %v, %v", got, err)
				}
				for k, v := range tt.want {
					if got[k] != v {
						t.Fatalf("%s = %q, want %q", k, got[k], v)
					}
				}
				return
			}
			var fe FieldErrors
			if !errors.As(err, &fe) || len(fe) != len(tt.wantErr) || !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want %d field errors", err, len(tt.wantErr))
			}
			for i, w := range tt.wantErr {
				if !strings.HasPrefix(fe[i].Message, w) {
					t.Errorf("error %d = %q, want %q", i, fe[i].Message, w)
				}
			}
		})
	}
	optional := []manifest.Field{{Name: "a", Label: "A"}}
	if _, err := ValidateFields(optional, nil); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "at least one field") {
		t.Fatalf("empty form: %v", err)
	}
}

func TestService_Wait(t *testing.T) {
	f := newFixture(t)
	_, id, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing happens: the wait times out as PENDING.
	start := time.Now()
	status, _, err := f.svc.Wait(ctx, f.alice.ID, id, 150*time.Millisecond)
	if err != nil || status != store.PendingWaiting || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("Wait = %s, %v after %v", status, err, time.Since(start))
	}
	// Several waiters wake as soon as the form is submitted.
	var wg sync.WaitGroup
	results := make(chan store.PendingStatus, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, err := f.svc.Wait(ctx, f.alice.ID, id, 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			results <- s
		}()
	}
	time.Sleep(100 * time.Millisecond)
	submitted := time.Now()
	if _, err := f.svc.SubmitAPIKey(ctx, f.alice.ID, id, map[string]string{"site": "acme", "api_token": "k"}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if woke := time.Since(submitted); woke > 2*time.Second { // long before their 10 s timeout, even on a loaded machine
		t.Errorf("waiters woke %v after the submit", woke)
	}
	close(results)
	for s := range results {
		if s != store.PendingConnected {
			t.Errorf("waiter saw %s", s)
		}
	}

	tests := []struct {
		name string
		user string
		id   string
	}{
		{"wrong id", f.alice.ID, "pc_doesnotexist"},
		{"garbage id", f.alice.ID, "'; DROP TABLE users; --"},
		{"another user's id", f.bob.ID, id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := f.svc.Wait(ctx, tt.user, tt.id, time.Second); !errors.Is(err, failure.ErrUnknownConnection) {
				t.Fatalf("err = %v, want failure.ErrUnknownConnection", err)
			}
		})
	}

	// A cancelled context ends the wait.
	_, id2, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, _, err := f.svc.Wait(cctx, f.alice.ID, id2, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	// A handshake that runs out of time reads as EXPIRED with the reason.
	f.clock.Advance(DefaultHandshakeWindow)
	status, reason, err := f.svc.Wait(ctx, f.alice.ID, id2, time.Minute)
	if err != nil || status != store.PendingExpired || !strings.Contains(reason, "handshake window") {
		t.Fatalf("Wait after the window = %s, %q, %v", status, reason, err)
	}
}

func TestService_Sweep(t *testing.T) {
	f := newFixture(t)
	_, overdue, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := f.svc.Connect(ctx, f.alice.ID, "plain")
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(DefaultHandshakeWindow)
	_, fresh, err := f.svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	expired, pruned, err := f.svc.Sweep(ctx)
	if err != nil || expired != 1 || pruned != 0 {
		t.Fatalf("Sweep = %d, %d, %v; want 1 expired", expired, pruned, err)
	}
	// An hour after their end, the terminal records go; the fresh one is
	// expired by then and kept.
	f.clock.Advance(DefaultKeepTerminal + time.Second)
	expired, pruned, err = f.svc.Sweep(ctx)
	if err != nil || expired != 1 || pruned != 2 {
		t.Fatalf("second Sweep = %d, %d, %v; want 1 expired, 2 pruned", expired, pruned, err)
	}
	for _, id := range []string{overdue, done} {
		if _, _, err := f.svc.Wait(ctx, f.alice.ID, id, 0); !errors.Is(err, failure.ErrUnknownConnection) {
			t.Fatalf("pruned %s: %v", id, err)
		}
	}
	if status, _, err := f.svc.Wait(ctx, f.alice.ID, fresh, 0); err != nil || status != store.PendingExpired {
		t.Fatalf("fresh record = %s, %v", status, err)
	}
}

func TestService_RunSweeper(t *testing.T) {
	f := newFixture(t)
	svc, err := New(Options{Store: f.st, Vault: f.conns, Providers: f.providers, Catalog: testCatalog(), Now: f.clock.Now, SweepInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, id, err := svc.Connect(ctx, f.alice.ID, "keyed")
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(DefaultHandshakeWindow)
	sctx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); svc.Run(sctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := f.st.Pending(ctx, f.alice.ID, id)
		if err == nil && p.Status == store.PendingExpired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper did not expire the record: %+v, %v", p, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestNew_errors(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without dependencies succeeded")
	}
}
