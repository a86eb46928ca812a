package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// TakeAttempt implements store.AttemptStore: in one transaction it makes
// sure the key's row exists, locks it, and counts the attempt unless the
// key is waiting.
func (db *DB) TakeAttempt(ctx context.Context, key string, p store.AttemptPolicy) (time.Duration, error) {
	if err := store.CheckAttemptKey(key); err != nil {
		return 0, err
	}
	if err := p.Check(); err != nil {
		return 0, err
	}
	now := store.Round(db.now())
	var wait time.Duration
	err := db.inTx(ctx, "taking an attempt", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO attempts (attempt_key, taken, last_at) VALUES (?, 0, ?)
			ON CONFLICT (attempt_key) DO NOTHING`), key, db.t(now)); err != nil {
			return db.fail("taking an attempt", err)
		}
		var (
			taken         int
			last, blocked time.Time
		)
		err := tx.QueryRowContext(ctx, db.q(`SELECT taken, last_at, blocked_until FROM attempts WHERE attempt_key = ? `+db.dialect.LockRows), key).
			Scan(&taken, timeCol{&last}, timeCol{&blocked})
		if err != nil {
			return db.fail("taking an attempt", err)
		}
		if now.Before(blocked) {
			wait = blocked.Sub(now)
			return nil
		}
		taken, blocked = p.Next(taken, last, now)
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE attempts SET taken = ?, last_at = ?, blocked_until = ? WHERE attempt_key = ?`),
			taken, db.t(now), db.t(blocked), key); err != nil {
			return db.fail("taking an attempt", err)
		}
		return nil
	})
	return wait, err
}

// ClearAttempts implements store.AttemptStore.
func (db *DB) ClearAttempts(ctx context.Context, key string) error {
	if err := store.CheckAttemptKey(key); err != nil {
		return err
	}
	if _, err := db.write.ExecContext(ctx, db.q(`DELETE FROM attempts WHERE attempt_key = ?`), key); err != nil {
		return db.fail("clearing attempts", err)
	}
	return nil
}

// PruneAttempts implements store.AttemptStore.
func (db *DB) PruneAttempts(ctx context.Context, quiet time.Duration) (int, error) {
	now := db.now()
	res, err := db.write.ExecContext(ctx, db.q(`DELETE FROM attempts WHERE last_at < ? AND (blocked_until IS NULL OR blocked_until <= ?)`),
		db.t(now.Add(-quiet)), db.t(now))
	if err != nil {
		return 0, db.fail("pruning attempts", err)
	}
	return db.count(res, "pruning attempts")
}
