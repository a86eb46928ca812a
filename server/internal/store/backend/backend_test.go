package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/backend"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestOpen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		databaseURL func(t *testing.T) string
		sqliteFile  bool // the store is the SQLite file in dataDir
	}{
		{"empty means sqlite", func(*testing.T) string { return "" }, true},
		{"postgres scheme", func(t *testing.T) string { return pgtest.URL(t) }, false},
		{"postgresql scheme", func(t *testing.T) string {
			return strings.Replace(pgtest.URL(t), "postgres://", "postgresql://", 1)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			databaseURL := tt.databaseURL(t)
			dataDir := filepath.Join(t.TempDir(), "data")
			st, err := backend.Open(ctx, databaseURL, dataDir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			u, err := st.CreateUser(ctx, store.NewUser{Email: "a@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(dataDir, backend.SQLiteFile))
			if (statErr == nil) != tt.sqliteFile {
				t.Fatalf("sqlite file exists = %v, want %v", statErr == nil, tt.sqliteFile)
			}
			if tt.sqliteFile {
				info, err := os.Stat(dataDir)
				if err != nil || info.Mode().Perm() != 0o700 {
					t.Fatalf("data dir mode = %v, %v; want 0700", info.Mode(), err)
				}
			}
			if v, err := backend.Migrate(ctx, databaseURL, dataDir); err != nil || v != storetest.SchemaVersion(t) {
				t.Fatalf("Migrate = %d, %v", v, err)
			}
			if got, err := st.User(ctx, u.ID); err != nil || got.ID != u.ID {
				t.Fatalf("User = %+v, %v", got, err)
			}
		})
	}
}

func TestOpen_errors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, databaseURL, dataDir string
	}{
		{"other scheme", "mysql://root:s3cretpw@db/wb", t.TempDir()},
		{"bare word", "sqlite", t.TempDir()},
		{"no data dir", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := backend.Open(ctx, tt.databaseURL, tt.dataDir)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if strings.Contains(err.Error(), "s3cretpw") {
				t.Fatalf("error reveals the password: %v", err)
			}
			if _, err := backend.Migrate(ctx, tt.databaseURL, tt.dataDir); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("Migrate err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ url, dir, want string }{
		{"", "data", "sqlite data/workbench.db"},
		{"postgres://wb:secret@db:5432/wb?sslmode=disable", "", "postgres://wb:xxxxx@db:5432/wb?sslmode=disable"},
		{"postgres://db/wb", "", "postgres://db/wb"},
		{"postgres://%zz", "", "an unparsable URL"},
	}
	for _, tt := range tests {
		if got := backend.Describe(tt.url, tt.dir); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
