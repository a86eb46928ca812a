package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

func TestAdmin_users(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg := Config{DataDir: t.TempDir(), PublicURL: "https://wb.example.com"}
			if backend == "postgres" {
				cfg.DatabaseURL = pgtest.URL(t)
			}
			if v, err := Migrate(ctx, cfg); err != nil || v != storetest.SchemaVersion(t) {
				t.Fatalf("Migrate = %d, %v", v, err)
			}
			a, err := OpenAdmin(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			u, token, err := a.AddUser(ctx, "alice@example.com", true)
			if err != nil || !u.IsAdmin || !strings.HasPrefix(u.ID, "usr_") {
				t.Fatalf("AddUser = %+v, %v", u, err)
			}
			rec, err := accounts.Authenticate(ctx, a.store, token)
			if err != nil || rec.UserID != u.ID {
				t.Fatalf("the new user's token: %+v, %v", rec, err)
			}
			tok, second, err := a.CreateToken(ctx, "Alice@Example.com", "")
			if err != nil || tok.Name != "cli" || !strings.HasPrefix(second, tok.Prefix) {
				t.Fatalf("CreateToken = %+v, %v", tok, err)
			}
			if err := a.RevokeToken(ctx, "alice@example.com", tok.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := accounts.Authenticate(ctx, a.store, second); !errors.Is(err, failure.ErrUnauthenticated) {
				t.Fatalf("revoked token: %v", err)
			}
			link, _, err := a.LoginLink(ctx, "alice@example.com")
			if err != nil || !strings.HasPrefix(link, "https://wb.example.com/login/once/wbl_") {
				t.Fatalf("LoginLink = %q, %v", link, err)
			}
			if got, err := accounts.UseLoginLink(ctx, a.store, strings.TrimPrefix(link, "https://wb.example.com/login/once/")); err != nil || got.ID != u.ID {
				t.Fatalf("using the link: %+v, %v", got, err)
			}

			tests := []struct {
				name string
				call func() error
				want error
			}{
				{"duplicate user", func() error { _, _, err := a.AddUser(ctx, "ALICE@example.com", false); return err }, ErrUserExists},
				{"bad email", func() error { _, _, err := a.AddUser(ctx, "alice", false); return err }, ErrInvalid},
				{"token for nobody", func() error { _, _, err := a.CreateToken(ctx, "bob@example.com", "x"); return err }, ErrNoUser},
				{"long token name", func() error {
					_, _, err := a.CreateToken(ctx, "alice@example.com", strings.Repeat("n", 101))
					return err
				}, ErrInvalid},
				{"revoke unknown", func() error { return a.RevokeToken(ctx, "alice@example.com", "tok_nope") }, ErrNoToken},
				{"link for nobody", func() error { _, _, err := a.LoginLink(ctx, "bob@example.com"); return err }, ErrNoUser},
			}
			for _, tt := range tests {
				if err := tt.call(); !errors.Is(err, tt.want) {
					t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
				}
			}
		})
	}
}

func TestAdmin_RotateKeys(t *testing.T) {
	ctx := context.Background()
	apiKey := func(v string) connections.Secret {
		return connections.Secret{Mode: credential.ModeAPIKey, Credential: credential.Credential{Fields: map[string]string{"api_key": v}}}
	}
	t.Run("generated key", func(t *testing.T) {
		cfg := Config{DataDir: t.TempDir()}
		a, err := OpenAdmin(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if _, err := a.RotateKeys(ctx); err == nil || !strings.Contains(err.Error(), "no generated key") {
			t.Fatalf("rotating before a key exists: %v", err)
		}
		u, _, err := a.AddUser(ctx, "alice@example.com", false)
		if err != nil {
			t.Fatal(err)
		}
		before := newKeyring(cfg) // generates the key, as serve's first start does
		if _, err := connections.New(a.store, before, connections.Options{}).Save(ctx, u.ID, "keyed", apiKey("k-1")); err != nil {
			t.Fatal(err)
		}
		oldID, _ := before.CurrentKeyID()
		r, err := a.RotateKeys(ctx)
		if err != nil || !r.Generated || r.Resealed != 1 || r.KeyID == oldID {
			t.Fatalf("RotateKeys = %+v, %v", r, err)
		}
		c, err := connections.New(a.store, newKeyring(cfg), connections.Options{}).Credential(ctx, u.ID, "keyed")
		if err != nil || c.Fields["api_key"] != "k-1" {
			t.Fatalf("credential after rotation: %v", err)
		}
		row, _ := a.store.Connection(ctx, u.ID, "keyed")
		if row.KeyID != r.KeyID {
			t.Fatalf("row sealed with %s, want %s", row.KeyID, r.KeyID)
		}
		if info, err := os.Stat(filepath.Join(cfg.DataDir, secrets.OldKeysFile)); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("old-keys file: %v, %v", info, err)
		}
	})
	t.Run("ENCRYPTION_KEY", func(t *testing.T) {
		k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
		cfg := Config{DataDir: t.TempDir(), EncryptionKey: k1}
		a, err := OpenAdmin(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		u, _, err := a.AddUser(ctx, "alice@example.com", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := connections.New(a.store, newKeyring(cfg), connections.Options{}).Save(ctx, u.ID, "keyed", apiKey("k-2")); err != nil {
			t.Fatal(err)
		}
		// The operator sets a new key without keeping the old one: nothing
		// can be re-sealed, and the error says what to do.
		a.cfg.EncryptionKey = k2
		if _, err := a.RotateKeys(ctx); !errors.Is(err, secrets.ErrUnknownKey) || !strings.Contains(err.Error(), "ENCRYPTION_KEYS_OLD") {
			t.Fatalf("rotation without the old key: %v", err)
		}
		a.cfg.EncryptionKeysOld = [][]byte{k1}
		r, err := a.RotateKeys(ctx)
		if err != nil || r.Generated || r.Resealed != 1 || r.KeyID != secrets.KeyID(k2) {
			t.Fatalf("RotateKeys = %+v, %v", r, err)
		}
		only2 := Config{DataDir: cfg.DataDir, EncryptionKey: k2}
		c, err := connections.New(a.store, newKeyring(only2), connections.Options{}).Credential(ctx, u.ID, "keyed")
		if err != nil || c.Fields["api_key"] != "k-2" {
			t.Fatalf("credential under the new key alone: %v", err)
		}
		if _, err := os.Stat(filepath.Join(cfg.DataDir, secrets.KeyFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a key file was generated although ENCRYPTION_KEY is set: %v", err)
		}
	})
}

func TestAdmin_ProxyCalls(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg := Config{DataDir: t.TempDir()}
			if backend == "postgres" {
				cfg.DatabaseURL = pgtest.URL(t)
			}
			a, err := OpenAdmin(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			alice, _, err := a.AddUser(ctx, "alice@example.com", false)
			if err != nil {
				t.Fatal(err)
			}
			bob, _, err := a.AddUser(ctx, "bob@example.com", false)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now()
			var rows []store.ProxyCall
			for i, u := range []UserInfo{alice, bob, alice} {
				rows = append(rows, store.ProxyCall{UserID: u.ID, SessionID: "cs_1", Integration: []string{"github", "slack", "github"}[i],
					Method: "GET", Path: fmt.Sprintf("/repos/%d?page", i), Status: 200 + i, BytesOut: int64(i), Duration: time.Millisecond, At: at})
			}
			if err := a.store.RecordProxyCalls(ctx, rows); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name, email, integration string
				limit                    int
				want                     []string // emails, newest first
			}{
				{"all", "", "", 0, []string{"alice@example.com", "bob@example.com", "alice@example.com"}},
				{"alice", "Alice@example.com", "", 0, []string{"alice@example.com", "alice@example.com"}},
				{"slack", "", "slack", 0, []string{"bob@example.com"}},
				{"one", "", "", 1, []string{"alice@example.com"}},
			}
			for _, tt := range tests {
				got, err := a.ProxyCalls(ctx, tt.email, tt.integration, tt.limit, 0)
				if err != nil || len(got) != len(tt.want) {
					t.Fatalf("%s: %+v, %v", tt.name, got, err)
				}
				for i, c := range got {
					if c.UserEmail != tt.want[i] || c.Method != "GET" || c.Duration != time.Millisecond {
						t.Errorf("%s[%d] = %+v, want user %s", tt.name, i, c, tt.want[i])
					}
				}
			}
			all, _ := a.ProxyCalls(ctx, "", "", 0, 0)
			if all[0].Path != "/repos/2?page" || all[0].Status != 202 {
				t.Errorf("newest = %+v", all[0])
			}
			older, err := a.ProxyCalls(ctx, "", "", 0, all[0].ID)
			if err != nil || len(older) != 2 || older[0].ID != all[1].ID {
				t.Errorf("page before %d = %+v, %v", all[0].ID, older, err)
			}
			if _, err := a.ProxyCalls(ctx, "nobody@example.com", "", 0, 0); !errors.Is(err, ErrNoUser) {
				t.Errorf("unknown email: %v", err)
			}
			if _, err := a.ProxyCalls(ctx, "", "", 5000, 0); !errors.Is(err, ErrInvalid) {
				t.Errorf("page of 5000: %v", err)
			}
		})
	}
}
