package servertest

import (
	"testing"

	"github.com/workbench-dev/workbench/server/internal/pgtest"
)

// Main runs a test package's tests and then stops the PostgreSQL cluster,
// if one was started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { servertest.Main(m) }
func Main(m *testing.M) { pgtest.Main(m) }

// Run is Main without the exit, for a TestMain with more to clean up: it
// runs the tests, stops the cluster and returns the exit code.
func Run(m *testing.M) int { return pgtest.Run(m) }

// PostgresURL returns the postgres:// URL of a new, empty database that is
// dropped when t ends, starting the test cluster on first use.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return pgtest.URL(t)
}
