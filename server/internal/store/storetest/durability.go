package storetest

import (
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

func hashOf(token string) string { return secrets.HashToken(token) }

// testDurability closes the store and opens the same database again (a
// server restart): every record survives, and reopening an up-to-date
// database migrates nothing twice.
func testDurability(t *testing.T, h *harness) {
	seal := newSealer('k')
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	token, tokRec := newToken(t, st, alice.ID, "laptop")
	conn, err := st.PutConnection(ctx, seal.connection(t, alice, "github", "gho_alice"))
	must(t, "PutConnection", err)
	p := newPending(t, h, alice, "slack")
	sessHash := secrets.HashToken("cookie")
	_, err = st.CreateSession(ctx, store.Session{IDHash: sessHash, UserID: alice.ID, CSRFSecret: "c", ExpiresAt: h.clock.Now().Add(time.Hour)})
	must(t, "CreateSession", err)
	linkHash := secrets.HashToken("wbl_link")
	_, err = st.CreateLoginLink(ctx, store.NewLoginLink{UserID: alice.ID, TokenHash: linkHash, ExpiresAt: h.clock.Now().Add(time.Hour)})
	must(t, "CreateLoginLink", err)
	must(t, "Close", st.Close())
	must(t, "Close twice", st.Close())

	for round := range 2 {
		st = h.open(t)
		got, err := st.UserByEmail(ctx, store.DefaultTenant, "alice@example.com")
		if err != nil || got != alice {
			t.Fatalf("round %d: user = %+v, %v", round, got, err)
		}
		tok, err := st.TokenByHash(ctx, hashOf(token))
		if err != nil || tok.ID != tokRec.ID {
			t.Fatalf("round %d: token = %+v, %v", round, tok, err)
		}
		c, err := st.Connection(ctx, alice.ID, "github")
		must(t, "Connection", err)
		if c.ID != conn.ID || !c.UpdatedAt.Equal(conn.UpdatedAt) {
			t.Fatalf("round %d: connection = %+v", round, c)
		}
		if secret, err := seal.open(c); err != nil || secret != "gho_alice" {
			t.Fatalf("round %d: secret = %q, %v", round, secret, err)
		}
		gotP, err := st.Pending(ctx, alice.ID, p.ID)
		if err != nil || gotP.Status != store.PendingWaiting || !gotP.ExpiresAt.Equal(p.ExpiresAt) {
			t.Fatalf("round %d: pending = %+v, %v", round, gotP, err)
		}
		if _, err := st.SessionByHash(ctx, sessHash); err != nil {
			t.Fatalf("round %d: session: %v", round, err)
		}
		if round == 0 {
			// The state still works once after a restart.
			if _, err := st.ConsumePendingState(ctx, p.State); err != nil {
				t.Fatalf("state after restart: %v", err)
			}
			if _, err := st.ConsumeLoginLink(ctx, linkHash); err != nil {
				t.Fatalf("login link after restart: %v", err)
			}
		} else {
			_, err := st.ConsumePendingState(ctx, p.State)
			wantErr(t, "state used before the restart", err, store.ErrNotFound)
			_, err = st.ConsumeLoginLink(ctx, linkHash)
			wantErr(t, "login link used before the restart", err, store.ErrNotFound)
		}
		must(t, "Close", st.Close())
	}
}
