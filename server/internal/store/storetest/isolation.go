package storetest

import (
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// testIsolation checks that every user-scoped method, called with user B's id
// on user A's rows, finds nothing and changes nothing.
func testIsolation(t *testing.T, h *harness) {
	st := h.st
	seal := newSealer('k')
	alice := newUser(t, st, "alice@example.com")
	bob := newUser(t, st, "bob@example.com")
	_, err := st.PutConnection(ctx, seal.connection(t, alice, "github", "gho_alice"))
	must(t, "PutConnection", err)
	p := newPending(t, h, alice, "slack")
	aliceToken, tokRec := newToken(t, st, alice.ID, "laptop")

	bobConn := seal.connection(t, bob, "github", "gho_bob")
	checks := []struct {
		name string
		call func() error
	}{
		{"Connection", func() error { _, err := st.Connection(ctx, bob.ID, "github"); return err }},
		{"SetConnectionStatus", func() error {
			return st.SetConnectionStatus(ctx, bob.ID, "github", store.ConnectionFailed, "x")
		}},
		{"DeleteConnection", func() error { return st.DeleteConnection(ctx, bob.ID, "github") }},
		{"Pending", func() error { _, err := st.Pending(ctx, bob.ID, p.ID); return err }},
		{"CompletePending", func() error {
			_, err := st.CompletePending(ctx, bob.ID, p.ID, store.Outcome{Status: store.PendingConnected})
			return err
		}},
		{"CompletePending with connection", func() error {
			_, err := st.CompletePending(ctx, bob.ID, p.ID, store.Outcome{Status: store.PendingConnected, Connection: &bobConn})
			return err
		}},
		{"CompletePending expired", func() error {
			_, err := st.CompletePending(ctx, bob.ID, p.ID, store.Outcome{Status: store.PendingExpired})
			return err
		}},
		{"DeletePending", func() error { return st.DeletePending(ctx, bob.ID, p.ID) }},
		{"RevokeToken", func() error { return st.RevokeToken(ctx, bob.ID, tokRec.ID) }},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, "as bob", c.call(), store.ErrNotFound)
		})
	}
	if list, err := st.Connections(ctx, bob.ID); err != nil || len(list) != 0 {
		t.Fatalf("Connections(bob) = %+v, %v", list, err)
	}
	if list, err := st.Tokens(ctx, bob.ID); err != nil || len(list) != 0 {
		t.Fatalf("Tokens(bob) = %+v, %v", list, err)
	}

	// Alice's rows are untouched.
	c, err := st.Connection(ctx, alice.ID, "github")
	must(t, "alice's connection", err)
	if c.Status != store.ConnectionActive {
		t.Fatalf("alice's connection status = %s", c.Status)
	}
	if secret, err := seal.open(c); err != nil || secret != "gho_alice" {
		t.Fatalf("alice's secret = %q, %v", secret, err)
	}
	got, err := st.Pending(ctx, alice.ID, p.ID)
	must(t, "alice's pending", err)
	if got.Status != store.PendingWaiting {
		t.Fatalf("alice's pending = %s", got.Status)
	}
	if _, err := st.Connection(ctx, bob.ID, "slack"); err == nil {
		t.Fatal("bob's completion attempt stored a connection")
	}
	h.clock.Advance(2 * time.Minute)
	tok, err := st.TokenByHash(ctx, hashOf(aliceToken))
	must(t, "alice's token", err)
	if tok.UserID != alice.ID || !tok.RevokedAt.IsZero() {
		t.Fatalf("alice's token = %+v", tok)
	}
	// Alice can complete her own record.
	if _, err := st.CompletePending(ctx, alice.ID, p.ID, store.Outcome{Status: store.PendingConnected}); err != nil {
		t.Fatalf("alice completing her record: %v", err)
	}
}
