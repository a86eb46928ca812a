package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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
	err := db.read.QueryRowContext(ctx, db.q(`SELECT id, name, redirect_uris, created_at, granted_at FROM oauth_clients WHERE id = ?`), id).
		Scan(&c.ID, &c.Name, &uris, timeCol{&c.CreatedAt}, timeCol{&c.GrantedAt})
	if err != nil {
		return store.OAuthClient{}, db.fail(fmt.Sprintf("OAuth client %q", id), err)
	}
	c.RedirectURIs = strings.Split(uris, "\n")
	return c, nil
}

// PutOAuthClientDocument implements store.Store.
func (db *DB) PutOAuthClientDocument(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error) {
	if err := checkDocumentClientID(c.ID); err != nil {
		return store.OAuthClient{}, err
	}
	if err := store.CheckNewOAuthClient(store.NewOAuthClient{Name: c.Name, RedirectURIs: c.RedirectURIs}); err != nil {
		return store.OAuthClient{}, err
	}
	out := store.OAuthClient{ID: c.ID, Name: c.Name, RedirectURIs: append([]string(nil), c.RedirectURIs...)}
	err := db.write.QueryRowContext(ctx, db.q(`INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris
		RETURNING created_at, granted_at`), c.ID, c.Name, strings.Join(c.RedirectURIs, "\n"), db.t(db.now())).
		Scan(timeCol{&out.CreatedAt}, timeCol{&out.GrantedAt})
	if err != nil {
		return store.OAuthClient{}, db.fail(fmt.Sprintf("storing the OAuth client document %q", c.ID), err)
	}
	return out, nil
}

// CountOAuthClients implements store.Store.
func (db *DB) CountOAuthClients(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_clients`).Scan(&n); err != nil {
		return 0, db.fail("counting OAuth clients", err)
	}
	return n, nil
}

// DeleteUngrantedOAuthClients implements store.Store.
func (db *DB) DeleteUngrantedOAuthClients(ctx context.Context, createdBefore time.Time) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM oauth_clients WHERE granted_at IS NULL AND created_at < ?
		AND NOT EXISTS (SELECT 1 FROM oauth_tokens WHERE oauth_tokens.client_id = oauth_clients.id)`), db.t(createdBefore))
	if err != nil {
		return 0, db.fail("deleting ungranted OAuth clients", err)
	}
	return db.count(res, "deleting ungranted OAuth clients")
}

// checkDocumentClientID accepts an absolute http(s) URL of at most
// MaxRedirectURILen bytes on one line: never an "oac_" id, which registered
// clients own.
func checkDocumentClientID(id string) error {
	u, err := url.Parse(id)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(id) > store.MaxRedirectURILen ||
		strings.ContainsAny(id, "\r\n\x00") {
		return fmt.Errorf("%w: a client metadata document id must be an http(s) URL of at most %d characters", store.ErrInvalid, store.MaxRedirectURILen)
	}
	return nil
}

// maxFamilyLen caps an OAuth grant family id.
const maxFamilyLen = 64

// checkGrant validates the family and scope CheckNewOAuthToken leaves alone.
func checkGrant(nt store.NewOAuthToken) error {
	if nt.Family == "" || len(nt.Family) > maxFamilyLen || strings.ContainsFunc(nt.Family, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return fmt.Errorf("%w: OAuth %s needs a family id of 1 to %d printable ASCII characters", store.ErrInvalid, nt.Kind, maxFamilyLen)
	}
	if len(nt.Scope) > store.MaxOAuthScopeLen || strings.ContainsFunc(nt.Scope, func(r rune) bool { return r < ' ' || r > '~' }) {
		return fmt.Errorf("%w: OAuth %s scope must be at most %d printable ASCII characters", store.ErrInvalid, nt.Kind, store.MaxOAuthScopeLen)
	}
	return nil
}

const oauthTokenCols = `hash, kind, tenant_id, user_id, client_id, resource, family_id, scope, redirect_uri, code_challenge,
	created_at, expires_at, used_at, revoked_at`

func scanOAuthToken(s scanner) (store.OAuthToken, error) {
	var t store.OAuthToken
	var kind string
	err := s.Scan(&t.Hash, &kind, &t.TenantID, &t.UserID, &t.ClientID, &t.Resource, &t.Family, &t.Scope, &t.RedirectURI, &t.CodeChallenge,
		timeCol{&t.CreatedAt}, timeCol{&t.ExpiresAt}, timeCol{&t.UsedAt}, timeCol{&t.RevokedAt})
	t.Kind = store.OAuthTokenKind(kind)
	return t, err
}

// CreateOAuthToken implements store.Store.
func (db *DB) CreateOAuthToken(ctx context.Context, nt store.NewOAuthToken) (store.OAuthToken, error) {
	if err := store.CheckNewOAuthToken(&nt); err != nil {
		return store.OAuthToken{}, err
	}
	if err := checkGrant(nt); err != nil {
		return store.OAuthToken{}, err
	}
	t := store.OAuthToken{Hash: nt.Hash, Kind: nt.Kind, UserID: nt.UserID, ClientID: nt.ClientID, Resource: nt.Resource,
		Family: nt.Family, Scope: nt.Scope, RedirectURI: nt.RedirectURI, CodeChallenge: nt.CodeChallenge,
		CreatedAt: db.now(), ExpiresAt: nt.ExpiresAt}
	doing := fmt.Sprintf("creating OAuth %s for user %q and client %q", nt.Kind, nt.UserID, nt.ClientID)
	err := db.inTx(ctx, doing, func(tx *sql.Tx) error {
		var err error
		if t.TenantID, err = db.tenantOf(ctx, tx, t.UserID); err != nil {
			return err
		}
		// A family revoked by a replay stays revoked: a concurrent exchange
		// of the same family must not mint a live token after it.
		var revoked bool
		err = tx.QueryRowContext(ctx, db.q(`SELECT EXISTS (SELECT 1 FROM oauth_tokens WHERE family_id = ? AND revoked_at IS NOT NULL)`),
			t.Family).Scan(&revoked)
		if err != nil {
			return db.fail(doing, err)
		}
		if revoked {
			return fmt.Errorf("store: %s: the grant %q was revoked: %w", doing, t.Family, store.ErrConflict)
		}
		_, err = tx.ExecContext(ctx, db.q(`INSERT INTO oauth_tokens (hash, kind, tenant_id, user_id, client_id, resource,
			family_id, scope, redirect_uri, code_challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.Hash, string(t.Kind), t.TenantID, t.UserID, t.ClientID, t.Resource, t.Family, t.Scope, t.RedirectURI, t.CodeChallenge,
			db.t(t.CreatedAt), db.t(t.ExpiresAt))
		if err != nil {
			return db.fail(doing, err)
		}
		if t.Kind != store.OAuthAccess {
			return nil
		}
		_, err = tx.ExecContext(ctx, db.q(`UPDATE oauth_clients SET granted_at = ? WHERE id = ? AND granted_at IS NULL`),
			db.t(t.CreatedAt), t.ClientID)
		if err != nil {
			return db.fail(doing, err)
		}
		return nil
	})
	if err != nil {
		return store.OAuthToken{}, err
	}
	return t, nil
}

// OAuthToken implements store.Store.
func (db *DB) OAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error) {
	if err := store.CheckHash("OAuth token hash", hash); err != nil {
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s: %w", kind, store.ErrNotFound)
	}
	t, err := scanOAuthToken(db.read.QueryRowContext(ctx, db.q(`SELECT `+oauthTokenCols+` FROM oauth_tokens
		WHERE hash = ? AND kind = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?`), hash, string(kind), db.t(db.now())))
	if err != nil {
		return store.OAuthToken{}, db.fail(fmt.Sprintf("OAuth %s (unknown, used, revoked or expired)", kind), err)
	}
	return t, nil
}

// ConsumeOAuthToken implements store.Store.
func (db *DB) ConsumeOAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error) {
	if err := store.CheckHash("OAuth token hash", hash); err != nil {
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s: %w", kind, store.ErrNotFound)
	}
	now := db.now()
	doing := fmt.Sprintf("using an OAuth %s", kind)
	var (
		t       store.OAuthToken
		replay  bool // the credential was used before
		revoked int  // how many credentials the replay revoked
	)
	err := db.inTx(ctx, doing, func(tx *sql.Tx) error {
		var err error
		t, err = scanOAuthToken(tx.QueryRowContext(ctx, db.q(`UPDATE oauth_tokens SET used_at = ?
			WHERE hash = ? AND kind = ? AND used_at IS NULL AND revoked_at IS NULL
			RETURNING `+oauthTokenCols), db.t(now), hash, string(kind)))
		if !errors.Is(err, sql.ErrNoRows) {
			if err != nil {
				return db.fail(doing, err)
			}
			return nil
		}
		// Unknown, revoked, or used before: a replay revokes every
		// credential of its family.
		var family string
		var revokedAt time.Time
		err = tx.QueryRowContext(ctx, db.q(`SELECT family_id, revoked_at FROM oauth_tokens WHERE hash = ? AND kind = ?`),
			hash, string(kind)).Scan(&family, timeCol{&revokedAt})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("store: OAuth %s (unknown): %w", kind, store.ErrNotFound)
		case err != nil:
			return db.fail(doing, err)
		case !revokedAt.IsZero():
			return fmt.Errorf("store: OAuth %s (revoked): %w", kind, store.ErrNotFound)
		}
		res, err := tx.ExecContext(ctx, db.q(`UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL`),
			db.t(now), family)
		if err != nil {
			return db.fail("revoking a replayed OAuth grant", err)
		}
		replay = true
		revoked, err = db.count(res, "revoking a replayed OAuth grant")
		return err
	})
	switch {
	case err != nil:
		return store.OAuthToken{}, err
	case replay:
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s was already used; revoked the %d credentials of its grant: %w: %w",
			kind, revoked, store.ErrOAuthReplay, store.ErrNotFound)
	case !now.Before(t.ExpiresAt):
		return store.OAuthToken{}, fmt.Errorf("store: OAuth %s of user %q: %w", kind, t.UserID, store.ErrExpired)
	}
	return t, nil
}

// PruneOAuthTokens implements store.Store.
func (db *DB) PruneOAuthTokens(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM oauth_tokens WHERE expires_at <= ?`), db.t(db.now()))
	if err != nil {
		return 0, db.fail("pruning OAuth tokens", err)
	}
	return db.count(res, "pruning OAuth tokens")
}
