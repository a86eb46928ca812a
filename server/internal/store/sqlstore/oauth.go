package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// CreateOAuthClient implements store.Store.
func (db *DB) CreateOAuthClient(ctx context.Context, nc store.NewOAuthClient) (store.OAuthClient, error) {
	if err := store.CheckNewOAuthClient(nc); err != nil {
		return store.OAuthClient{}, err
	}
	c := store.OAuthClient{ID: store.NewID(store.PrefixOAuthClient), Name: nc.Name,
		RedirectURIs: append([]string(nil), nc.RedirectURIs...), CreatedAt: db.now()}
	_, err := db.write.ExecContext(ctx, db.q(`INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)`),
		c.ID, c.Name, strings.Join(c.RedirectURIs, "\n"), db.t(c.CreatedAt))
	if err != nil {
		return store.OAuthClient{}, db.fail("registering an OAuth client", err)
	}
	return c, nil
}

// OAuthClient implements store.Store.
func (db *DB) OAuthClient(ctx context.Context, id string) (store.OAuthClient, error) {
	var c store.OAuthClient
	var uris string
	err := db.read.QueryRowContext(ctx, db.q(`SELECT id, name, redirect_uris, created_at FROM oauth_clients WHERE id = ?`), id).
		Scan(&c.ID, &c.Name, &uris, timeCol{&c.CreatedAt})
	if err != nil {
		return store.OAuthClient{}, db.fail(fmt.Sprintf("OAuth client %q", id), err)
	}
	c.RedirectURIs = strings.Split(uris, "\n")
	return c, nil
}

const oauthTokenCols = `hash, kind, tenant_id, user_id, client_id, resource, redirect_uri, code_challenge, created_at, expires_at, used_at`

func scanOAuthToken(s scanner) (store.OAuthToken, error) {
	var t store.OAuthToken
	var kind string
	err := s.Scan(&t.Hash, &kind, &t.TenantID, &t.UserID, &t.ClientID, &t.Resource, &t.RedirectURI, &t.CodeChallenge,
		timeCol{&t.CreatedAt}, timeCol{&t.ExpiresAt}, timeCol{&t.UsedAt})
	t.Kind = store.OAuthTokenKind(kind)
	return t, err
}

// CreateOAuthToken implements store.Store.
func (db *DB) CreateOAuthToken(ctx context.Context, nt store.NewOAuthToken) (store.OAuthToken, error) {
	if err := store.CheckNewOAuthToken(&nt); err != nil {
		return store.OAuthToken{}, err
	}
	t := store.OAuthToken{Hash: nt.Hash, Kind: nt.Kind, UserID: nt.UserID, ClientID: nt.ClientID, Resource: nt.Resource,
		RedirectURI: nt.RedirectURI, CodeChallenge: nt.CodeChallenge, CreatedAt: db.now(), ExpiresAt: nt.ExpiresAt}
	var err error
	if t.TenantID, err = db.tenantOf(ctx, db.read, t.UserID); err != nil {
		return store.OAuthToken{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO oauth_tokens (hash, kind, tenant_id, user_id, client_id, resource,
		redirect_uri, code_challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		t.Hash, string(t.Kind), t.TenantID, t.UserID, t.ClientID, t.Resource, t.RedirectURI, t.CodeChallenge,
		db.t(t.CreatedAt), db.t(t.ExpiresAt))
	if err != nil {
		return store.OAuthToken{}, db.fail(fmt.Sprintf("creating OAuth %s for user %q and client %q", nt.Kind, nt.UserID, nt.ClientID), err)
	}
	return t, nil
}

// OAuthToken implements store.Store.
func (db *DB) OAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error) {
	if err := store.CheckHash("OAuth token hash", hash); err != nil {
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s: %w", kind, store.ErrNotFound)
	}
	t, err := scanOAuthToken(db.read.QueryRowContext(ctx, db.q(`SELECT `+oauthTokenCols+` FROM oauth_tokens
		WHERE hash = ? AND kind = ? AND used_at IS NULL AND expires_at > ?`), hash, string(kind), db.t(db.now())))
	if err != nil {
		return store.OAuthToken{}, db.fail(fmt.Sprintf("OAuth %s (unknown, used or expired)", kind), err)
	}
	return t, nil
}

// ConsumeOAuthToken implements store.Store.
func (db *DB) ConsumeOAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error) {
	if err := store.CheckHash("OAuth token hash", hash); err != nil {
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s: %w", kind, store.ErrNotFound)
	}
	now := db.now()
	t, err := scanOAuthToken(db.write.QueryRowContext(ctx, db.q(`UPDATE oauth_tokens SET used_at = ?
		WHERE hash = ? AND kind = ? AND used_at IS NULL
		RETURNING `+oauthTokenCols), db.t(now), hash, string(kind)))
	if err != nil {
		return store.OAuthToken{}, db.fail(fmt.Sprintf("OAuth %s (unknown or already used)", kind), err)
	}
	if !now.Before(t.ExpiresAt) {
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s of user %q: %w", kind, t.UserID, store.ErrExpired)
	}
	return t, nil
}

// PruneOAuthTokens implements store.Store.
func (db *DB) PruneOAuthTokens(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM oauth_tokens WHERE used_at IS NOT NULL OR expires_at <= ?`), db.t(db.now()))
	if err != nil {
		return 0, db.fail("pruning OAuth tokens", err)
	}
	return db.count(res, "pruning OAuth tokens")
}
