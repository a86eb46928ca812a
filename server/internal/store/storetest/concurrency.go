package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Hammer sizes: enough goroutines to contend on SQLite's single writer and
// Postgres's row locks, small enough for -race.
const (
	hammerWorkers = 8
	hammerRounds  = 15
)

// testConcurrentWriters runs many writers and readers at once: none may fail
// (SQLite must queue writers instead of returning SQLITE_BUSY) and every
// write must be visible afterwards.
func testConcurrentWriters(t *testing.T, h *harness) {
	st := h.st
	seal := newSealer('k')
	shared := newUser(t, st, "shared@example.com")
	var wg sync.WaitGroup
	errs := make(chan error, hammerWorkers*hammerRounds*8)
	report := func(w, i int, what string, err error) {
		errs <- fmt.Errorf("worker %d round %d: %s: %w", w, i, what, err)
	}
	for w := range hammerWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := st.CreateUser(ctx, store.NewUser{Email: fmt.Sprintf("w%d@example.com", w)})
			if err != nil {
				report(w, -1, "CreateUser", err)
				return
			}
			for i := range hammerRounds {
				tok, hash, prefix := secrets.NewToken()
				if _, err := st.CreateToken(ctx, store.NewToken{UserID: u.ID, Name: "t", Hash: hash, Prefix: prefix}); err != nil {
					report(w, i, "CreateToken", err)
					continue
				}
				if _, err := st.TokenByHash(ctx, secrets.HashToken(tok)); err != nil {
					report(w, i, "TokenByHash", err)
				}
				integ := fmt.Sprintf("integ-%d", i%3)
				sealed, keyID, _ := seal.keys.Seal([]byte(fmt.Sprint(i)), aad("credential", u.TenantID, u.ID, integ))
				if _, err := st.PutConnection(ctx, store.Connection{UserID: u.ID, Integration: integ, Mode: "apikey", Sealed: sealed, KeyID: keyID}); err != nil {
					report(w, i, "PutConnection", err)
				}
				// Everyone also writes the same row.
				sealed, keyID, _ = seal.keys.Seal([]byte("shared"), aad("credential", shared.TenantID, shared.ID, "github"))
				if _, err := st.PutConnection(ctx, store.Connection{UserID: shared.ID, Integration: "github", Mode: "oauth2", Sealed: sealed, KeyID: keyID}); err != nil {
					report(w, i, "PutConnection shared", err)
				}
				p, err := st.CreatePending(ctx, store.NewPending{UserID: u.ID, Integration: integ, Mode: "oauth2", ExpiresAt: h.clock.Now().Add(time.Hour)})
				if err != nil {
					report(w, i, "CreatePending", err)
					continue
				}
				if _, err := st.ConsumePendingState(ctx, p.State); err != nil {
					report(w, i, "ConsumePendingState", err)
				}
				if _, err := st.CompletePending(ctx, u.ID, p.ID, store.Outcome{Status: store.PendingFailed, Reason: "r"}); err != nil {
					report(w, i, "CompletePending", err)
				}
				if _, err := st.Connections(ctx, u.ID); err != nil {
					report(w, i, "Connections", err)
				}
				if _, err := st.ExpirePending(ctx); err != nil {
					report(w, i, "ExpirePending", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if n, err := st.CountUsers(ctx); err != nil || n != hammerWorkers+1 {
		t.Fatalf("CountUsers = %d, %v; want %d", n, err, hammerWorkers+1)
	}
	users, err := st.Users(ctx, store.DefaultTenant)
	must(t, "Users", err)
	for _, u := range users {
		if u.ID == shared.ID {
			continue
		}
		toks, err := st.Tokens(ctx, u.ID)
		must(t, "Tokens", err)
		conns, err := st.Connections(ctx, u.ID)
		must(t, "Connections", err)
		if len(toks) != hammerRounds || len(conns) != 3 {
			t.Errorf("%s: %d tokens, %d connections; want %d and 3", u.Email, len(toks), len(conns), hammerRounds)
		}
		for _, c := range conns {
			plain, err := seal.keys.Open(c.Sealed, c.KeyID, aad("credential", c.TenantID, c.UserID, c.Integration))
			if err != nil || len(plain) == 0 {
				t.Errorf("%s/%s: %v", u.Email, c.Integration, err)
			}
		}
	}
	if list, _ := st.Connections(ctx, shared.ID); len(list) != 1 {
		t.Fatalf("shared user has %d connections, want exactly 1", len(list))
	}
}

// testConcurrentCAS races many callers on one record: exactly one wins each
// compare-and-set, the rest get the documented error.
func testConcurrentCAS(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")

	race := func(name string, n int, call func(i int) error, loser error) {
		t.Helper()
		var wg sync.WaitGroup
		results := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = call(i)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range results {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, loser):
				t.Errorf("%s: unexpected error %v", name, err)
			}
		}
		if wins != 1 {
			t.Errorf("%s: %d winners, want exactly 1", name, wins)
		}
	}

	p := newPending(t, h, alice, "github")
	race("ConsumePendingState", hammerWorkers, func(int) error {
		_, err := st.ConsumePendingState(ctx, p.State)
		return err
	}, store.ErrNotFound)
	race("CompletePending", hammerWorkers, func(i int) error {
		status := store.PendingConnected
		if i%2 == 1 {
			status = store.PendingFailed
		}
		_, err := st.CompletePending(ctx, alice.ID, p.ID, store.Outcome{Status: status})
		return err
	}, store.ErrNotPending)
	race("CreateUser same email", hammerWorkers, func(i int) error {
		email := "same@example.com"
		if i%2 == 1 {
			email = "SAME@example.com"
		}
		_, err := st.CreateUser(ctx, store.NewUser{Email: email})
		return err
	}, store.ErrConflict)
}
