package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testJotQuotas checks the per-user bounds on jots and the release of
// claims never published: a user cannot hold more jots or bytes than the
// quota, even concurrently, and a name claimed without an upload is free
// again once its last upload URL expired.
func testJotQuotas(t *testing.T, h *harness) {
	st := h.st
	alice := newUser(t, st, "alice@example.com")
	bob := newUser(t, st, "bob@example.com")
	public := store.JotSettings{Access: store.JotPublic}
	quota := store.JotQuota{MaxJots: 2, MaxBytes: 150}
	claim := func(u store.User, name string, ttl time.Duration) (store.Jot, error) {
		return st.CreateJot(ctx, store.NewJot{UserID: u.ID, Name: name, JotSettings: public, ClaimUntil: h.clock.Now().Add(ttl), Quota: quota})
	}
	wantQuota := func(what string, err error, bound string) {
		t.Helper()
		if !errors.Is(err, store.ErrJotQuota) || !strings.Contains(err.Error(), bound) {
			t.Fatalf("%s = %v, want ErrJotQuota naming %q", what, err, bound)
		}
	}
	upload := func(j store.Jot, token string, ttl time.Duration) error {
		_, err := st.CreateJotUpload(ctx, store.NewJotUpload{JotID: j.ID, UserID: j.UserID, TokenHash: secrets.HashToken(token),
			JotSettings: public, ExpiresAt: h.clock.Now().Add(ttl)})
		return err
	}
	lim := store.JotLimits{MaxFiles: 10, MaxBytes: 120, Quota: quota}
	publish := func(j store.Jot, token string, size int) (store.Jot, error) {
		if err := upload(j, token, 5*time.Minute); err != nil {
			t.Fatalf("CreateJotUpload: %v", err)
		}
		return st.PublishJot(ctx, secrets.HashToken(token), []store.JotContent{
			{Path: "index.html", ContentType: "text/html", Data: []byte(strings.Repeat("x", size))}}, lim)
	}

	// Count: the third claim is refused, naming the bound.
	a, err := claim(alice, "a", 5*time.Minute)
	must(t, "claim a", err)
	if !a.ClaimUntil.Equal(store.Round(h.clock.Now().Add(5*time.Minute))) || a.Released(h.clock.Now()) {
		t.Fatalf("claim = %+v", a)
	}
	b, err := claim(alice, "b", 5*time.Minute)
	must(t, "claim b", err)
	_, err = claim(alice, "c", 5*time.Minute)
	wantQuota("third claim", err, "limit of 2 jots per user")
	// Another user has a quota of their own.
	_, err = claim(bob, "bob-1", 5*time.Minute)
	must(t, "bob's claim", err)

	// An upload URL extends the claim; publishing keeps the name for good.
	h.clock.Advance(4 * time.Minute)
	must(t, "upload extends a", upload(a, "a1", 5*time.Minute))
	got, err := st.Jot(ctx, "a")
	must(t, "Jot a", err)
	if !got.ClaimUntil.Equal(store.Round(h.clock.Now().Add(5 * time.Minute))) {
		t.Fatalf("claim of a after an upload URL = %v", got.ClaimUntil)
	}
	b, err = publish(b, "b1", 100)
	must(t, "publish b", err)

	// At 6 minutes: a is held by its upload, b is published, bob's claim
	// lapsed: another user takes its name at once.
	h.clock.Advance(2 * time.Minute)
	bobs, err := st.Jot(ctx, "bob-1")
	must(t, "Jot bob-1", err)
	if !bobs.Released(h.clock.Now()) {
		t.Fatalf("bob's claim not released at %v: %+v", h.clock.Now(), bobs)
	}
	err = upload(bobs, "late", 5*time.Minute)
	wantErr(t, "upload to a released claim", err, store.ErrNotFound)
	_, err = claim(alice, "bob-1", 5*time.Minute)
	wantQuota("claim past the count", err, "limit of 2 jots per user")
	// Released claims do not count: after a lapses too, alice has room.
	h.clock.Advance(4 * time.Minute)
	taken, err := claim(alice, "bob-1", 5*time.Minute)
	must(t, "take a released name", err)
	if taken.UserID != alice.ID {
		t.Fatalf("taken = %+v", taken)
	}
	if _, err := st.Jot(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("alice's lapsed claim a still there: %v", err)
	}

	// The sweep deletes lapsed claims only.
	h.clock.Advance(10 * time.Minute)
	n, err := st.ReleaseJotClaims(ctx)
	must(t, "ReleaseJotClaims", err)
	if n != 1 {
		t.Fatalf("ReleaseJotClaims = %d, want 1 (bob-1 again)", n)
	}
	if _, err := st.Jot(ctx, "b"); err != nil {
		t.Fatalf("published jot released: %v", err)
	}

	// Bytes: all of a user's jots together.
	c, err := claim(alice, "c", 5*time.Minute)
	must(t, "claim c", err)
	_, err = publish(c, "c1", 60)
	wantQuota("publish past the bytes", err, "160 bytes, over the limit of 150 bytes per user")
	c, err = publish(c, "c2", 50)
	must(t, "publish within the bytes", err)
	_, err = st.PatchJot(ctx, alice.ID, "c", store.JotPatch{Limits: lim,
		Put: []store.JotContent{{Path: "more.txt", ContentType: "text/plain", Data: []byte("xx")}}})
	wantQuota("patch past the bytes", err, "over the limit of 150 bytes per user")
	if got, _ := st.Jot(ctx, "c"); got.Bytes != 50 || got.Files != 1 {
		t.Fatalf("a refused patch changed the jot: %+v", got)
	}

	// Concurrent claims of one user stop at the quota.
	carol := newUser(t, st, "carol@example.com")
	var wg sync.WaitGroup
	var created atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := claim(carol, fmt.Sprintf("carol-%d", i), time.Hour)
			switch {
			case err == nil:
				created.Add(1)
			case !errors.Is(err, store.ErrJotQuota):
				t.Errorf("concurrent claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := created.Load(); n != int32(quota.MaxJots) {
		t.Errorf("%d concurrent claims succeeded, want the quota of %d", n, quota.MaxJots)
	}
}
