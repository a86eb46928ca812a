package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// expiredReason is the reason ExpirePending records.
const expiredReason = "the connection was not completed within its handshake window"

const pendingCols = `id, tenant_id, user_id, integration, mode, sealed_verifier, key_id, status, reason,
	created_at, expires_at, terminal_at`

func scanPending(s scanner) (store.PendingConnection, error) {
	var p store.PendingConnection
	err := s.Scan(&p.ID, &p.TenantID, &p.UserID, &p.Integration, &p.Mode, &p.SealedVerifier, &p.KeyID, &p.Status, &p.Reason,
		timeCol{&p.CreatedAt}, timeCol{&p.ExpiresAt}, timeCol{&p.TerminalAt})
	if len(p.SealedVerifier) == 0 {
		p.SealedVerifier = nil
	}
	return p, err
}

// CreatePending implements store.Store.
func (db *DB) CreatePending(ctx context.Context, np store.NewPending) (store.PendingConnection, error) {
	if err := store.CheckNewPending(&np); err != nil {
		return store.PendingConnection{}, err
	}
	p := store.PendingConnection{
		ID: store.NewID(store.PrefixPending), UserID: np.UserID, Integration: np.Integration, Mode: np.Mode,
		State: store.NewState(), SealedVerifier: np.SealedVerifier, KeyID: np.KeyID,
		Status: store.PendingWaiting, CreatedAt: db.now(), ExpiresAt: np.ExpiresAt,
	}
	if len(p.SealedVerifier) == 0 {
		p.SealedVerifier, p.KeyID = nil, ""
	}
	var verifier any
	if p.SealedVerifier != nil {
		verifier = p.SealedVerifier
	}
	var err error
	if p.TenantID, err = db.tenantOf(ctx, db.read, p.UserID); err != nil {
		return store.PendingConnection{}, err
	}
	_, err = db.write.ExecContext(ctx, db.q(`INSERT INTO pending_connections (id, tenant_id, user_id, integration, mode,
			state_hash, sealed_verifier, key_id, status, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		p.ID, p.TenantID, p.UserID, p.Integration, p.Mode, store.HashState(p.State), verifier, p.KeyID, string(p.Status),
		db.t(p.CreatedAt), db.t(p.ExpiresAt))
	if err != nil {
		return store.PendingConnection{}, db.fail(fmt.Sprintf("creating pending connection for user %q", np.UserID), err)
	}
	return p, nil
}

// Pending implements store.Store.
func (db *DB) Pending(ctx context.Context, userID, id string) (store.PendingConnection, error) {
	p, err := scanPending(db.read.QueryRowContext(ctx, db.q(`SELECT `+pendingCols+` FROM pending_connections
		WHERE id = ? AND user_id = ?`), id, userID))
	if err != nil {
		return store.PendingConnection{}, db.fail(fmt.Sprintf("pending connection %q of user %q", id, userID), err)
	}
	return p, nil
}

// ConsumePendingState implements store.Store.
func (db *DB) ConsumePendingState(ctx context.Context, state string) (store.PendingConnection, error) {
	if state == "" || len(state) > 256 {
		return store.PendingConnection{}, fmt.Errorf("store: pending connection state: %w", store.ErrNotFound)
	}
	now := db.now()
	p, err := scanPending(db.write.QueryRowContext(ctx, db.q(`UPDATE pending_connections SET state_used_at = ?
		WHERE state_hash = ? AND state_used_at IS NULL
		RETURNING `+pendingCols), db.t(now), store.HashState(state)))
	if err != nil {
		return store.PendingConnection{}, db.fail("pending connection state (unknown or already used)", err)
	}
	switch {
	case p.Status != store.PendingWaiting:
		return store.PendingConnection{}, fmt.Errorf("store: pending connection %q is %s: %w", p.ID, p.Status, store.ErrNotPending)
	case !now.Before(p.ExpiresAt):
		return store.PendingConnection{}, fmt.Errorf("store: pending connection %q: %w", p.ID, store.ErrExpired)
	}
	return p, nil
}

// CompletePending implements store.Store.
func (db *DB) CompletePending(ctx context.Context, userID, id string, o store.Outcome) (store.PendingConnection, error) {
	if err := store.CheckOutcome(&o); err != nil {
		return store.PendingConnection{}, err
	}
	now := db.now()
	// An EXPIRED outcome may end an overdue record; any other outcome must
	// arrive inside the handshake window.
	query := `UPDATE pending_connections SET status = ?, reason = ?, terminal_at = ?
		WHERE id = ? AND user_id = ? AND status = 'PENDING' AND expires_at > ?
		RETURNING ` + pendingCols
	args := []any{string(o.Status), o.Reason, db.t(now), id, userID, db.t(now)}
	if o.Status == store.PendingExpired {
		query = `UPDATE pending_connections SET status = ?, reason = ?, terminal_at = ?
			WHERE id = ? AND user_id = ? AND status = 'PENDING'
			RETURNING ` + pendingCols
		args = args[:5]
	}
	var out store.PendingConnection
	err := db.inTx(ctx, "completing pending connection", func(tx *sql.Tx) error {
		p, err := scanPending(tx.QueryRowContext(ctx, db.q(query), args...))
		if errors.Is(err, sql.ErrNoRows) {
			return db.whyNotPending(ctx, tx, userID, id, now)
		}
		if err != nil {
			return db.fail("completing pending connection", err)
		}
		if o.Connection != nil {
			c := *o.Connection
			if err := store.CheckOutcomeConnection(&c, p); err != nil {
				return err
			}
			if _, err := db.putConnection(ctx, tx, c); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	return out, err
}

// whyNotPending explains why a compare-and-set on a pending record matched
// nothing.
func (db *DB) whyNotPending(ctx context.Context, q queryRower, userID, id string, now time.Time) error {
	p, err := scanPending(q.QueryRowContext(ctx, db.q(`SELECT `+pendingCols+` FROM pending_connections WHERE id = ? AND user_id = ?`), id, userID))
	if err != nil {
		return db.fail(fmt.Sprintf("pending connection %q of user %q", id, userID), err)
	}
	if p.Status != store.PendingWaiting {
		return fmt.Errorf("store: pending connection %q is %s: %w", id, p.Status, store.ErrNotPending)
	}
	return fmt.Errorf("store: pending connection %q: %w", id, store.ErrExpired)
}

// DeletePending implements store.Store.
func (db *DB) DeletePending(ctx context.Context, userID, id string) error {
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM pending_connections WHERE id = ? AND user_id = ?`), id, userID)
	if err != nil {
		return db.fail("deleting pending connection", err)
	}
	return db.affected(res, fmt.Sprintf("deleting pending connection %q of user %q", id, userID))
}

// ExpirePending implements store.Store.
func (db *DB) ExpirePending(ctx context.Context) (int, error) {
	now := db.now()
	res, err := db.write.ExecContext(ctx, db.q(`UPDATE pending_connections SET status = 'EXPIRED', reason = ?, terminal_at = ?
		WHERE status = 'PENDING' AND expires_at <= ?`), expiredReason, db.t(now), db.t(now))
	if err != nil {
		return 0, db.fail("expiring pending connections", err)
	}
	return db.count(res, "expiring pending connections")
}

// PrunePending implements store.Store.
func (db *DB) PrunePending(ctx context.Context, keep time.Duration) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("%w: negative keep duration %v", store.ErrInvalid, keep)
	}
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM pending_connections WHERE terminal_at IS NOT NULL AND terminal_at < ?`),
		db.t(db.now().Add(-keep)))
	if err != nil {
		return 0, db.fail("pruning pending connections", err)
	}
	return db.count(res, "pruning pending connections")
}
