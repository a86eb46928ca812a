package pgtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { Main(m) }

func TestURL(t *testing.T) {
	ctx := context.Background()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	for _, u := range []string{a, b} {
		if !strings.HasPrefix(u, "postgres://postgres@127.0.0.1:") {
			t.Fatalf("URL %q is not on loopback", u)
		}
	}
	connA, err := pgconn.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close(ctx)
	if _, err := connA.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	// The other database is fresh: it has no table t.
	connB, err := pgconn.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close(ctx)
	if _, err := connB.Exec(ctx, "SELECT x FROM t").ReadAll(); err == nil {
		t.Fatal("second database sees the first one's table")
	}
	res, err := connA.Exec(ctx, "SELECT current_setting('listen_addresses'), version()").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := res[0].Rows[0]
	if string(row[0]) != "127.0.0.1" {
		t.Fatalf("listen_addresses = %q, want 127.0.0.1 only", row[0])
	}
	t.Logf("server: %s", row[1])
}
