package storetest

import (
	"testing"

	"github.com/workbench-dev/workbench/migrations"
)

// SchemaVersion returns the schema version a fully migrated store is at;
// both dialects must agree on it.
func SchemaVersion(tb testing.TB) int64 {
	tb.Helper()
	sqlite, err := migrations.Latest(migrations.SQLite)
	if err != nil {
		tb.Fatal(err)
	}
	postgres, err := migrations.Latest(migrations.Postgres)
	if err != nil {
		tb.Fatal(err)
	}
	if sqlite != postgres {
		tb.Fatalf("the SQLite migrations end at %d, the Postgres ones at %d", sqlite, postgres)
	}
	return sqlite
}
