package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testOAuth checks OAuth client registration, client metadata documents,
// that codes and refresh tokens work once, access tokens until they expire,
// that a replay revokes the grant's family, and pruning.
func testOAuth(t *testing.T, h *harness) {
	testOAuthClientDocuments(t, h)
	testOAuthReplay(t, h)

	st := h.st
	alice := newUser(t, st, "alice@example.com")
	uris := []string{"https://app.example.com/cb", "http://127.0.0.1:8123/cb"}
	c, err := st.CreateOAuthClient(ctx, store.NewOAuthClient{Name: "Agent", RedirectURIs: uris})
	must(t, "CreateOAuthClient", err)
	got, err := st.OAuthClient(ctx, c.ID)
	must(t, "OAuthClient", err)
	if got.Name != "Agent" || !slices.Equal(got.RedirectURIs, uris) || !got.CreatedAt.Equal(h.clock.Now()) || len(c.ID) != 30 {
		t.Fatalf("OAuthClient = %+v", got)
	}
	_, err = st.OAuthClient(ctx, "oac_missing")
	wantErr(t, "unknown client", err, store.ErrNotFound)
	badClients := []struct {
		name string
		nc   store.NewOAuthClient
	}{
		{"no name", store.NewOAuthClient{RedirectURIs: uris}},
		{"no URIs", store.NewOAuthClient{Name: "x"}},
		{"newline", store.NewOAuthClient{Name: "x", RedirectURIs: []string{"https://a/\nhttps://b/"}}},
		{"empty URI", store.NewOAuthClient{Name: "x", RedirectURIs: []string{""}}},
		{"too many", store.NewOAuthClient{Name: "x", RedirectURIs: slices.Repeat([]string{"https://a/"}, store.MaxRedirectURIs+1)}},
	}
	for _, b := range badClients {
		_, err := st.CreateOAuthClient(ctx, b.nc)
		wantErr(t, "CreateOAuthClient "+b.name, err, store.ErrInvalid)
	}

	exp := h.clock.Now().Add(time.Minute)
	code := store.NewOAuthToken{Kind: store.OAuthCode, Hash: secrets.HashToken("code-1"), UserID: alice.ID, ClientID: c.ID,
		Resource: "https://wb.example.com/mcp", Family: "ogr_1", Scope: "mcp", RedirectURI: uris[0], CodeChallenge: "chal", ExpiresAt: exp}
	ct, err := st.CreateOAuthToken(ctx, code)
	must(t, "CreateOAuthToken code", err)
	if ct.TenantID != store.DefaultTenant || ct.Kind != store.OAuthCode || ct.Family != "ogr_1" || ct.Scope != "mcp" || !ct.CreatedAt.Equal(h.clock.Now()) {
		t.Fatalf("CreateOAuthToken = %+v", ct)
	}
	with := func(f func(*store.NewOAuthToken)) store.NewOAuthToken {
		n := code
		n.Hash = secrets.HashToken(time.Now().String())
		f(&n)
		return n
	}
	badTokens := []struct {
		name string
		nt   store.NewOAuthToken
		want error
	}{
		{"duplicate", code, store.ErrConflict},
		{"unknown user", with(func(n *store.NewOAuthToken) { n.UserID = "usr_missing" }), store.ErrNotFound},
		{"unknown client", with(func(n *store.NewOAuthToken) { n.ClientID = "oac_missing" }), store.ErrNotFound},
		{"bad kind", with(func(n *store.NewOAuthToken) { n.Kind = "id" }), store.ErrInvalid},
		{"malformed hash", with(func(n *store.NewOAuthToken) { n.Hash = "plain" }), store.ErrInvalid},
		{"no resource", with(func(n *store.NewOAuthToken) { n.Resource = "" }), store.ErrInvalid},
		{"code without challenge", with(func(n *store.NewOAuthToken) { n.CodeChallenge = "" }), store.ErrInvalid},
		{"no expiry", with(func(n *store.NewOAuthToken) { n.ExpiresAt = time.Time{} }), store.ErrInvalid},
		{"no family", with(func(n *store.NewOAuthToken) { n.Family = "" }), store.ErrInvalid},
		{"family with a space", with(func(n *store.NewOAuthToken) { n.Family = "ogr 1" }), store.ErrInvalid},
		{"long family", with(func(n *store.NewOAuthToken) { n.Family = strings.Repeat("f", 65) }), store.ErrInvalid},
		{"scope with a newline", with(func(n *store.NewOAuthToken) { n.Scope = "mcp\nadmin" }), store.ErrInvalid},
		{"long scope", with(func(n *store.NewOAuthToken) { n.Scope = strings.Repeat("s", store.MaxOAuthScopeLen+1) }), store.ErrInvalid},
	}
	for _, b := range badTokens {
		_, err := st.CreateOAuthToken(ctx, b.nt)
		wantErr(t, "CreateOAuthToken "+b.name, err, b.want)
	}

	// A code is used once; the wrong kind finds nothing.
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, code.Hash)
	wantErr(t, "code as refresh token", err, store.ErrNotFound)
	used, err := st.ConsumeOAuthToken(ctx, store.OAuthCode, code.Hash)
	must(t, "ConsumeOAuthToken", err)
	if used.CodeChallenge != "chal" || used.RedirectURI != uris[0] || used.Family != "ogr_1" || used.Scope != "mcp" || used.UsedAt.IsZero() {
		t.Fatalf("ConsumeOAuthToken = %+v", used)
	}
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, code.Hash)
	wantErr(t, "replayed code", err, store.ErrOAuthReplay)
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, "not a hash")
	wantErr(t, "malformed hash", err, store.ErrNotFound)

	// An access token is found until it expires; a late refresh token is
	// ErrExpired and used up.
	access := store.NewOAuthToken{Kind: store.OAuthAccess, Hash: secrets.HashToken("access-1"), UserID: alice.ID, ClientID: c.ID,
		Resource: code.Resource, Family: "ogr_2", Scope: "mcp", ExpiresAt: h.clock.Now().Add(time.Hour)}
	_, err = st.CreateOAuthToken(ctx, access)
	must(t, "CreateOAuthToken access", err)
	refresh := access
	refresh.Kind, refresh.Hash, refresh.ExpiresAt = store.OAuthRefresh, secrets.HashToken("refresh-1"), h.clock.Now().Add(30*time.Minute)
	_, err = st.CreateOAuthToken(ctx, refresh)
	must(t, "CreateOAuthToken refresh", err)
	if a, err := st.OAuthToken(ctx, store.OAuthAccess, access.Hash); err != nil || a.UserID != alice.ID || a.Resource != code.Resource {
		t.Fatalf("OAuthToken = %+v, %v", a, err)
	}
	_, err = st.OAuthToken(ctx, store.OAuthRefresh, access.Hash)
	wantErr(t, "access token as refresh", err, store.ErrNotFound)
	h.clock.Advance(30 * time.Minute)
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh.Hash)
	wantErr(t, "expired refresh", err, store.ErrExpired)
	must(t, "OAuthToken before expiry", func() error { _, err := st.OAuthToken(ctx, store.OAuthAccess, access.Hash); return err }())
	h.clock.Advance(30 * time.Minute)
	_, err = st.OAuthToken(ctx, store.OAuthAccess, access.Hash)
	wantErr(t, "expired access", err, store.ErrNotFound)

	// Pruning removes the expired access token and refresh token and keeps
	// the live one; the used code stays until it expires, so a late replay
	// is still recognised.
	live := access
	live.Hash, live.ExpiresAt = secrets.HashToken("access-2"), h.clock.Now().Add(time.Hour)
	_, err = st.CreateOAuthToken(ctx, live)
	must(t, "CreateOAuthToken live", err)
	usedCode := code
	usedCode.Hash, usedCode.Family, usedCode.ExpiresAt = secrets.HashToken("code-2"), "ogr_3", h.clock.Now().Add(time.Minute)
	_, err = st.CreateOAuthToken(ctx, usedCode)
	must(t, "CreateOAuthToken code-2", err)
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, usedCode.Hash)
	must(t, "ConsumeOAuthToken code-2", err)
	n, err := st.PruneOAuthTokens(ctx)
	if err != nil || n != 3 { // the first code, access-1 and refresh-1
		t.Fatalf("PruneOAuthTokens = %d, %v; want 3", n, err)
	}
	must(t, "live token after pruning", func() error { _, err := st.OAuthToken(ctx, store.OAuthAccess, live.Hash); return err }())
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, usedCode.Hash)
	wantErr(t, "used code replayed after pruning", err, store.ErrOAuthReplay)
	h.clock.Advance(time.Minute)
	if n, err := st.PruneOAuthTokens(ctx); err != nil || n != 1 {
		t.Fatalf("PruneOAuthTokens after the code expired = %d, %v; want 1", n, err)
	}
}

// testOAuthClientDocuments checks clients identified by the URL of their
// client ID metadata document.
func testOAuthClientDocuments(t *testing.T, h *harness) {
	st := h.st
	id := "https://app.example.com/oauth/client.json"
	doc := store.OAuthClient{ID: id, Name: "Doc Agent", RedirectURIs: []string{"http://127.0.0.1:7000/cb"}}
	put, err := st.PutOAuthClientDocument(ctx, doc)
	must(t, "PutOAuthClientDocument", err)
	created := h.clock.Now()
	if put.ID != id || put.Name != "Doc Agent" || !put.CreatedAt.Equal(created) {
		t.Fatalf("PutOAuthClientDocument = %+v", put)
	}
	h.clock.Advance(time.Minute)
	doc.Name, doc.RedirectURIs = "Doc Agent 2", []string{"https://app.example.com/cb", "http://127.0.0.1:7000/cb"}
	put, err = st.PutOAuthClientDocument(ctx, doc)
	must(t, "PutOAuthClientDocument again", err)
	got, err := st.OAuthClient(ctx, id)
	must(t, "OAuthClient document", err)
	if got.Name != "Doc Agent 2" || !slices.Equal(got.RedirectURIs, doc.RedirectURIs) || !got.CreatedAt.Equal(created) || !put.CreatedAt.Equal(created) {
		t.Fatalf("OAuthClient after an update = %+v (put %+v)", got, put)
	}
	bad := []struct {
		name string
		c    store.OAuthClient
	}{
		{"registered id", store.OAuthClient{ID: "oac_abc", Name: "x", RedirectURIs: doc.RedirectURIs}},
		{"ftp URL", store.OAuthClient{ID: "ftp://app.example.com/c", Name: "x", RedirectURIs: doc.RedirectURIs}},
		{"newline", store.OAuthClient{ID: "https://app.example.com/c\n", Name: "x", RedirectURIs: doc.RedirectURIs}},
		{"long URL", store.OAuthClient{ID: "https://app.example.com/" + strings.Repeat("c", store.MaxRedirectURILen), Name: "x", RedirectURIs: doc.RedirectURIs}},
		{"no name", store.OAuthClient{ID: id, RedirectURIs: doc.RedirectURIs}},
		{"no redirect URIs", store.OAuthClient{ID: id, Name: "x"}},
	}
	for _, b := range bad {
		_, err := st.PutOAuthClientDocument(ctx, b.c)
		wantErr(t, "PutOAuthClientDocument "+b.name, err, store.ErrInvalid)
	}
}

// testOAuthReplay checks that replaying a rotated refresh token revokes
// every credential of its grant and only of its grant.
func testOAuthReplay(t *testing.T, h *harness) {
	st := h.st
	bob := newUser(t, st, "bob@example.com")
	c, err := st.CreateOAuthClient(ctx, store.NewOAuthClient{Name: "Agent", RedirectURIs: []string{"https://app.example.com/cb"}})
	must(t, "CreateOAuthClient", err)
	n := 0
	issue := func(kind store.OAuthTokenKind, family string) string {
		t.Helper()
		n++
		hash := secrets.HashToken(fmt.Sprintf("replay-%s-%d", kind, n))
		_, err := st.CreateOAuthToken(ctx, store.NewOAuthToken{Kind: kind, Hash: hash, UserID: bob.ID, ClientID: c.ID,
			Resource: "https://wb.example.com/mcp", Family: family, Scope: "mcp", RedirectURI: "https://app.example.com/cb",
			CodeChallenge: "chal", ExpiresAt: h.clock.Now().Add(48 * time.Hour)})
		must(t, "CreateOAuthToken "+string(kind), err)
		return hash
	}
	live := func(kind store.OAuthTokenKind, hash string) bool {
		_, err := st.OAuthToken(ctx, kind, hash)
		return err == nil
	}
	// Grant ogr_a: a code, then two rotations. Grant ogr_b: another login.
	code := issue(store.OAuthCode, "ogr_a")
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, code)
	must(t, "code", err)
	access1, refresh1 := issue(store.OAuthAccess, "ogr_a"), issue(store.OAuthRefresh, "ogr_a")
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh1)
	must(t, "refresh1", err)
	access2, refresh2 := issue(store.OAuthAccess, "ogr_a"), issue(store.OAuthRefresh, "ogr_a")
	otherAccess, otherRefresh := issue(store.OAuthAccess, "ogr_b"), issue(store.OAuthRefresh, "ogr_b")
	if !live(store.OAuthAccess, access1) || !live(store.OAuthAccess, access2) || !live(store.OAuthRefresh, refresh2) {
		t.Fatal("the grant's tokens are not live before the replay")
	}

	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh1)
	wantErr(t, "replayed refresh token", err, store.ErrOAuthReplay)
	wantErr(t, "replayed refresh token", err, store.ErrNotFound)
	for name, tok := range map[string]string{"access1": access1, "access2": access2} {
		if live(store.OAuthAccess, tok) {
			t.Errorf("%s is live after the replay", name)
		}
	}
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh2)
	wantErr(t, "refresh2 after the replay", err, store.ErrNotFound)
	if errors.Is(err, store.ErrOAuthReplay) {
		t.Errorf("a revoked (never used) refresh token counts as a replay: %v", err)
	}
	_, err = st.CreateOAuthToken(ctx, store.NewOAuthToken{Kind: store.OAuthAccess, Hash: secrets.HashToken("late"), UserID: bob.ID,
		ClientID: c.ID, Resource: "https://wb.example.com/mcp", Family: "ogr_a", Scope: "mcp", ExpiresAt: h.clock.Now().Add(time.Hour)})
	wantErr(t, "a new token of a revoked grant", err, store.ErrConflict)
	if !live(store.OAuthAccess, otherAccess) || !live(store.OAuthRefresh, otherRefresh) {
		t.Error("the replay revoked another grant's tokens")
	}
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh1)
	wantErr(t, "second replay", err, store.ErrNotFound)
}

// testOAuthClientExpiry checks that issuing an access token marks its
// client granted, and that only clients never granted, created before the
// cutoff and holding no credential are deleted.
func testOAuthClientExpiry(t *testing.T, h *harness) {
	st := h.st
	carol := newUser(t, st, "carol@example.com")
	uris := []string{"https://app.example.com/cb"}
	register := func(name string) store.OAuthClient {
		t.Helper()
		c, err := st.CreateOAuthClient(ctx, store.NewOAuthClient{Name: name, RedirectURIs: uris})
		must(t, "CreateOAuthClient "+name, err)
		return c
	}
	issue := func(c store.OAuthClient, kind store.OAuthTokenKind, raw string) {
		t.Helper()
		_, err := st.CreateOAuthToken(ctx, store.NewOAuthToken{Kind: kind, Hash: secrets.HashToken(raw), UserID: carol.ID, ClientID: c.ID,
			Resource: "https://wb.example.com/mcp", Family: "ogr_" + raw, Scope: "mcp", RedirectURI: uris[0], CodeChallenge: "chal",
			ExpiresAt: h.clock.Now().Add(48 * time.Hour)})
		must(t, "CreateOAuthToken "+raw, err)
	}
	abandoned := register("Abandoned")
	granted := register("Granted")
	pending := register("Pending") // holds a code it has not exchanged yet
	doc, err := st.PutOAuthClientDocument(ctx, store.OAuthClient{ID: "https://expiry.example.com/client.json", Name: "Doc",
		RedirectURIs: uris})
	must(t, "PutOAuthClientDocument", err)
	issue(pending, store.OAuthCode, "expiry-code")
	if c, _ := st.OAuthClient(ctx, pending.ID); !c.GrantedAt.IsZero() {
		t.Fatalf("a code marked its client granted: %+v", c)
	}
	h.clock.Advance(time.Hour)
	grantedAt := h.clock.Now()
	issue(granted, store.OAuthAccess, "expiry-access-1")
	h.clock.Advance(time.Hour)
	issue(granted, store.OAuthAccess, "expiry-access-2")
	if c, err := st.OAuthClient(ctx, granted.ID); err != nil || !c.GrantedAt.Equal(grantedAt) {
		t.Fatalf("OAuthClient after two access tokens = %+v, %v; want GrantedAt %v (the first)", c, err, grantedAt)
	}
	if n, err := st.CountOAuthClients(ctx); err != nil || n != 4 {
		t.Fatalf("CountOAuthClients = %d, %v; want 4", n, err)
	}

	h.clock.Advance(23 * time.Hour)
	fresh := register("Fresh")
	cutoff := h.clock.Now().Add(-24 * time.Hour)
	n, err := st.DeleteUngrantedOAuthClients(ctx, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("DeleteUngrantedOAuthClients = %d, %v; want 2 (the abandoned and the document client)", n, err)
	}
	for _, c := range []store.OAuthClient{abandoned, doc} {
		_, err := st.OAuthClient(ctx, c.ID)
		wantErr(t, "deleted client "+c.Name, err, store.ErrNotFound)
	}
	for _, c := range []store.OAuthClient{granted, pending, fresh} {
		must(t, "kept client "+c.Name, func() error { _, err := st.OAuthClient(ctx, c.ID); return err }())
	}
	if n, err := st.CountOAuthClients(ctx); err != nil || n != 3 {
		t.Fatalf("CountOAuthClients after deleting = %d, %v; want 3", n, err)
	}
	if n, err := st.DeleteUngrantedOAuthClients(ctx, cutoff); err != nil || n != 0 {
		t.Fatalf("DeleteUngrantedOAuthClients again = %d, %v; want 0", n, err)
	}
}
