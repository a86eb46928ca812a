package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testCurl checks curl sessions (creation, lookup by hash whatever their
// state, per-user listing and revocation, pruning) and the proxy audit log
// (batches, filters, pages, pruning).
func testCurl(t *testing.T, h *harness) {
	st := h.st
	alice, bob := newUser(t, st, "alice@example.com"), newUser(t, st, "bob@example.com")
	now := h.clock.Now()
	n := store.NewCurlSession{UserID: alice.ID, Integrations: []string{"slack", "github", "slack"},
		Hash: secrets.HashToken("wbc_one"), Prefix: "wbc_one", ExpiresAt: now.Add(15 * time.Minute)}
	s, err := st.CreateCurlSession(ctx, n)
	must(t, "CreateCurlSession", err)
	if !strings.HasPrefix(s.ID, store.PrefixCurlSession) || s.TenantID != store.DefaultTenant || s.UserID != alice.ID ||
		!slices.Equal(s.Integrations, []string{"github", "slack"}) || !s.CreatedAt.Equal(now) || !s.ExpiresAt.Equal(now.Add(15*time.Minute)) ||
		!s.RevokedAt.IsZero() || !s.Active(now) || !s.Allows("github") || s.Allows("jira") {
		t.Fatalf("CreateCurlSession = %+v", s)
	}
	got, err := st.CurlSessionByHash(ctx, n.Hash)
	must(t, "CurlSessionByHash", err)
	if got.ID != s.ID || !slices.Equal(got.Integrations, s.Integrations) || got.Prefix != "wbc_one" || !got.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("CurlSessionByHash = %+v, want %+v", got, s)
	}

	with := func(f func(*store.NewCurlSession)) store.NewCurlSession {
		c := n
		c.Hash = secrets.HashToken(fmt.Sprint(time.Now().UnixNano()))
		f(&c)
		return c
	}
	bad := []struct {
		name string
		n    store.NewCurlSession
		want error
	}{
		{"duplicate hash", n, store.ErrConflict},
		{"unknown user", with(func(c *store.NewCurlSession) { c.UserID = "usr_missing" }), store.ErrNotFound},
		{"no user", with(func(c *store.NewCurlSession) { c.UserID = "" }), store.ErrInvalid},
		{"no integrations", with(func(c *store.NewCurlSession) { c.Integrations = nil }), store.ErrInvalid},
		{"bad integration", with(func(c *store.NewCurlSession) { c.Integrations = []string{"Git Hub"} }), store.ErrInvalid},
		{"too many", with(func(c *store.NewCurlSession) {
			c.Integrations = nil
			for i := range store.MaxCurlIntegrations + 1 {
				c.Integrations = append(c.Integrations, fmt.Sprintf("i%d", i))
			}
		}), store.ErrInvalid},
		{"plain hash", with(func(c *store.NewCurlSession) { c.Hash = "wbc_one" }), store.ErrInvalid},
		{"no prefix", with(func(c *store.NewCurlSession) { c.Prefix = "" }), store.ErrInvalid},
		{"no expiry", with(func(c *store.NewCurlSession) { c.ExpiresAt = time.Time{} }), store.ErrInvalid},
	}
	for _, b := range bad {
		_, err := st.CreateCurlSession(ctx, b.n)
		wantErr(t, "CreateCurlSession "+b.name, err, b.want)
	}
	_, err = st.CurlSessionByHash(ctx, secrets.HashToken("wbc_unknown"))
	wantErr(t, "unknown hash", err, store.ErrNotFound)
	_, err = st.CurlSessionByHash(ctx, "wbc_one")
	wantErr(t, "plain token as hash", err, store.ErrNotFound)

	// Revocation is per user, idempotent, and the record stays readable.
	h.clock.Advance(time.Minute)
	second, err := st.CreateCurlSession(ctx, with(func(c *store.NewCurlSession) { c.ExpiresAt = h.clock.Now().Add(15 * time.Minute) }))
	must(t, "second session", err)
	bobs, err := st.CreateCurlSession(ctx, with(func(c *store.NewCurlSession) { c.UserID = bob.ID }))
	must(t, "bob's session", err)
	wantErr(t, "revoking bob's session as alice", st.RevokeCurlSession(ctx, alice.ID, bobs.ID), store.ErrNotFound)
	wantErr(t, "revoking an unknown session", st.RevokeCurlSession(ctx, alice.ID, "cs_missing"), store.ErrNotFound)
	must(t, "RevokeCurlSession", st.RevokeCurlSession(ctx, alice.ID, s.ID))
	revokedAt := h.clock.Now()
	h.clock.Advance(time.Second)
	must(t, "RevokeCurlSession again", st.RevokeCurlSession(ctx, alice.ID, s.ID))
	got, err = st.CurlSessionByHash(ctx, n.Hash)
	must(t, "revoked session by hash", err)
	if !got.RevokedAt.Equal(revokedAt) || got.Active(h.clock.Now()) {
		t.Fatalf("revoked session = %+v, want RevokedAt %v", got, revokedAt)
	}
	list, err := st.CurlSessions(ctx, alice.ID)
	must(t, "CurlSessions", err)
	if len(list) != 2 || list[0].ID != second.ID || list[1].ID != s.ID {
		t.Fatalf("CurlSessions = %+v, want newest first [%s %s]", list, second.ID, s.ID)
	}
	if b, err := st.CurlSessions(ctx, bob.ID); err != nil || len(b) != 1 || b[0].ID != bobs.ID || !b[0].RevokedAt.IsZero() {
		t.Fatalf("bob's sessions = %+v, %v", b, err)
	}

	// Pruning removes what expired or was revoked before the cutoff.
	h.clock.Advance(20 * time.Minute) // every session has expired
	pruned, err := st.PruneCurlSessions(ctx, revokedAt)
	if err != nil || pruned != 0 {
		t.Fatalf("PruneCurlSessions(at the revocation) = %d, %v; want 0", pruned, err)
	}
	pruned, err = st.PruneCurlSessions(ctx, revokedAt.Add(time.Microsecond))
	if err != nil || pruned != 1 {
		t.Fatalf("PruneCurlSessions(after the revocation) = %d, %v; want 1", pruned, err)
	}
	_, err = st.CurlSessionByHash(ctx, n.Hash)
	wantErr(t, "pruned session", err, store.ErrNotFound)
	pruned, err = st.PruneCurlSessions(ctx, h.clock.Now())
	if err != nil || pruned != 2 {
		t.Fatalf("PruneCurlSessions(now) = %d, %v; want the 2 expired", pruned, err)
	}

	testProxyCalls(t, h, alice, bob)
}

func testProxyCalls(t *testing.T, h *harness, alice, bob store.User) {
	st := h.st
	start := h.clock.Now()
	call := func(u store.User, integration string, i int) store.ProxyCall {
		return store.ProxyCall{UserID: u.ID, SessionID: "cs_x", Integration: integration, Method: "GET",
			Path: fmt.Sprintf("/repos/o/r/issues/%d?state&per_page", i), Status: 200, BytesIn: int64(i), BytesOut: 1000 + int64(i),
			Duration: 1500*time.Microsecond + 300*time.Nanosecond, At: start.Add(time.Duration(i) * time.Second)}
	}
	var batch []store.ProxyCall
	for i := range 5 {
		batch = append(batch, call(alice, "github", i))
	}
	batch = append(batch, call(bob, "github", 5), call(alice, "slack", 6))
	ghost := call(alice, "github", 7)
	ghost.UserID = "usr_deleted"
	batch = append(batch, ghost)
	must(t, "RecordProxyCalls", st.RecordProxyCalls(ctx, batch))
	must(t, "RecordProxyCalls empty", st.RecordProxyCalls(ctx, nil))

	all, err := st.ProxyCalls(ctx, store.ProxyCallFilter{})
	must(t, "ProxyCalls", err)
	if len(all) != 7 {
		t.Fatalf("ProxyCalls = %d entries, want 7 (the deleted user's dropped)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("ProxyCalls not newest first: %d then %d", all[i-1].ID, all[i].ID)
		}
	}
	first := all[len(all)-1]
	want := call(alice, "github", 0)
	if first.UserID != alice.ID || first.TenantID != store.DefaultTenant || first.Path != want.Path || first.Status != 200 ||
		first.BytesIn != 0 || first.BytesOut != 1000 || first.Duration != 1500*time.Microsecond || !first.At.Equal(start) ||
		first.Method != "GET" || first.SessionID != "cs_x" || first.Integration != "github" {
		t.Fatalf("oldest entry = %+v", first)
	}

	filters := []struct {
		name string
		f    store.ProxyCallFilter
		want int
	}{
		{"alice", store.ProxyCallFilter{UserID: alice.ID}, 6},
		{"bob", store.ProxyCallFilter{UserID: bob.ID}, 1},
		{"alice's github", store.ProxyCallFilter{UserID: alice.ID, Integration: "github"}, 5},
		{"tenant", store.ProxyCallFilter{TenantID: store.DefaultTenant}, 7},
		{"other tenant", store.ProxyCallFilter{TenantID: "ten_other"}, 0},
		{"page of 2", store.ProxyCallFilter{UserID: alice.ID, Limit: 2}, 2},
		{"before the third newest", store.ProxyCallFilter{BeforeID: all[2].ID}, 4},
	}
	for _, f := range filters {
		got, err := st.ProxyCalls(ctx, f.f)
		must(t, "ProxyCalls "+f.name, err)
		if len(got) != f.want {
			t.Errorf("ProxyCalls %s = %d entries, want %d", f.name, len(got), f.want)
		}
	}
	for _, f := range []store.ProxyCallFilter{{Limit: -1}, {Limit: store.MaxProxyCallsPerPage + 1}, {BeforeID: -1}} {
		_, err := st.ProxyCalls(ctx, f)
		wantErr(t, fmt.Sprintf("ProxyCalls %+v", f), err, store.ErrInvalid)
	}

	// A bad entry records nothing of its batch; long paths are cut.
	long := call(alice, "github", 8)
	long.Path = "/" + strings.Repeat("é", store.MaxProxyPathLen)
	badCalls := []func(*store.ProxyCall){
		func(c *store.ProxyCall) { c.Integration = "" },
		func(c *store.ProxyCall) { c.Method = "" },
		func(c *store.ProxyCall) { c.Status = 42 },
		func(c *store.ProxyCall) { c.BytesOut = -1 },
		func(c *store.ProxyCall) { c.At = time.Time{} },
		func(c *store.ProxyCall) { c.SessionID = "" },
	}
	for i, mutate := range badCalls {
		c := call(alice, "github", 9)
		mutate(&c)
		wantErr(t, fmt.Sprintf("bad call %d", i), st.RecordProxyCalls(ctx, []store.ProxyCall{long, c}), store.ErrInvalid)
	}
	if got, _ := st.ProxyCalls(ctx, store.ProxyCallFilter{}); len(got) != 7 {
		t.Fatalf("a rejected batch recorded %d entries", len(got)-7)
	}
	must(t, "RecordProxyCalls long path", st.RecordProxyCalls(ctx, []store.ProxyCall{long}))
	newest, err := st.ProxyCalls(ctx, store.ProxyCallFilter{Limit: 1})
	must(t, "newest", err)
	if p := newest[0].Path; len(p) > store.MaxProxyPathLen || !strings.HasPrefix(p, "/éé") || !utf8Valid(p) {
		t.Fatalf("long path stored as %d bytes %q...", len(p), p[:10])
	}

	// Pruning keeps entries at or after the cutoff.
	n, err := st.PruneProxyCalls(ctx, start.Add(3*time.Second))
	if err != nil || n != 3 {
		t.Fatalf("PruneProxyCalls = %d, %v; want 3", n, err)
	}
	if got, _ := st.ProxyCalls(ctx, store.ProxyCallFilter{}); len(got) != 5 {
		t.Fatalf("after pruning %d entries, want 5", len(got))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
