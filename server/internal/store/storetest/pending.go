package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// handshake is the pending window the tests use.
const handshake = 10 * time.Minute

func newPending(t *testing.T, h *harness, u store.User, integration string) store.PendingConnection {
	t.Helper()
	seal := newSealer('k')
	verifier, keyID, err := seal.keys.Seal([]byte("pkce-verifier"), aad("pkce", u.TenantID, u.ID, integration))
	must(t, "Seal verifier", err)
	p, err := h.st.CreatePending(ctx, store.NewPending{
		UserID: u.ID, Integration: integration, Mode: "oauth2",
		SealedVerifier: verifier, KeyID: keyID, ExpiresAt: h.clock.Now().Add(handshake),
	})
	must(t, "CreatePending", err)
	return p
}

func testPending(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	p := newPending(t, h, alice, "github")
	if !strings.HasPrefix(p.ID, store.PrefixPending) || p.Status != store.PendingWaiting || p.TenantID != store.DefaultTenant ||
		len(p.State) < 40 || !p.CreatedAt.Equal(h.clock.Now()) || !p.ExpiresAt.Equal(h.clock.Now().Add(handshake)) || !p.TerminalAt.IsZero() {
		t.Fatalf("CreatePending = %+v", p)
	}
	other := newPending(t, h, alice, "github")
	if other.State == p.State || other.ID == p.ID {
		t.Fatal("two pending connections share a state or id")
	}

	got, err := st.Pending(ctx, alice.ID, p.ID)
	must(t, "Pending", err)
	if got.State != "" {
		t.Fatal("Pending returns the state; only CreatePending may")
	}
	plain, err := newSealer('k').keys.Open(got.SealedVerifier, got.KeyID, aad("pkce", got.TenantID, got.UserID, got.Integration))
	if err != nil || string(plain) != "pkce-verifier" {
		t.Fatalf("verifier round trip = %q, %v", plain, err)
	}
	_, err = st.Pending(ctx, alice.ID, "pc_missing")
	wantErr(t, "unknown pending", err, store.ErrNotFound)

	// The state is single-use.
	h.clock.Advance(time.Minute)
	byState, err := st.ConsumePendingState(ctx, p.State)
	must(t, "ConsumePendingState", err)
	if byState.ID != p.ID || byState.UserID != alice.ID || byState.Status != store.PendingWaiting {
		t.Fatalf("ConsumePendingState = %+v", byState)
	}
	_, err = st.ConsumePendingState(ctx, p.State)
	wantErr(t, "replayed state", err, store.ErrNotFound)
	for _, bad := range []string{"", "nope", strings.Repeat("s", 300)} {
		_, err = st.ConsumePendingState(ctx, bad)
		wantErr(t, "unknown state", err, store.ErrNotFound)
	}

	// A failed outcome that carries a connection for another integration is
	// refused as a whole: the record stays PENDING.
	seal := newSealer('k')
	wrong := seal.connection(t, alice, "slack", "tok")
	_, err = st.CompletePending(ctx, alice.ID, p.ID, store.Outcome{Status: store.PendingConnected, Connection: &wrong})
	wantErr(t, "outcome for another integration", err, store.ErrInvalid)
	if got, _ := st.Pending(ctx, alice.ID, p.ID); got.Status != store.PendingWaiting {
		t.Fatalf("record changed by a refused completion: %s", got.Status)
	}
	if _, err := st.Connection(ctx, alice.ID, "slack"); err == nil {
		t.Fatal("refused completion stored its connection")
	}

	// Completing stores the connection in the same step.
	h.clock.Advance(time.Minute)
	conn := seal.connection(t, alice, "github", "gho_from_oauth")
	done, err := st.CompletePending(ctx, alice.ID, p.ID, store.Outcome{Status: store.PendingConnected, Connection: &conn})
	must(t, "CompletePending", err)
	if done.Status != store.PendingConnected || !done.TerminalAt.Equal(h.clock.Now()) {
		t.Fatalf("CompletePending = %+v", done)
	}
	stored, err := st.Connection(ctx, alice.ID, "github")
	must(t, "connection stored by CompletePending", err)
	if secret, err := seal.open(stored); err != nil || secret != "gho_from_oauth" {
		t.Fatalf("stored connection = %q, %v", secret, err)
	}
	// Compare-and-set: a terminal record does not move again.
	_, err = st.CompletePending(ctx, alice.ID, p.ID, store.Outcome{Status: store.PendingFailed, Reason: "late"})
	wantErr(t, "completing twice", err, store.ErrNotPending)
	if got, _ := st.Pending(ctx, alice.ID, p.ID); got.Status != store.PendingConnected {
		t.Fatalf("status after second completion = %s", got.Status)
	}

	// A FAILED outcome keeps its reason; the state of a terminal record no
	// longer works.
	failed, err := st.CompletePending(ctx, alice.ID, other.ID, store.Outcome{Status: store.PendingFailed, Reason: "access_denied: the user declined"})
	must(t, "CompletePending failed", err)
	if failed.Status != store.PendingFailed || failed.Reason != "access_denied: the user declined" {
		t.Fatalf("failed outcome = %+v", failed)
	}
	_, err = st.ConsumePendingState(ctx, other.State)
	wantErr(t, "state of a terminal record", err, store.ErrNotPending)

	tests := []struct {
		name string
		o    store.Outcome
		want error
	}{
		{"non-terminal status", store.Outcome{Status: store.PendingWaiting}, store.ErrInvalid},
		{"unknown status", store.Outcome{Status: "DONE"}, store.ErrInvalid},
		{"connection on failure", store.Outcome{Status: store.PendingFailed, Connection: &conn}, store.ErrInvalid},
	}
	third := newPending(t, h, alice, "github")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.CompletePending(ctx, alice.ID, third.ID, tt.o)
			wantErr(t, "CompletePending", err, tt.want)
		})
	}
	_, err = st.CompletePending(ctx, alice.ID, "pc_missing", store.Outcome{Status: store.PendingFailed})
	wantErr(t, "completing unknown", err, store.ErrNotFound)

	must(t, "DeletePending", st.DeletePending(ctx, alice.ID, third.ID))
	_, err = st.Pending(ctx, alice.ID, third.ID)
	wantErr(t, "deleted pending", err, store.ErrNotFound)
	wantErr(t, "delete twice", st.DeletePending(ctx, alice.ID, third.ID), store.ErrNotFound)

	badNew := []struct {
		name string
		np   store.NewPending
		want error
	}{
		{"unknown user", store.NewPending{UserID: "usr_missing", Integration: "github", Mode: "oauth2", ExpiresAt: h.clock.Now()}, store.ErrNotFound},
		{"no expiry", store.NewPending{UserID: alice.ID, Integration: "github", Mode: "oauth2"}, store.ErrInvalid},
		{"bad integration", store.NewPending{UserID: alice.ID, Integration: "../x", Mode: "oauth2", ExpiresAt: h.clock.Now()}, store.ErrInvalid},
		{"verifier without key", store.NewPending{UserID: alice.ID, Integration: "github", Mode: "oauth2", SealedVerifier: []byte("x"), ExpiresAt: h.clock.Now()}, store.ErrInvalid},
	}
	for _, tt := range badNew {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.CreatePending(ctx, tt.np)
			wantErr(t, "CreatePending", err, tt.want)
		})
	}
	// A record without a verifier (apikey, cookie and none modes) is fine.
	plainP, err := st.CreatePending(ctx, store.NewPending{UserID: alice.ID, Integration: "newrelic", Mode: "apikey", ExpiresAt: h.clock.Now().Add(handshake)})
	must(t, "CreatePending apikey", err)
	if got, _ := st.Pending(ctx, alice.ID, plainP.ID); got.SealedVerifier != nil || got.KeyID != "" || got.Mode != "apikey" {
		t.Fatalf("apikey pending = %+v", got)
	}
}

func testPendingExpiry(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	early := newPending(t, h, alice, "github")
	h.clock.Advance(5 * time.Minute)
	late := newPending(t, h, alice, "slack")
	done := newPending(t, h, alice, "notion")
	_, err := st.CompletePending(ctx, alice.ID, done.ID, store.Outcome{Status: store.PendingConnected})
	must(t, "CompletePending", err)

	// Before the window ends nothing expires.
	if n, err := st.ExpirePending(ctx); err != nil || n != 0 {
		t.Fatalf("ExpirePending early = %d, %v", n, err)
	}
	// At the end of early's window it is overdue: completion and state fail
	// even before the sweep runs.
	h.clock.Advance(5 * time.Minute)
	_, err = st.CompletePending(ctx, alice.ID, early.ID, store.Outcome{Status: store.PendingConnected})
	wantErr(t, "completing an overdue record", err, store.ErrExpired)
	_, err = st.ConsumePendingState(ctx, early.State)
	wantErr(t, "state of an overdue record", err, store.ErrExpired)
	_, err = st.ConsumePendingState(ctx, early.State)
	wantErr(t, "state of an overdue record, again", err, store.ErrNotFound)

	n, err := st.ExpirePending(ctx)
	if err != nil || n != 1 {
		t.Fatalf("ExpirePending = %d, %v; want 1", n, err)
	}
	expiredAt := h.clock.Now()
	got, _ := st.Pending(ctx, alice.ID, early.ID)
	if got.Status != store.PendingExpired || got.Reason == "" || !got.TerminalAt.Equal(expiredAt) {
		t.Fatalf("expired record = %+v", got)
	}
	if got, _ := st.Pending(ctx, alice.ID, late.ID); got.Status != store.PendingWaiting {
		t.Fatalf("late record = %s, want PENDING", got.Status)
	}
	// An explicit EXPIRED outcome may end an overdue record.
	h.clock.Advance(5 * time.Minute)
	lateDone, err := st.CompletePending(ctx, alice.ID, late.ID, store.Outcome{Status: store.PendingExpired, Reason: "window over"})
	must(t, "CompletePending EXPIRED on overdue", err)
	if lateDone.Status != store.PendingExpired || lateDone.Reason != "window over" {
		t.Fatalf("late outcome = %+v", lateDone)
	}

	// Terminal records stay for the keep period, then go.
	if n, err := st.PrunePending(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("PrunePending within the hour = %d, %v", n, err)
	}
	h.clock.Advance(56 * time.Minute) // done is 66 min terminal, early 61, late 56
	n, err = st.PrunePending(ctx, time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("PrunePending = %d, %v; want 2", n, err)
	}
	for _, id := range []string{early.ID, done.ID} {
		_, err := st.Pending(ctx, alice.ID, id)
		wantErr(t, "pruned record", err, store.ErrNotFound)
	}
	if _, err := st.Pending(ctx, alice.ID, late.ID); err != nil {
		t.Fatalf("record terminal for 56 minutes was pruned: %v", err)
	}
	_, err = st.PrunePending(ctx, -time.Second)
	wantErr(t, "negative keep", err, store.ErrInvalid)
}
