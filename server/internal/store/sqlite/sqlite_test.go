package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/sqlite"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewDatabase: func(t *testing.T) string { return filepath.Join(t.TempDir(), "workbench.db") },
		Open:        sqlite.Open,
	})
}

func TestOpen_settings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wb.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The file is in WAL mode: the -wal file exists next to it once written.
	if _, err := st.CreateUser(ctx, store.NewUser{Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL file: %v", err)
	}
	v, err := sqlite.Migrate(ctx, path)
	if want := storetest.SchemaVersion(t); err != nil || v != want {
		t.Fatalf("Migrate on an up-to-date file = %d, %v; want %d", v, err, want)
	}
}

func TestOpen_errors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(notDB, []byte("this is not a database, just some text that is long enough to have a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error // nil: any error
	}{
		{"empty path", "", store.ErrInvalid},
		{"uri", "file:x.db", store.ErrInvalid},
		{"memory", ":memory:", store.ErrInvalid},
		{"query in path", filepath.Join(dir, "a.db?mode=ro"), store.ErrInvalid},
		{"missing directory", filepath.Join(dir, "nope", "a.db"), os.ErrNotExist},
		{"not a database", notDB, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlite.Open(ctx, tt.path)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestOpen_twoHandles writes to one file through two stores at once, as the
// CLI does while the server runs: transactions begin IMMEDIATE and wait on
// the busy timeout, so no writer fails with SQLITE_BUSY.
func TestOpen_twoHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wb.db")
	var stores [2]store.Store
	for i := range stores {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*4*25)
	for i, st := range stores {
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u, err := st.CreateUser(ctx, store.NewUser{Email: fmt.Sprintf("s%dw%d@example.com", i, w)})
				if err != nil {
					errs <- err
					return
				}
				for range 25 {
					p, err := st.CreatePending(ctx, store.NewPending{UserID: u.ID, Integration: "github", Mode: "oauth2", ExpiresAt: time.Now().Add(time.Hour)})
					if err != nil {
						errs <- err
						continue
					}
					// CompletePending with a connection is a multi-statement transaction.
					c := &store.Connection{UserID: u.ID, Integration: "github", Mode: "oauth2", Sealed: []byte("sealed"), KeyID: "abcd0123"}
					if _, err := st.CompletePending(ctx, u.ID, p.ID, store.Outcome{Status: store.PendingConnected, Connection: c}); err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, err := stores[1].CountUsers(ctx); err != nil || n != 8 {
		t.Fatalf("CountUsers = %d, %v; want 8", n, err)
	}
}
