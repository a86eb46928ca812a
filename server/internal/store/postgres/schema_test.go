package postgres_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/workbench-dev/workbench/migrations"
	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/store/postgres"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

// TestSchema_matchesSQLite checks that both migration sets build the same
// tables with the same columns, and that the Postgres set migrates down to
// nothing and up again.
func TestSchema_matchesSQLite(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	if _, err := postgres.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	pg, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	pgCols := columns(t, pg, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name NOT LIKE 'goose%'`)

	path := filepath.Join(t.TempDir(), "wb.db")
	if _, err := sqlite.Migrate(ctx, path); err != nil {
		t.Fatal(err)
	}
	lite, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	liteCols := columns(t, lite, `SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'goose%' AND m.name NOT LIKE 'sqlite%'`)

	if len(pgCols) < 40 || !slices.Equal(pgCols, liteCols) {
		t.Fatalf("schemas differ:\npostgres: %v\nsqlite:   %v", pgCols, liteCols)
	}

	p, err := migrations.NewProvider(pg, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("DownTo(0): %v", err)
	}
	if left := columns(t, pg, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_name NOT LIKE 'goose%'`); len(left) != 0 {
		t.Fatalf("tables left after DownTo(0): %v", left)
	}
	if v, err := postgres.Migrate(ctx, url); err != nil || v != storetest.SchemaVersion(t) {
		t.Fatalf("Migrate after down = %d, %v", v, err)
	}
}

func columns(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
