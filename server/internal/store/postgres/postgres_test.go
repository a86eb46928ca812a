package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/pgtest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/postgres"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewDatabase: func(t *testing.T) string { return pgtest.URL(t) },
		Open:        postgres.Open,
	})
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	latest := storetest.SchemaVersion(t)
	for range 2 { // the second run finds nothing to do
		v, err := postgres.Migrate(ctx, url)
		if err != nil || v != latest {
			t.Fatalf("Migrate = %d, %v; want %d", v, err, latest)
		}
	}
}

func TestOpen_errors(t *testing.T) {
	ctx := context.Background()
	good := pgtest.URL(t)
	tests := []struct {
		name, url string
		want      error
		notIn     string // must not appear in the error
	}{
		{"not postgres", "mysql://u:p@127.0.0.1/db", store.ErrInvalid, ""},
		{"garbage", "postgres://%zz", store.ErrInvalid, ""},
		{"missing database", strings.Replace(good, "/test_", "/missing_", 1), nil, ""},
		{"wrong port", "postgres://u:hunter2secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", nil, "hunter2secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := postgres.Open(ctx, tt.url)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.notIn != "" && strings.Contains(err.Error(), tt.notIn) {
				t.Fatalf("error reveals the password: %v", err)
			}
		})
	}
}
