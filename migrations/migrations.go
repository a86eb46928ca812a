package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Dialect names one of the migration sets.
type Dialect string

// The dialects with a migration set.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// ErrDialect is returned for a dialect without a migration set.
var ErrDialect = errors.New("migrations: unknown dialect")

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// FS returns the migration files of a dialect, named NNNNN_description.sql.
func FS(d Dialect) (fs.FS, error) {
	switch d {
	case SQLite, Postgres:
		return fs.Sub(files, string(d))
	default:
		return nil, fmt.Errorf("%w %q", ErrDialect, d)
	}
}

// NewProvider returns a goose provider for db with the dialect's migrations.
// On Postgres it takes a session advisory lock while migrating, so replicas
// that start together apply each migration once.
func NewProvider(db *sql.DB, d Dialect) (*goose.Provider, error) {
	fsys, err := FS(d)
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	gooseDialect := goose.DialectSQLite3
	if d == Postgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, fmt.Errorf("migrations: postgres lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gooseDialect, db, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Up applies every migration db does not have yet and returns the schema
// version db is at afterwards.
func Up(ctx context.Context, db *sql.DB, d Dialect) (int64, error) {
	p, err := NewProvider(db, d)
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrations: applying %s migrations: %w", d, err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrations: reading the schema version: %w", err)
	}
	return v, nil
}

// Latest returns the version the dialect's last migration brings a
// database to: the number its file name starts with.
func Latest(d Dialect) (int64, error) {
	fsys, err := FS(d)
	if err != nil {
		return 0, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		return 0, fmt.Errorf("migrations: no %s migrations", d)
	}
	var v int64
	if _, err := fmt.Sscanf(names[len(names)-1], "%05d_", &v); err != nil {
		return 0, fmt.Errorf("migrations: %s: %w", names[len(names)-1], err)
	}
	return v, nil
}
