package backend

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/postgres"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
)

// SQLiteFile is the database file's name inside the data directory.
const SQLiteFile = "workbench.db"

// IsPostgres reports whether databaseURL selects the Postgres store.
func IsPostgres(databaseURL string) bool {
	return strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://")
}

// Open opens and migrates the store databaseURL and dataDir select. An empty
// databaseURL means SQLite in dataDir (created with mode 0700 if missing); any
// other non-Postgres URL is an error.
func Open(ctx context.Context, databaseURL, dataDir string, opts ...store.Option) (store.Store, error) {
	if IsPostgres(databaseURL) {
		return postgres.Open(ctx, databaseURL, opts...)
	}
	path, err := sqlitePath(databaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, path, opts...)
}

// Migrate applies the migrations to the store databaseURL and dataDir select
// and returns the schema version.
func Migrate(ctx context.Context, databaseURL, dataDir string) (int64, error) {
	if IsPostgres(databaseURL) {
		return postgres.Migrate(ctx, databaseURL)
	}
	path, err := sqlitePath(databaseURL, dataDir)
	if err != nil {
		return 0, err
	}
	return sqlite.Migrate(ctx, path)
}

// Describe names the selected store for logs without revealing a password:
// "postgres://wb:xxxxx@db/wb" or "sqlite data/workbench.db".
func Describe(databaseURL, dataDir string) string {
	if databaseURL == "" {
		return "sqlite " + filepath.Join(dataDir, SQLiteFile)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "an unparsable URL"
	}
	return u.Redacted()
}

func sqlitePath(databaseURL, dataDir string) (string, error) {
	if databaseURL != "" {
		return "", fmt.Errorf("%w: DATABASE_URL %s is not a postgres:// or postgresql:// URL (leave it empty for SQLite in DATA_DIR)", store.ErrInvalid, Describe(databaseURL, dataDir))
	}
	if dataDir == "" {
		return "", fmt.Errorf("%w: no DATA_DIR for the SQLite database", store.ErrInvalid)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("store: creating data directory: %w", err)
	}
	return filepath.Join(dataDir, SQLiteFile), nil
}
