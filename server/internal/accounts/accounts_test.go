package accounts

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
)

var ctx = context.Background()

// testPasswords hashes with a real but cheap argon2id cost.
var testPasswords = secrets.NewPasswords(secrets.PasswordOptions{Cost: secrets.PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}})

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestAddUser(t *testing.T) {
	st := openStore(t)
	u, token, err := AddUser(ctx, st, testPasswords, NewUser{Email: "alice@example.com", Password: "s3cret-pass", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if !u.IsAdmin || !secrets.LooksLikeToken(token) {
		t.Fatalf("AddUser = %+v, %q", u, token)
	}
	tok, err := Authenticate(ctx, st, token)
	if err != nil || tok.UserID != u.ID || tok.Name != "default" {
		t.Fatalf("Authenticate = %+v, %v", tok, err)
	}
	if _, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "ALICE@example.com"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate AddUser err = %v", err)
	}
	if _, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "nope"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad email err = %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	st := openStore(t)
	u, token, err := AddUser(ctx, st, testPasswords, NewUser{Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	rec, second, err := CreateToken(ctx, st, u.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, u.ID, rec.ID); err != nil {
		t.Fatal(err)
	}
	other, _, _ := secrets.NewToken()
	tests := []struct {
		name, bearer string
		ok           bool
	}{
		{"valid", token, true},
		{"revoked", second, false},
		{"unknown", other, false},
		{"empty", "", false},
		{"malformed", "Bearer " + token, false},
		{"truncated", token[:20], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Authenticate(ctx, st, tt.bearer)
			if tt.ok != (err == nil) || err != nil && !errors.Is(err, failure.ErrUnauthenticated) {
				t.Fatalf("Authenticate err = %v, want ok %v", err, tt.ok)
			}
			if err != nil && tt.bearer != "" && strings.Contains(err.Error(), tt.bearer) {
				t.Fatalf("error repeats the token: %v", err)
			}
		})
	}
}

func TestLogin(t *testing.T) {
	st := openStore(t)
	alice, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "alice@example.com", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "nopass@example.com"}); err != nil {
		t.Fatal(err)
	}
	signIn := NewSignIn(st, testPasswords, SignInOptions{})
	tests := []struct {
		name, email, password string
		ok                    bool
	}{
		{"right", "alice@example.com", "correct horse", true},
		{"email case", "ALICE@example.com", "correct horse", true},
		{"wrong password", "alice@example.com", "wrong horse", false},
		{"unknown email", "bob@example.com", "correct horse", false},
		{"malformed email", "bob", "x", false},
		{"no password set", "nopass@example.com", "", false},
		{"no password set, guess", "nopass@example.com", "anything", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := signIn.Login(ctx, "192.0.2.1", "", tt.email, tt.password)
			if tt.ok {
				if err != nil || u.ID != alice.ID {
					t.Fatalf("Login = %+v, %v", u, err)
				}
				return
			}
			if !errors.Is(err, failure.ErrUnauthenticated) || err.Error() != "accounts: wrong email or password: unauthenticated" {
				t.Fatalf("Login err = %v, want the one failure.ErrUnauthenticated message", err)
			}
		})
	}
	if err := SetPassword(ctx, st, testPasswords, alice.ID, "new pass"); err != nil {
		t.Fatal(err)
	}
	if _, err := signIn.Login(ctx, "192.0.2.1", "", "alice@example.com", "correct horse"); !errors.Is(err, failure.ErrUnauthenticated) {
		t.Fatalf("old password after SetPassword: %v", err)
	}
	if _, err := signIn.Login(ctx, "192.0.2.1", "", "alice@example.com", "new pass"); err != nil {
		t.Fatalf("new password: %v", err)
	}
}

func TestEnsureAdmin(t *testing.T) {
	st := openStore(t)
	var wg sync.WaitGroup
	type result struct {
		token   string
		created bool
		err     error
	}
	results := make([]result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, token, created, err := EnsureAdmin(ctx, st)
			results[i] = result{token, created, err}
		}()
	}
	wg.Wait()
	created, token := 0, ""
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.created {
			created++
			token = r.token
		}
	}
	if created != 1 {
		t.Fatalf("%d admins created, want 1", created)
	}
	tok, err := Authenticate(ctx, st, token)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := st.User(ctx, tok.UserID)
	if !admin.IsAdmin || admin.Email != FirstAdminEmail {
		t.Fatalf("first admin = %+v", admin)
	}
	// Later starts create nothing.
	if _, token, created, err := EnsureAdmin(ctx, st); err != nil || created || token != "" {
		t.Fatalf("EnsureAdmin on a populated store = %q, %v, %v", token, created, err)
	}
}

func TestCreateLoginLink(t *testing.T) {
	st := openStore(t)
	u, _, err := AddUser(ctx, st, testPasswords, NewUser{Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	token, expires, err := CreateLoginLink(ctx, st, u.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, LoginLinkPrefix) || expires.Sub(now) < LoginLinkTTL-time.Second || expires.Sub(now) > LoginLinkTTL {
		t.Fatalf("CreateLoginLink = %q, expires %v after now", token, expires.Sub(now))
	}
	if _, _, err := CreateLoginLink(ctx, st, "usr_missing", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("link for an unknown user: %v", err)
	}
	stale, _, err := CreateLoginLink(ctx, st, u.ID, now.Add(-LoginLinkTTL-time.Second))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		token       string
		wantUser    string
		wantExpired bool
	}{
		{"first use", token, u.ID, false},
		{"second use", token, "", false},
		{"expired", stale, "", true},
		{"malformed", "wbl_short", "", false},
		{"api token shape", "wb_" + strings.Repeat("a", 43), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UseLoginLink(ctx, st, tt.token)
			if tt.wantUser != "" {
				if err != nil || got.ID != tt.wantUser {
					t.Fatalf("UseLoginLink = %+v, %v", got, err)
				}
				return
			}
			if !errors.Is(err, failure.ErrUnauthenticated) || errors.Is(err, ErrLinkExpired) != tt.wantExpired {
				t.Fatalf("UseLoginLink err = %v, want unauthenticated (expired %v)", err, tt.wantExpired)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Fatalf("error %q repeats the token", err)
			}
		})
	}
}
