package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/workbench-dev/workbench/migrations"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlstore"
)

// Postgres error codes the store maps to sentinels.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// Dialect is Postgres's dialect: numbered placeholders and timestamptz.
var Dialect = sqlstore.Dialect{
	Name:         "postgres",
	Numbered:     true,
	Time:         func(t time.Time) any { return t },
	IsUnique:     func(err error) bool { return hasCode(err, uniqueViolation) },
	IsForeignKey: func(err error) bool { return hasCode(err, foreignKeyViolation) },
	LockRows:     "FOR UPDATE",
}

func hasCode(err error, code string) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == code
}

// Open connects to the database at databaseURL (postgres:// or
// postgresql://), applies the migrations and returns the store.
func Open(ctx context.Context, databaseURL string, opts ...store.Option) (store.Store, error) {
	pool, err := connect(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	closeAll := func() error {
		err := db.Close()
		pool.Close()
		return err
	}
	if err := migrate(ctx, db); err != nil {
		_ = closeAll()
		return nil, err
	}
	return sqlstore.New(db, db, Dialect, store.NewOptions(opts...), closeAll), nil
}

// Migrate applies the migrations to the database at databaseURL and returns
// the schema version.
func Migrate(ctx context.Context, databaseURL string) (int64, error) {
	pool, err := connect(ctx, databaseURL)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	v, err := migrations.Up(ctx, db, migrations.Postgres)
	if err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	return v, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := migrations.Up(ctx, db, migrations.Postgres); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// connect opens a pool and checks that the server answers. Errors name the
// host and database but never the password.
func connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("postgres: %w: DATABASE_URL must be a postgres:// or postgresql:// URL", store.ErrInvalid)
	}
	where := u.Redacted()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w: cannot parse %s", store.ErrInvalid, where)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to %s: %w", where, err)
	}
	return pool, nil
}
