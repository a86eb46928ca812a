package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

const curlSessionCols = `id, tenant_id, user_id, integrations, prefix, created_at, expires_at, revoked_at`

func scanCurlSession(s scanner) (store.CurlSession, error) {
	var c store.CurlSession
	var names string
	err := s.Scan(&c.ID, &c.TenantID, &c.UserID, &names, &c.Prefix, timeCol{&c.CreatedAt}, timeCol{&c.ExpiresAt}, timeCol{&c.RevokedAt})
	c.Integrations = strings.Split(names, "\n")
	return c, err
}

// CreateCurlSession implements store.Store.
func (db *DB) CreateCurlSession(ctx context.Context, n store.NewCurlSession) (store.CurlSession, error) {
	if err := store.CheckNewCurlSession(&n); err != nil {
		return store.CurlSession{}, err
	}
	c := store.CurlSession{ID: store.NewID(store.PrefixCurlSession), UserID: n.UserID, Integrations: n.Integrations,
		Prefix: n.Prefix, CreatedAt: db.now(), ExpiresAt: n.ExpiresAt}
	var err error
	if c.TenantID, err = db.tenantOf(ctx, db.read, c.UserID); err != nil {
		return store.CurlSession{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO curl_sessions (id, token_hash, tenant_id, user_id, integrations, prefix,
		created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		c.ID, n.Hash, c.TenantID, c.UserID, strings.Join(c.Integrations, "\n"), c.Prefix, db.t(c.CreatedAt), db.t(c.ExpiresAt))
	if err != nil {
		return store.CurlSession{}, db.fail(fmt.Sprintf("creating a curl session for user %q", c.UserID), err)
	}
	return c, nil
}

// CurlSessionByHash implements store.Store.
func (db *DB) CurlSessionByHash(ctx context.Context, hash string) (store.CurlSession, error) {
	if err := store.CheckHash("curl token hash", hash); err != nil {
		return store.CurlSession{}, fmt.Errorf("store: curl session: %w", store.ErrNotFound)
	}
	c, err := scanCurlSession(db.read.QueryRowContext(ctx, db.q(`SELECT `+curlSessionCols+` FROM curl_sessions WHERE token_hash = ?`), hash))
	if err != nil {
		return store.CurlSession{}, db.fail("curl session (unknown token)", err)
	}
	return c, nil
}

// CurlSessions implements store.Store.
func (db *DB) CurlSessions(ctx context.Context, userID string) ([]store.CurlSession, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+curlSessionCols+` FROM curl_sessions WHERE user_id = ?
		ORDER BY created_at DESC, id DESC`), userID)
	if err != nil {
		return nil, db.fail(fmt.Sprintf("curl sessions of user %q", userID), err)
	}
	defer rows.Close()
	var out []store.CurlSession
	for rows.Next() {
		c, err := scanCurlSession(rows)
		if err != nil {
			return nil, db.fail(fmt.Sprintf("curl sessions of user %q", userID), err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(fmt.Sprintf("curl sessions of user %q", userID), err)
	}
	return out, nil
}

// RevokeCurlSession implements store.Store.
func (db *DB) RevokeCurlSession(ctx context.Context, userID, id string) error {
	doing := fmt.Sprintf("revoking curl session %q of user %q", id, userID)
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE curl_sessions SET revoked_at = COALESCE(revoked_at, ?)
		WHERE id = ? AND user_id = ?`), db.t(db.now()), id, userID)
	if err != nil {
		return db.fail(doing, err)
	}
	return db.affected(res, doing)
}

// PruneCurlSessions implements store.Store.
func (db *DB) PruneCurlSessions(ctx context.Context, cutoff time.Time) (int, error) {
	c := db.t(cutoff)
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM curl_sessions WHERE expires_at < ? OR revoked_at < ?`), c, c)
	if err != nil {
		return 0, db.fail("pruning curl sessions", err)
	}
	return db.count(res, "pruning curl sessions")
}

// RecordProxyCalls implements store.Store.
func (db *DB) RecordProxyCalls(ctx context.Context, calls []store.ProxyCall) error {
	for i := range calls {
		if err := store.CheckProxyCall(&calls[i]); err != nil {
			return err
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return db.inTx(ctx, "recording proxy calls", func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, db.q(`INSERT INTO proxy_calls (tenant_id, user_id, session_id, integration, method, path,
			status, bytes_in, bytes_out, duration_us, error, at)
			SELECT tenant_id, id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM users WHERE id = ?`))
		if err != nil {
			return db.fail("recording proxy calls", err)
		}
		defer stmt.Close()
		for _, c := range calls {
			_, err := stmt.ExecContext(ctx, c.SessionID, c.Integration, c.Method, c.Path, c.Status, c.BytesIn, c.BytesOut,
				c.Duration.Microseconds(), c.Error, db.t(c.At), c.UserID)
			if err != nil {
				return db.fail("recording proxy calls", err)
			}
		}
		return nil
	})
}

// ProxyCalls implements store.Store.
func (db *DB) ProxyCalls(ctx context.Context, f store.ProxyCallFilter) ([]store.ProxyCall, error) {
	if err := store.CheckProxyCallFilter(&f); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	for _, cond := range []struct {
		col string
		val string
	}{{"tenant_id", f.TenantID}, {"user_id", f.UserID}, {"integration", f.Integration}} {
		if cond.val != "" {
			where = append(where, cond.col+" = ?")
			args = append(args, cond.val)
		}
	}
	if f.BeforeID > 0 {
		where = append(where, "id < ?")
		args = append(args, f.BeforeID)
	}
	query := `SELECT id, tenant_id, user_id, session_id, integration, method, path, status, bytes_in, bytes_out,
		duration_us, error, at FROM proxy_calls`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT ?"
	args = append(args, f.Limit)
	rows, err := db.read.QueryContext(ctx, db.q(query), args...)
	if err != nil {
		return nil, db.fail("listing proxy calls", err)
	}
	defer rows.Close()
	var out []store.ProxyCall
	for rows.Next() {
		var c store.ProxyCall
		var us int64
		if err := rows.Scan(&c.ID, &c.TenantID, &c.UserID, &c.SessionID, &c.Integration, &c.Method, &c.Path, &c.Status,
			&c.BytesIn, &c.BytesOut, &us, &c.Error, timeCol{&c.At}); err != nil {
			return nil, db.fail("listing proxy calls", err)
		}
		c.Duration = time.Duration(us) * time.Microsecond
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing proxy calls", err)
	}
	return out, nil
}

// PruneProxyCalls implements store.Store.
func (db *DB) PruneProxyCalls(ctx context.Context, cutoff time.Time) (int, error) {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM proxy_calls WHERE at < ?`), db.t(cutoff))
	if err != nil {
		return 0, db.fail("pruning proxy calls", err)
	}
	return db.count(res, "pruning proxy calls")
}
