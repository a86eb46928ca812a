package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/workbench-dev/workbench/migrations"
)

func TestFS(t *testing.T) {
	var names [2][]string
	for i, d := range []migrations.Dialect{migrations.SQLite, migrations.Postgres} {
		fsys, err := migrations.FS(d)
		if err != nil {
			t.Fatal(err)
		}
		names[i], err = fs.Glob(fsys, "*.sql")
		if err != nil || len(names[i]) == 0 {
			t.Fatalf("%s: no migrations (%v)", d, err)
		}
		for _, n := range names[i] {
			b, _ := fs.ReadFile(fsys, n)
			if !strings.Contains(string(b), "-- +goose Up") || !strings.Contains(string(b), "-- +goose Down") {
				t.Errorf("%s/%s lacks an Up or Down section", d, n)
			}
		}
	}
	// Both dialects have the same migrations, version for version.
	if !slices.Equal(names[0], names[1]) {
		t.Fatalf("sqlite migrations %v differ from postgres migrations %v", names[0], names[1])
	}
	if _, err := migrations.FS("mysql"); !errors.Is(err, migrations.ErrDialect) {
		t.Fatalf("FS(mysql) err = %v", err)
	}
}

func TestUp_sqlite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	latest, err := migrations.Latest(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second run has nothing to do
		v, err := migrations.Up(ctx, db, migrations.SQLite)
		if err != nil || v != latest {
			t.Fatalf("Up = %d, %v; want %d", v, err, latest)
		}
	}
	var tenant string
	if err := db.QueryRow(`SELECT id FROM tenants`).Scan(&tenant); err != nil || tenant != "default" {
		t.Fatalf("default tenant = %q, %v", tenant, err)
	}

	// Down removes every table; Up builds them again.
	p, err := migrations.NewProvider(db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("DownTo(0): %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'goose%' AND name NOT LIKE 'sqlite%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tables left after DownTo(0), %v", n, err)
	}
	if v, err := migrations.Up(ctx, db, migrations.SQLite); err != nil || v != latest {
		t.Fatalf("Up after down = %d, %v", v, err)
	}
}

func TestNewProvider_unknownDialect(t *testing.T) {
	if _, err := migrations.NewProvider(&sql.DB{}, "oracle"); !errors.Is(err, migrations.ErrDialect) {
		t.Fatalf("err = %v, want ErrDialect", err)
	}
}
