package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

var ctx = context.Background()

// wantErr fails t unless err wraps want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

// must fails t on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func newUser(t *testing.T, st store.Store, email string) store.User {
	t.Helper()
	u, err := st.CreateUser(ctx, store.NewUser{Email: email})
	must(t, "CreateUser "+email, err)
	return u
}

// newToken mints a token for the user and returns its secret with the record.
func newToken(t *testing.T, st store.Store, userID, name string) (string, store.Token) {
	t.Helper()
	tok, hash, prefix := secrets.NewToken()
	rec, err := st.CreateToken(ctx, store.NewToken{UserID: userID, Name: name, Hash: hash, Prefix: prefix})
	must(t, "CreateToken", err)
	return tok, rec
}

func testTenants(t *testing.T, h *harness) {
	st := h.st
	def, err := st.Tenant(ctx, store.DefaultTenant)
	must(t, "default tenant", err)
	if def.ID != store.DefaultTenant || def.Name == "" {
		t.Fatalf("default tenant = %+v", def)
	}
	acme, err := st.CreateTenant(ctx, "Acme")
	must(t, "CreateTenant", err)
	if !strings.HasPrefix(acme.ID, store.PrefixTenant) || acme.Name != "Acme" || !acme.CreatedAt.Equal(h.clock.Now()) {
		t.Fatalf("CreateTenant = %+v", acme)
	}
	got, err := st.Tenant(ctx, acme.ID)
	must(t, "Tenant", err)
	if got != acme {
		t.Fatalf("Tenant = %+v, want %+v", got, acme)
	}
	_, err = st.Tenant(ctx, "ten_missing")
	wantErr(t, "unknown tenant", err, store.ErrNotFound)
	_, err = st.CreateTenant(ctx, " ")
	wantErr(t, "blank tenant name", err, store.ErrInvalid)
}

func testUsers(t *testing.T, h *harness) {
	st := h.st
	n, err := st.CountUsers(ctx)
	must(t, "CountUsers", err)
	if n != 0 {
		t.Fatalf("fresh store has %d users", n)
	}
	passwords := secrets.NewPasswords(secrets.PasswordOptions{Cost: secrets.PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}})
	hash, err := passwords.Hash(ctx, "hunter2")
	must(t, "HashPassword", err)
	alice, err := st.CreateUser(ctx, store.NewUser{Email: " Alice@Example.com ", PasswordHash: hash, IsAdmin: true})
	must(t, "CreateUser", err)
	want := store.User{ID: alice.ID, TenantID: store.DefaultTenant, Email: "Alice@Example.com", IsAdmin: true, CreatedAt: h.clock.Now()}
	if !strings.HasPrefix(alice.ID, store.PrefixUser) || len(alice.ID) != len(store.PrefixUser)+26 {
		t.Fatalf("user id %q", alice.ID)
	}
	if alice != want {
		t.Fatalf("CreateUser = %+v, want %+v", alice, want)
	}
	got, err := st.User(ctx, alice.ID)
	must(t, "User", err)
	if got != want {
		t.Fatalf("User = %+v, want %+v", got, want)
	}

	for _, email := range []string{"alice@example.com", "ALICE@EXAMPLE.COM", "Alice@Example.com"} {
		got, err := st.UserByEmail(ctx, store.DefaultTenant, email)
		must(t, "UserByEmail "+email, err)
		if got.ID != alice.ID {
			t.Fatalf("UserByEmail(%q) = %s, want %s", email, got.ID, alice.ID)
		}
	}
	_, err = st.UserByEmail(ctx, store.DefaultTenant, "bob@example.com")
	wantErr(t, "UserByEmail unknown", err, store.ErrNotFound)

	tests := []struct {
		name string
		u    store.NewUser
		want error
	}{
		{"same email other case", store.NewUser{Email: "ALICE@example.COM"}, store.ErrConflict},
		{"empty email", store.NewUser{Email: ""}, store.ErrInvalid},
		{"not an email", store.NewUser{Email: "alice"}, store.ErrInvalid},
		{"display name", store.NewUser{Email: "Alice <alice2@example.com>"}, store.ErrInvalid},
		{"too long", store.NewUser{Email: strings.Repeat("a", 250) + "@example.com"}, store.ErrInvalid},
		{"unknown tenant", store.NewUser{TenantID: "ten_nope", Email: "carol@example.com"}, store.ErrNotFound},
		{"huge password hash", store.NewUser{Email: "dave@example.com", PasswordHash: strings.Repeat("x", 600)}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.CreateUser(ctx, tt.u)
			wantErr(t, "CreateUser", err, tt.want)
		})
	}

	// Emails are unique per tenant, not globally.
	acme, err := st.CreateTenant(ctx, "Acme")
	must(t, "CreateTenant", err)
	other, err := st.CreateUser(ctx, store.NewUser{TenantID: acme.ID, Email: "alice@example.com"})
	must(t, "same email in another tenant", err)
	if other.TenantID != acme.ID || other.ID == alice.ID {
		t.Fatalf("user in other tenant = %+v", other)
	}
	if got, err := st.UserByEmail(ctx, acme.ID, "alice@example.com"); err != nil || got.ID != other.ID {
		t.Fatalf("UserByEmail in other tenant = %+v, %v", got, err)
	}

	h.clock.Advance(time.Second)
	bob := newUser(t, st, "bob@example.com")
	users, err := st.Users(ctx, store.DefaultTenant)
	must(t, "Users", err)
	if len(users) != 2 || users[0].ID != alice.ID || users[1].ID != bob.ID {
		t.Fatalf("Users = %+v, want alice then bob", users)
	}
	if n, err := st.CountUsers(ctx); err != nil || n != 3 {
		t.Fatalf("CountUsers = %d, %v; want 3", n, err)
	}

	got2, err := st.PasswordHash(ctx, alice.ID)
	must(t, "PasswordHash", err)
	if ok, err := passwords.Verify(ctx, "hunter2", got2); err != nil || !ok {
		t.Fatalf("stored hash does not verify: %v %v", ok, err)
	}
	if h, err := st.PasswordHash(ctx, bob.ID); err != nil || h != "" {
		t.Fatalf("PasswordHash of user without password = %q, %v", h, err)
	}
	must(t, "SetPasswordHash", st.SetPasswordHash(ctx, bob.ID, hash))
	if h, _ := st.PasswordHash(ctx, bob.ID); h != hash {
		t.Fatal("SetPasswordHash did not store the hash")
	}
	wantErr(t, "SetPasswordHash unknown", st.SetPasswordHash(ctx, "usr_missing", hash), store.ErrNotFound)
	_, err = st.PasswordHash(ctx, "usr_missing")
	wantErr(t, "PasswordHash unknown", err, store.ErrNotFound)
	_, err = st.User(ctx, "usr_missing")
	wantErr(t, "User unknown", err, store.ErrNotFound)
}

func testTokens(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	created := h.clock.Now()
	tok, rec := newToken(t, st, alice.ID, "laptop")
	if !strings.HasPrefix(rec.ID, store.PrefixToken) || rec.UserID != alice.ID || rec.TenantID != store.DefaultTenant ||
		rec.Name != "laptop" || rec.Prefix != tok[:9] || !rec.CreatedAt.Equal(created) || !rec.LastUsedAt.IsZero() || !rec.RevokedAt.IsZero() {
		t.Fatalf("CreateToken = %+v", rec)
	}

	// First use records the time.
	h.clock.Advance(time.Second)
	firstUse := h.clock.Now()
	got, err := st.TokenByHash(ctx, secrets.HashToken(tok))
	must(t, "TokenByHash", err)
	if got.ID != rec.ID || got.UserID != alice.ID || !got.LastUsedAt.Equal(firstUse) {
		t.Fatalf("TokenByHash = %+v, want last used %v", got, firstUse)
	}
	// Within a minute the time is not rewritten.
	h.clock.Advance(30 * time.Second)
	got, err = st.TokenByHash(ctx, secrets.HashToken(tok))
	must(t, "TokenByHash again", err)
	if !got.LastUsedAt.Equal(firstUse) {
		t.Fatalf("LastUsedAt after 30s = %v, want unchanged %v", got.LastUsedAt, firstUse)
	}
	list, err := st.Tokens(ctx, alice.ID)
	must(t, "Tokens", err)
	if len(list) != 1 || !list[0].LastUsedAt.Equal(firstUse) {
		t.Fatalf("Tokens = %+v", list)
	}
	// After a minute it is.
	h.clock.Advance(31 * time.Second)
	got, err = st.TokenByHash(ctx, secrets.HashToken(tok))
	must(t, "TokenByHash after a minute", err)
	if !got.LastUsedAt.Equal(h.clock.Now()) {
		t.Fatalf("LastUsedAt after 61s = %v, want %v", got.LastUsedAt, h.clock.Now())
	}
	if list, _ := st.Tokens(ctx, alice.ID); !list[0].LastUsedAt.Equal(h.clock.Now()) {
		t.Fatalf("stored LastUsedAt = %v, want %v", list[0].LastUsedAt, h.clock.Now())
	}

	// Unknown and malformed hashes.
	_, err = st.TokenByHash(ctx, secrets.HashToken("wb_unknown"))
	wantErr(t, "unknown token", err, store.ErrNotFound)
	_, err = st.TokenByHash(ctx, "not-a-hash")
	wantErr(t, "malformed hash", err, store.ErrInvalid)

	// A second token, then revoke the first.
	h.clock.Advance(time.Second)
	tok2, rec2 := newToken(t, st, alice.ID, "ci")
	must(t, "RevokeToken", st.RevokeToken(ctx, alice.ID, rec.ID))
	_, err = st.TokenByHash(ctx, secrets.HashToken(tok))
	wantErr(t, "revoked token", err, store.ErrNotFound)
	h.clock.Advance(2 * time.Minute)
	_, err = st.TokenByHash(ctx, secrets.HashToken(tok))
	wantErr(t, "revoked token later", err, store.ErrNotFound)
	if _, err := st.TokenByHash(ctx, secrets.HashToken(tok2)); err != nil {
		t.Fatalf("other token after revoking one: %v", err)
	}
	list, err = st.Tokens(ctx, alice.ID)
	must(t, "Tokens", err)
	if len(list) != 2 || list[0].ID != rec.ID || list[1].ID != rec2.ID || list[0].RevokedAt.IsZero() || !list[1].RevokedAt.IsZero() {
		t.Fatalf("Tokens after revoke = %+v", list)
	}
	revokedAt := list[0].RevokedAt
	// Revoking again is not an error and keeps the first revocation time.
	h.clock.Advance(time.Hour)
	must(t, "RevokeToken twice", st.RevokeToken(ctx, alice.ID, rec.ID))
	if list, _ := st.Tokens(ctx, alice.ID); !list[0].RevokedAt.Equal(revokedAt) {
		t.Fatalf("second revoke moved RevokedAt from %v to %v", revokedAt, list[0].RevokedAt)
	}
	wantErr(t, "RevokeToken unknown", st.RevokeToken(ctx, alice.ID, "tok_missing"), store.ErrNotFound)

	// Bad input.
	_, hash, prefix := secrets.NewToken()
	tests := []struct {
		name string
		nt   store.NewToken
		want error
	}{
		{"duplicate hash", store.NewToken{UserID: alice.ID, Name: "dup", Hash: secrets.HashToken(tok2), Prefix: "wb_x"}, store.ErrConflict},
		{"unknown user", store.NewToken{UserID: "usr_missing", Name: "x", Hash: hash, Prefix: prefix}, store.ErrNotFound},
		{"empty name", store.NewToken{UserID: alice.ID, Name: "", Hash: hash, Prefix: prefix}, store.ErrInvalid},
		{"long name", store.NewToken{UserID: alice.ID, Name: strings.Repeat("n", 101), Hash: hash, Prefix: prefix}, store.ErrInvalid},
		{"bad hash", store.NewToken{UserID: alice.ID, Name: "x", Hash: "abc", Prefix: prefix}, store.ErrInvalid},
		{"upper-case hash", store.NewToken{UserID: alice.ID, Name: "x", Hash: strings.ToUpper(hash), Prefix: prefix}, store.ErrInvalid},
		{"no prefix", store.NewToken{UserID: alice.ID, Name: "x", Hash: hash}, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.CreateToken(ctx, tt.nt)
			wantErr(t, "CreateToken", err, tt.want)
		})
	}
}

func testSessions(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	id := secrets.HashToken("session-cookie-1")
	s, err := st.CreateSession(ctx, store.Session{IDHash: id, UserID: alice.ID, CSRFSecret: "csrf", ExpiresAt: h.clock.Now().Add(time.Hour)})
	must(t, "CreateSession", err)
	if s.TenantID != store.DefaultTenant || !s.CreatedAt.Equal(h.clock.Now()) {
		t.Fatalf("CreateSession = %+v", s)
	}
	got, err := st.SessionByHash(ctx, id)
	must(t, "SessionByHash", err)
	if got != s {
		t.Fatalf("SessionByHash = %+v, want %+v", got, s)
	}
	_, err = st.CreateSession(ctx, store.Session{IDHash: id, UserID: alice.ID, CSRFSecret: "csrf", ExpiresAt: h.clock.Now().Add(time.Hour)})
	wantErr(t, "duplicate session", err, store.ErrConflict)
	_, err = st.CreateSession(ctx, store.Session{IDHash: secrets.HashToken("x"), UserID: "usr_missing", CSRFSecret: "c", ExpiresAt: h.clock.Now().Add(time.Hour)})
	wantErr(t, "session for unknown user", err, store.ErrNotFound)
	_, err = st.CreateSession(ctx, store.Session{IDHash: "short", UserID: alice.ID, CSRFSecret: "c", ExpiresAt: h.clock.Now()})
	wantErr(t, "malformed session hash", err, store.ErrInvalid)

	short := secrets.HashToken("session-cookie-2")
	_, err = st.CreateSession(ctx, store.Session{IDHash: short, UserID: alice.ID, CSRFSecret: "csrf2", ExpiresAt: h.clock.Now().Add(time.Minute)})
	must(t, "CreateSession short", err)
	h.clock.Advance(time.Minute)
	_, err = st.SessionByHash(ctx, short)
	wantErr(t, "expired session", err, store.ErrNotFound)
	n, err := st.PruneSessions(ctx)
	if err != nil || n != 1 {
		t.Fatalf("PruneSessions = %d, %v; want 1", n, err)
	}
	must(t, "DeleteSession", st.DeleteSession(ctx, id))
	_, err = st.SessionByHash(ctx, id)
	wantErr(t, "deleted session", err, store.ErrNotFound)
	must(t, "DeleteSession twice", st.DeleteSession(ctx, id))
}

// sealer seals connection blobs the way a caller would: bound to the row.
type sealer struct{ keys *secrets.Keyring }

func newSealer(key byte, old ...byte) sealer {
	cfg := secrets.Config{Key: []byte(strings.Repeat(string(rune(key)), secrets.KeySize))}
	for _, o := range old {
		cfg.OldKeys = append(cfg.OldKeys, []byte(strings.Repeat(string(rune(o)), secrets.KeySize)))
	}
	return sealer{secrets.NewKeyring(cfg)}
}

func aad(purpose, tenant, user, integration string) []byte {
	return secrets.AAD("workbench-test", purpose, tenant, user, integration)
}

// connection returns a connection for the user carrying secret, sealed.
func (s sealer) connection(t *testing.T, u store.User, integration, secret string) store.Connection {
	t.Helper()
	sealed, keyID, err := s.keys.Seal([]byte(secret), aad("credential", u.TenantID, u.ID, integration))
	must(t, "Seal", err)
	refresh, _, err := s.keys.Seal([]byte("refresh-"+secret), aad("refresh", u.TenantID, u.ID, integration))
	must(t, "Seal refresh", err)
	return store.Connection{UserID: u.ID, Integration: integration, Mode: "oauth2", Sealed: sealed, SealedRefresh: refresh, KeyID: keyID}
}

// open returns the secret a stored connection carries.
func (s sealer) open(c store.Connection) (string, error) {
	plain, err := s.keys.Open(c.Sealed, c.KeyID, aad("credential", c.TenantID, c.UserID, c.Integration))
	if err != nil {
		return "", err
	}
	refresh, err := s.keys.Open(c.SealedRefresh, c.KeyID, aad("refresh", c.TenantID, c.UserID, c.Integration))
	if err != nil {
		return "", fmt.Errorf("refresh: %w", err)
	}
	if string(refresh) != "refresh-"+string(plain) {
		return "", fmt.Errorf("refresh blob %q does not match credential", refresh)
	}
	return string(plain), nil
}
