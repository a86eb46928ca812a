package sqlstore

import (
	"context"
	"fmt"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// defaultResealBatch is ResealConnections' batch size when given none.
const defaultResealBatch = 100

const connectionCols = `id, tenant_id, user_id, integration, mode, sealed, sealed_refresh, key_id,
	expires_at, status, reason, created_at, updated_at`

func scanConnection(s scanner) (store.Connection, error) {
	var c store.Connection
	err := s.Scan(&c.ID, &c.TenantID, &c.UserID, &c.Integration, &c.Mode, &c.Sealed, &c.SealedRefresh, &c.KeyID,
		timeCol{&c.ExpiresAt}, &c.Status, &c.Reason, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt})
	if len(c.SealedRefresh) == 0 {
		c.SealedRefresh = nil
	}
	return c, err
}

// PutConnection implements store.Store.
func (db *DB) PutConnection(ctx context.Context, c store.Connection) (store.Connection, error) {
	if err := store.CheckConnection(&c); err != nil {
		return store.Connection{}, err
	}
	return db.putConnection(ctx, db.write, c)
}

// putConnection upserts a checked connection through q (the database or a
// transaction).
func (db *DB) putConnection(ctx context.Context, q queryRower, c store.Connection) (store.Connection, error) {
	now := db.now()
	var refresh any
	if len(c.SealedRefresh) > 0 {
		refresh = c.SealedRefresh
	}
	tenant, err := db.tenantOf(ctx, q, c.UserID)
	if err != nil {
		return store.Connection{}, err
	}
	out, err := scanConnection(q.QueryRowContext(ctx, db.q(`INSERT INTO connections (id, tenant_id, user_id, integration, mode,
			sealed, sealed_refresh, key_id, expires_at, status, reason, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, integration) DO UPDATE SET
			mode = excluded.mode, sealed = excluded.sealed, sealed_refresh = excluded.sealed_refresh,
			key_id = excluded.key_id, expires_at = excluded.expires_at, status = excluded.status,
			reason = excluded.reason, updated_at = excluded.updated_at
		RETURNING `+connectionCols),
		store.NewID(store.PrefixConnection), tenant, c.UserID, c.Integration, c.Mode, c.Sealed, refresh, c.KeyID,
		db.t(c.ExpiresAt), string(c.Status), c.Reason, db.t(now), db.t(now)))
	if err != nil {
		return store.Connection{}, db.fail(fmt.Sprintf("storing %q connection of user %q", c.Integration, c.UserID), err)
	}
	return out, nil
}

// Connection implements store.Store.
func (db *DB) Connection(ctx context.Context, userID, integration string) (store.Connection, error) {
	c, err := scanConnection(db.read.QueryRowContext(ctx, db.q(`SELECT `+connectionCols+` FROM connections
		WHERE user_id = ? AND integration = ?`), userID, integration))
	if err != nil {
		return store.Connection{}, db.fail(fmt.Sprintf("%q connection of user %q", integration, userID), err)
	}
	return c, nil
}

// Connections implements store.Store.
func (db *DB) Connections(ctx context.Context, userID string) ([]store.Connection, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+connectionCols+` FROM connections WHERE user_id = ? ORDER BY integration`), userID)
	if err != nil {
		return nil, db.fail("listing connections", err)
	}
	defer rows.Close()
	var out []store.Connection
	for rows.Next() {
		c, err := scanConnection(rows)
		if err != nil {
			return nil, db.fail("listing connections", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing connections", err)
	}
	return out, nil
}

// SetConnectionStatus implements store.Store.
func (db *DB) SetConnectionStatus(ctx context.Context, userID, integration string, status store.ConnectionStatus, reason string) error {
	if err := store.CheckConnectionStatus(status); err != nil {
		return err
	}
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE connections SET status = ?, reason = ?, updated_at = ?
		WHERE user_id = ? AND integration = ?`),
		string(status), store.TrimReason(reason), db.t(db.now()), userID, integration)
	if err != nil {
		return db.fail("setting connection status", err)
	}
	return db.affected(res, fmt.Sprintf("setting status of %q connection of user %q", integration, userID))
}

// DeleteConnection implements store.Store.
func (db *DB) DeleteConnection(ctx context.Context, userID, integration string) error {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM connections WHERE user_id = ? AND integration = ?`), userID, integration)
	if err != nil {
		return db.fail("deleting connection", err)
	}
	return db.affected(res, fmt.Sprintf("deleting %q connection of user %q", integration, userID))
}

// ResealConnections implements store.Store.
func (db *DB) ResealConnections(ctx context.Context, keyID string, batch int, reseal func(store.Connection) (store.Connection, error)) (int, error) {
	if err := store.CheckIdent("key id", keyID); err != nil {
		return 0, err
	}
	if batch <= 0 {
		batch = defaultResealBatch
	}
	done, after := 0, ""
	for {
		page, err := db.connectionsNotUnder(ctx, keyID, after, batch)
		if err != nil {
			return done, err
		}
		for _, c := range page {
			next, err := reseal(c)
			if err != nil {
				return done, fmt.Errorf("store: resealing connection %q: %w", c.ID, err)
			}
			if next.KeyID != keyID || len(next.Sealed) == 0 || len(next.Sealed) > store.MaxSealedLen || len(next.SealedRefresh) > store.MaxSealedLen {
				return done, fmt.Errorf("%w: resealing connection %q gave key %q, want %q with a sealed credential", store.ErrInvalid, c.ID, next.KeyID, keyID)
			}
			var refresh any
			if len(next.SealedRefresh) > 0 {
				refresh = next.SealedRefresh
			}
			// Compare-and-set: a row rewritten since it was read (a token
			// refresh) is already under a current key and is left alone.
			res, err := db.write.ExecContext(ctx, db.q(`UPDATE connections SET sealed = ?, sealed_refresh = ?, key_id = ?
				WHERE id = ? AND key_id = ? AND updated_at = ?`),
				next.Sealed, refresh, keyID, c.ID, c.KeyID, db.t(c.UpdatedAt))
			if err != nil {
				return done, db.fail("resealing connection", err)
			}
			n, err := db.count(res, "resealing connection")
			if err != nil {
				return done, err
			}
			done += n
		}
		if len(page) < batch {
			return done, nil
		}
		after = page[len(page)-1].ID
	}
}

// connectionsNotUnder returns up to limit connections not sealed under keyID
// with ids after the given one, in id order.
func (db *DB) connectionsNotUnder(ctx context.Context, keyID, after string, limit int) ([]store.Connection, error) {
	rows, err := db.read.QueryContext(ctx, db.q(`SELECT `+connectionCols+` FROM connections
		WHERE key_id <> ? AND id > ? ORDER BY id LIMIT ?`), keyID, after, limit)
	if err != nil {
		return nil, db.fail("listing connections to reseal", err)
	}
	defer rows.Close()
	var out []store.Connection
	for rows.Next() {
		c, err := scanConnection(rows)
		if err != nil {
			return nil, db.fail("listing connections to reseal", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing connections to reseal", err)
	}
	return out, nil
}
