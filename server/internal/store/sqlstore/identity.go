package sqlstore

import (
	"context"
	"fmt"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// maxPasswordHashLen caps a stored password hash.
const maxPasswordHashLen = 512

// CreateTenant implements store.Store.
func (db *DB) CreateTenant(ctx context.Context, name string) (store.Tenant, error) {
	if err := store.CheckName("tenant", name); err != nil {
		return store.Tenant{}, err
	}
	t := store.Tenant{ID: store.NewID(store.PrefixTenant), Name: name, CreatedAt: db.now()}
	_, err := db.write.ExecContext(ctx, db.q(`INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)`),
		t.ID, t.Name, db.t(t.CreatedAt))
	if err != nil {
		return store.Tenant{}, db.fail("creating tenant", err)
	}
	return t, nil
}

// Tenant implements store.Store.
func (db *DB) Tenant(ctx context.Context, id string) (store.Tenant, error) {
	var t store.Tenant
	err := db.read.QueryRowContext(ctx, db.q(`SELECT id, name, created_at FROM tenants WHERE id = ?`), id).
		Scan(&t.ID, &t.Name, timeCol{&t.CreatedAt})
	if err != nil {
		return store.Tenant{}, db.fail(fmt.Sprintf("tenant %q", id), err)
	}
	return t, nil
}

const userCols = `id, tenant_id, email, is_admin, created_at`

func scanUser(s scanner) (store.User, error) {
	var u store.User
	err := s.Scan(&u.ID, &u.TenantID, &u.Email, &u.IsAdmin, timeCol{&u.CreatedAt})
	return u, err
}

// CreateUser implements store.Store.
func (db *DB) CreateUser(ctx context.Context, nu store.NewUser) (store.User, error) {
	key, err := store.CheckNewUser(&nu)
	if err != nil {
		return store.User{}, err
	}
	if len(nu.PasswordHash) > maxPasswordHashLen {
		return store.User{}, fmt.Errorf("%w: password hash is longer than %d bytes", store.ErrInvalid, maxPasswordHashLen)
	}
	u := store.User{ID: store.NewID(store.PrefixUser), TenantID: nu.TenantID, Email: nu.Email, IsAdmin: nu.IsAdmin, CreatedAt: db.now()}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO users (id, tenant_id, email, email_key, password_hash, is_admin, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`),
		u.ID, u.TenantID, u.Email, key, nu.PasswordHash, u.IsAdmin, db.t(u.CreatedAt))
	switch {
	case err != nil && db.dialect.IsForeignKey(err):
		return store.User{}, fmt.Errorf("store: creating user: tenant %q: %w", u.TenantID, store.ErrNotFound)
	case err != nil && db.dialect.IsUnique(err):
		return store.User{}, fmt.Errorf("store: creating user: email %q is already used in tenant %q: %w", u.Email, u.TenantID, store.ErrConflict)
	case err != nil:
		return store.User{}, db.fail("creating user", err)
	}
	return u, nil
}

// User implements store.Store.
func (db *DB) User(ctx context.Context, userID string) (store.User, error) {
	u, err := scanUser(db.read.QueryRowContext(ctx, db.q(`SELECT `+userCols+` FROM users WHERE id = ?`), userID))
	if err != nil {
		return store.User{}, db.fail(fmt.Sprintf("user %q", userID), err)
	}
	return u, nil
}

// UserByEmail implements store.Store.
func (db *DB) UserByEmail(ctx context.Context, tenantID, email string) (store.User, error) {
	_, key, err := store.NormalizeEmail(email)
	if err != nil {
		return store.User{}, err
	}
	u, err := scanUser(db.read.QueryRowContext(ctx, db.q(`SELECT `+userCols+` FROM users WHERE tenant_id = ? AND email_key = ?`), tenantID, key))
	if err != nil {
		return store.User{}, db.fail(fmt.Sprintf("user with email %q in tenant %q", email, tenantID), err)
	}
	return u, nil
}

// Users implements store.Store.
func (db *DB) Users(ctx context.Context, tenantID string) ([]store.User, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+userCols+` FROM users WHERE tenant_id = ? ORDER BY created_at, id`), tenantID)
	if err != nil {
		return nil, db.fail("listing users", err)
	}
	defer rows.Close()
	var out []store.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, db.fail("listing users", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing users", err)
	}
	return out, nil
}

// CountUsers implements store.Store.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, db.fail("counting users", err)
	}
	return n, nil
}

// PasswordHash implements store.Store.
func (db *DB) PasswordHash(ctx context.Context, userID string) (string, error) {
	var h string
	if err := db.read.QueryRowContext(ctx, db.q(`SELECT password_hash FROM users WHERE id = ?`), userID).Scan(&h); err != nil {
		return "", db.fail(fmt.Sprintf("password of user %q", userID), err)
	}
	return h, nil
}

// SetPasswordHash implements store.Store.
func (db *DB) SetPasswordHash(ctx context.Context, userID, hash string) error {
	if len(hash) > maxPasswordHashLen {
		return fmt.Errorf("%w: password hash is longer than %d bytes", store.ErrInvalid, maxPasswordHashLen)
	}
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE users SET password_hash = ? WHERE id = ?`), hash, userID)
	if err != nil {
		return db.fail("setting password", err)
	}
	return db.affected(res, fmt.Sprintf("setting password of user %q", userID))
}

const tokenCols = `id, tenant_id, user_id, name, prefix, created_at, last_used_at, revoked_at`

func scanToken(s scanner) (store.Token, error) {
	var t store.Token
	err := s.Scan(&t.ID, &t.TenantID, &t.UserID, &t.Name, &t.Prefix, timeCol{&t.CreatedAt}, timeCol{&t.LastUsedAt}, timeCol{&t.RevokedAt})
	return t, err
}

// CreateToken implements store.Store.
func (db *DB) CreateToken(ctx context.Context, nt store.NewToken) (store.Token, error) {
	if err := store.CheckNewToken(nt); err != nil {
		return store.Token{}, err
	}
	t := store.Token{ID: store.NewID(store.PrefixToken), UserID: nt.UserID, Name: nt.Name, Prefix: nt.Prefix, CreatedAt: db.now()}
	var err error
	if t.TenantID, err = db.tenantOf(ctx, db.read, t.UserID); err != nil {
		return store.Token{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO api_tokens (id, tenant_id, user_id, name, hash, prefix, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`),
		t.ID, t.TenantID, t.UserID, t.Name, nt.Hash, t.Prefix, db.t(t.CreatedAt))
	if err != nil {
		return store.Token{}, db.fail(fmt.Sprintf("creating token for user %q", nt.UserID), err)
	}
	return t, nil
}

// TokenByHash implements store.Store.
func (db *DB) TokenByHash(ctx context.Context, hash string) (store.Token, error) {
	if err := store.CheckHash("token hash", hash); err != nil {
		return store.Token{}, err
	}
	t, err := scanToken(db.read.QueryRowContext(ctx, db.q(`SELECT `+tokenCols+` FROM api_tokens WHERE hash = ? AND revoked_at IS NULL`), hash))
	if err != nil {
		return store.Token{}, db.fail("token lookup", err)
	}
	now := db.now()
	if !t.LastUsedAt.IsZero() && now.Sub(t.LastUsedAt) < store.TokenUseInterval {
		return t, nil
	}
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE api_tokens SET last_used_at = ?
		WHERE id = ? AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= ?)`),
		db.t(now), t.ID, db.t(now.Add(-store.TokenUseInterval)))
	if err != nil {
		return store.Token{}, db.fail("recording token use", err)
	}
	if n, err := db.count(res, "recording token use"); err != nil {
		return store.Token{}, err
	} else if n == 1 {
		t.LastUsedAt = now
	}
	return t, nil
}

// Tokens implements store.Store.
func (db *DB) Tokens(ctx context.Context, userID string) ([]store.Token, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+tokenCols+` FROM api_tokens WHERE user_id = ? ORDER BY created_at, id`), userID)
	if err != nil {
		return nil, db.fail("listing tokens", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, db.fail("listing tokens", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing tokens", err)
	}
	return out, nil
}

// RevokeToken implements store.Store.
func (db *DB) RevokeToken(ctx context.Context, userID, tokenID string) error {
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND user_id = ?`),
		db.t(db.now()), tokenID, userID)
	if err != nil {
		return db.fail("revoking token", err)
	}
	return db.affected(res, fmt.Sprintf("revoking token %q of user %q", tokenID, userID))
}

const sessionCols = `id_hash, tenant_id, user_id, csrf_secret, created_at, expires_at`

// CreateSession implements store.Store.
func (db *DB) CreateSession(ctx context.Context, s store.Session) (store.Session, error) {
	if err := store.CheckSession(s); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.ExpiresAt = db.now(), store.Round(s.ExpiresAt)
	var err error
	if s.TenantID, err = db.tenantOf(ctx, db.read, s.UserID); err != nil {
		return store.Session{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO sessions (id_hash, tenant_id, user_id, csrf_secret, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`),
		s.IDHash, s.TenantID, s.UserID, s.CSRFSecret, db.t(s.CreatedAt), db.t(s.ExpiresAt))
	if err != nil {
		return store.Session{}, db.fail(fmt.Sprintf("creating session for user %q", s.UserID), err)
	}
	return s, nil
}

// SessionByHash implements store.Store.
func (db *DB) SessionByHash(ctx context.Context, idHash string) (store.Session, error) {
	var s store.Session
	err := db.read.QueryRowContext(ctx, db.q(`SELECT `+sessionCols+` FROM sessions WHERE id_hash = ? AND expires_at > ?`), idHash, db.t(db.now())).
		Scan(&s.IDHash, &s.TenantID, &s.UserID, &s.CSRFSecret, timeCol{&s.CreatedAt}, timeCol{&s.ExpiresAt})
	if err != nil {
		return store.Session{}, db.fail("session lookup", err)
	}
	return s, nil
}

// DeleteSession implements store.Store.
func (db *DB) DeleteSession(ctx context.Context, idHash string) error {
	if _, err := db.write.ExecContext(ctx, db.q(`DELETE FROM sessions WHERE id_hash = ?`), idHash); err != nil {
		return db.fail("deleting session", err)
	}
	return nil
}

// PruneSessions implements store.Store.
func (db *DB) PruneSessions(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM sessions WHERE expires_at <= ?`), db.t(db.now()))
	if err != nil {
		return 0, db.fail("pruning sessions", err)
	}
	return db.count(res, "pruning sessions")
}
