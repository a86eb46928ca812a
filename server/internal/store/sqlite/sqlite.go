package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	sqlitedriver "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/workbench-dev/workbench/migrations"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlstore"
)

// busyTimeout is how long a statement waits for another process's lock.
const busyTimeout = 10 * time.Second

// readConns is the size of the read pool.
const readConns = 4

// Dialect is SQLite's dialect: times are INTEGER microseconds since the epoch.
var Dialect = sqlstore.Dialect{
	Name: "sqlite",
	Time: func(t time.Time) any { return t.UnixMicro() },
	IsUnique: func(err error) bool {
		return hasCode(err, sqlitelib.SQLITE_CONSTRAINT_UNIQUE, sqlitelib.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	IsForeignKey: func(err error) bool { return hasCode(err, sqlitelib.SQLITE_CONSTRAINT_FOREIGNKEY) },
}

func hasCode(err error, codes ...int) bool {
	var e *sqlitedriver.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, c := range codes {
		if e.Code() == c {
			return true
		}
	}
	return false
}

// Open opens (creating if needed) the database file at path, applies the
// migrations and returns the store. The file's directory must exist.
func Open(ctx context.Context, path string, opts ...store.Option) (store.Store, error) {
	write, read, err := openHandles(ctx, path)
	if err != nil {
		return nil, err
	}
	closeAll := func() error { return errors.Join(read.Close(), write.Close()) }
	if _, err := Migrate(ctx, path); err != nil {
		_ = closeAll()
		return nil, err
	}
	return sqlstore.New(write, read, Dialect, store.NewOptions(opts...), closeAll), nil
}

// Migrate applies the migrations to the database file at path and returns
// the schema version.
func Migrate(ctx context.Context, path string) (int64, error) {
	dsn, err := dsn(path, false)
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	v, err := migrations.Up(ctx, db, migrations.SQLite)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return v, nil
}

// openHandles opens the single-connection write pool and the read pool, and
// checks that the file is usable.
func openHandles(ctx context.Context, path string) (write, read *sql.DB, err error) {
	wdsn, err := dsn(path, false)
	if err != nil {
		return nil, nil, err
	}
	rdsn, _ := dsn(path, true)
	write, err = sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	// The first connection switches the file to WAL before any reader opens.
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	read, err = sql.Open("sqlite", rdsn)
	if err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	read.SetMaxOpenConns(readConns)
	read.SetMaxIdleConns(readConns)
	if err := read.PingContext(ctx); err != nil {
		write.Close()
		read.Close()
		return nil, nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	return write, read, nil
}

// dsn returns the driver's data source name for path.
func dsn(path string, readOnly bool) (string, error) {
	if path == "" {
		return "", fmt.Errorf("sqlite: %w: empty database path", store.ErrInvalid)
	}
	if strings.ContainsAny(path, "?#\x00") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return "", fmt.Errorf("sqlite: %w: database path %q must be a plain file path", store.ErrInvalid, path)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("sqlite: database directory: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode(), nil
}
