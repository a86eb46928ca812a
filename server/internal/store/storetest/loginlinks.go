package storetest

import (
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testLoginLinks checks that a one-time sign-in link works once, not after
// its expiry, and is pruned once used or expired.
func testLoginLinks(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	hash := secrets.HashToken("wbl_link-1")
	l, err := st.CreateLoginLink(ctx, store.NewLoginLink{UserID: alice.ID, TokenHash: hash, ExpiresAt: h.clock.Now().Add(15 * time.Minute)})
	must(t, "CreateLoginLink", err)
	if l.TenantID != store.DefaultTenant || l.UserID != alice.ID || !l.CreatedAt.Equal(h.clock.Now()) || !l.UsedAt.IsZero() {
		t.Fatalf("CreateLoginLink = %+v", l)
	}

	bad := []struct {
		name string
		nl   store.NewLoginLink
		want error
	}{
		{"duplicate", store.NewLoginLink{UserID: alice.ID, TokenHash: hash, ExpiresAt: h.clock.Now().Add(time.Minute)}, store.ErrConflict},
		{"unknown user", store.NewLoginLink{UserID: "usr_missing", TokenHash: secrets.HashToken("x"), ExpiresAt: h.clock.Now().Add(time.Minute)}, store.ErrNotFound},
		{"no user", store.NewLoginLink{TokenHash: secrets.HashToken("y"), ExpiresAt: h.clock.Now().Add(time.Minute)}, store.ErrInvalid},
		{"malformed hash", store.NewLoginLink{UserID: alice.ID, TokenHash: "wbl_plain", ExpiresAt: h.clock.Now().Add(time.Minute)}, store.ErrInvalid},
		{"no expiry", store.NewLoginLink{UserID: alice.ID, TokenHash: secrets.HashToken("z")}, store.ErrInvalid},
	}
	for _, b := range bad {
		_, err := st.CreateLoginLink(ctx, b.nl)
		wantErr(t, "CreateLoginLink "+b.name, err, b.want)
	}

	h.clock.Advance(time.Minute)
	got, err := st.ConsumeLoginLink(ctx, hash)
	must(t, "ConsumeLoginLink", err)
	if got.UserID != alice.ID || !got.UsedAt.Equal(h.clock.Now()) {
		t.Fatalf("ConsumeLoginLink = %+v", got)
	}
	_, err = st.ConsumeLoginLink(ctx, hash)
	wantErr(t, "second use", err, store.ErrNotFound)
	_, err = st.ConsumeLoginLink(ctx, secrets.HashToken("never minted"))
	wantErr(t, "unknown link", err, store.ErrNotFound)
	_, err = st.ConsumeLoginLink(ctx, "not a hash")
	wantErr(t, "malformed hash", err, store.ErrNotFound)

	// A link used after its expiry fails and is used up all the same.
	late := secrets.HashToken("wbl_link-2")
	_, err = st.CreateLoginLink(ctx, store.NewLoginLink{UserID: alice.ID, TokenHash: late, ExpiresAt: h.clock.Now().Add(15 * time.Minute)})
	must(t, "CreateLoginLink late", err)
	fresh := secrets.HashToken("wbl_link-3")
	_, err = st.CreateLoginLink(ctx, store.NewLoginLink{UserID: alice.ID, TokenHash: fresh, ExpiresAt: h.clock.Now().Add(time.Hour)})
	must(t, "CreateLoginLink fresh", err)
	h.clock.Advance(15 * time.Minute)
	_, err = st.ConsumeLoginLink(ctx, late)
	wantErr(t, "expired link", err, store.ErrExpired)
	_, err = st.ConsumeLoginLink(ctx, late)
	wantErr(t, "expired link again", err, store.ErrNotFound)

	// Pruning removes the used and the expired links and keeps the live one.
	n, err := st.PruneLoginLinks(ctx)
	if err != nil || n != 2 {
		t.Fatalf("PruneLoginLinks = %d, %v; want 2", n, err)
	}
	if _, err := st.ConsumeLoginLink(ctx, fresh); err != nil {
		t.Fatalf("live link after pruning: %v", err)
	}
}
