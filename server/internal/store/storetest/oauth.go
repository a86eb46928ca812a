package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// testOAuth checks OAuth client registration and that codes and refresh
// tokens work once, access tokens until they expire, and pruning.
func testOAuth(t *testing.T, h *harness) {
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
		Resource: "https://wb.example.com/mcp", RedirectURI: uris[0], CodeChallenge: "chal", ExpiresAt: exp}
	ct, err := st.CreateOAuthToken(ctx, code)
	must(t, "CreateOAuthToken code", err)
	if ct.TenantID != store.DefaultTenant || ct.Kind != store.OAuthCode || !ct.CreatedAt.Equal(h.clock.Now()) {
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
	if used.CodeChallenge != "chal" || used.RedirectURI != uris[0] || used.UsedAt.IsZero() {
		t.Fatalf("ConsumeOAuthToken = %+v", used)
	}
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, code.Hash)
	wantErr(t, "replayed code", err, store.ErrNotFound)
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthCode, "not a hash")
	wantErr(t, "malformed hash", err, store.ErrNotFound)

	// An access token is found until it expires; a late refresh token is
	// ErrExpired and used up.
	access := store.NewOAuthToken{Kind: store.OAuthAccess, Hash: secrets.HashToken("access-1"), UserID: alice.ID, ClientID: c.ID,
		Resource: code.Resource, ExpiresAt: h.clock.Now().Add(time.Hour)}
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
	_, err = st.ConsumeOAuthToken(ctx, store.OAuthRefresh, refresh.Hash)
	wantErr(t, "expired refresh again", err, store.ErrNotFound)
	must(t, "OAuthToken before expiry", func() error { _, err := st.OAuthToken(ctx, store.OAuthAccess, access.Hash); return err }())
	h.clock.Advance(30 * time.Minute)
	_, err = st.OAuthToken(ctx, store.OAuthAccess, access.Hash)
	wantErr(t, "expired access", err, store.ErrNotFound)

	// Pruning removes the used code, the used refresh token and the expired
	// access token, and keeps a live one.
	live := access
	live.Hash, live.ExpiresAt = secrets.HashToken("access-2"), h.clock.Now().Add(time.Hour)
	_, err = st.CreateOAuthToken(ctx, live)
	must(t, "CreateOAuthToken live", err)
	n, err := st.PruneOAuthTokens(ctx)
	if err != nil || n != 3 {
		t.Fatalf("PruneOAuthTokens = %d, %v; want 3", n, err)
	}
	must(t, "live token after pruning", func() error { _, err := st.OAuthToken(ctx, store.OAuthAccess, live.Hash); return err }())
}
