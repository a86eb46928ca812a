package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Name is used in error messages ("sqlite", "postgres").
	Name string
	// Numbered makes placeholders $1, $2, ... instead of '?'.
	Numbered bool
	// Time converts a non-zero time to the value the time columns hold.
	Time func(time.Time) any
	// IsUnique reports whether err is a unique constraint violation.
	IsUnique func(error) bool
	// IsForeignKey reports whether err is a foreign key violation.
	IsForeignKey func(error) bool
	// LockRows ends a SELECT that locks the rows it reads until the
	// transaction ends ("FOR UPDATE"); empty where write transactions are
	// serialized anyway (SQLite).
	LockRows string
}

// DB is a store.Store over database/sql.
type DB struct {
	write   *sql.DB // every statement that changes data
	read    *sql.DB // queries; may be write itself
	dialect Dialect
	opts    store.Options

	closeOnce sync.Once
	close     func() error
	closeErr  error
}

var _ store.Store = (*DB)(nil)

// New returns a store over the given handles. read may equal write. close
// releases everything (the handles included) and is called once by Close.
func New(write, read *sql.DB, d Dialect, opts store.Options, close func() error) *DB {
	return &DB{write: write, read: read, dialect: d, opts: opts, close: close}
}

// Close releases the database handles. Later calls return the first
// call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() { db.closeErr = db.close() })
	return db.closeErr
}

// q rewrites a query's placeholders for the dialect.
func (db *DB) q(query string) string {
	if !db.dialect.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// t converts a time for a query; the zero time is NULL.
func (db *DB) t(v time.Time) any {
	if v.IsZero() {
		return nil
	}
	return db.dialect.Time(store.Round(v))
}

// now is the store clock.
func (db *DB) now() time.Time { return db.opts.Clock() }

// fail wraps a database error with what was being done, mapping constraint
// violations to the store's sentinels and any other database failure to
// failure.ErrUnavailable.
func (db *DB) fail(doing string, err error) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: %s: %w", doing, store.ErrNotFound)
	case db.dialect.IsUnique(err):
		return fmt.Errorf("store: %s: %w", doing, store.ErrConflict)
	case db.dialect.IsForeignKey(err): // the user was deleted meanwhile
		return fmt.Errorf("store: %s: %w", doing, store.ErrNotFound)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("store: %s: %w", doing, err)
	default:
		// Anything else is the database failing, not the request: callers
		// answer it as a temporary outage (503 with Retry-After).
		return fmt.Errorf("store: %s (%s): %w: %w", doing, db.dialect.Name, failure.ErrUnavailable, err)
	}
}

// queryRower is a *sql.DB or *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// timeCol scans a time column of either dialect: microseconds since the
// epoch (SQLite) or a timestamp (Postgres). NULL is the zero time.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.t = time.Time{}
	case int64:
		*c.t = time.UnixMicro(v).UTC()
	case time.Time:
		*c.t = v.UTC()
	default:
		return fmt.Errorf("time column holds %T", src)
	}
	return nil
}

// affected returns an error wrapping store.ErrNotFound when res changed no row.
func (db *DB) affected(res sql.Result, doing string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return db.fail(doing, err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s: %w", doing, store.ErrNotFound)
	}
	return nil
}

// count returns how many rows res changed.
func (db *DB) count(res sql.Result, doing string) (int, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, db.fail(doing, err)
	}
	return int(n), nil
}

// inTx runs fn in a write transaction, committing if it returns nil.
func (db *DB) inTx(ctx context.Context, doing string, fn func(tx *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return db.fail(doing, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return db.fail(doing, err)
	}
	return nil
}

// tenantOf returns the tenant of a user, read through q so that it can run
// inside a transaction. An unknown user is ErrNotFound.
func (db *DB) tenantOf(ctx context.Context, q queryRower, userID string) (string, error) {
	return db.readTenant(ctx, q, userID, "")
}

// lockUser is tenantOf that also locks the user's row until tx ends, where
// the dialect locks rows: it serialises the changes bounded per user.
func (db *DB) lockUser(ctx context.Context, tx *sql.Tx, userID string) (string, error) {
	return db.readTenant(ctx, tx, userID, db.dialect.LockRows)
}

func (db *DB) readTenant(ctx context.Context, q queryRower, userID, lock string) (string, error) {
	var tenant string
	if err := q.QueryRowContext(ctx, db.q(`SELECT tenant_id FROM users WHERE id = ? `+lock), userID).Scan(&tenant); err != nil {
		return "", db.fail(fmt.Sprintf("user %q", userID), err)
	}
	return tenant, nil
}
