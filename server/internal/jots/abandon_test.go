package jots_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// stuckStore hangs the lookups of serving and uploading, as a stuck
// database would, until the request's context ends, and says when.
type stuckStore struct {
	store.Store
	entered chan struct{}
	ended   chan time.Time
}

func (s stuckStore) hang(ctx context.Context) error {
	s.entered <- struct{}{}
	<-ctx.Done()
	s.ended <- time.Now()
	return ctx.Err()
}

func (s stuckStore) Jot(ctx context.Context, _ string) (store.Jot, error) {
	return store.Jot{}, s.hang(ctx)
}

func (s stuckStore) JotUpload(ctx context.Context, _ string) (store.JotUpload, error) {
	return store.JotUpload{}, s.hang(ctx)
}

// TestService_abandoned checks that a jot request whose client leaves
// stops its store work within a second.
func TestService_abandoned(t *testing.T) {
	st := stuckStore{Store: openStore(t), entered: make(chan struct{}, 1), ended: make(chan time.Time, 1)}
	_, base := serve(t, st, nil)
	tests := []struct {
		name, method, path, body string
	}{
		{"serve", http.MethodGet, "/j/site/index.html", ""},
		{"upload", http.MethodPut, jots.UploadPrefix + "some-token", "a small body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, leave := context.WithCancel(context.Background())
			req, err := http.NewRequestWithContext(ctx, tt.method, base+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			transport := &http.Transport{}
			defer transport.CloseIdleConnections()
			failed := make(chan error, 1)
			go func() {
				_, err := transport.RoundTrip(req)
				failed <- err
			}()
			<-st.entered
			leave() // the transport closes the connection
			left := time.Now()
			<-failed
			select {
			case ended := <-st.ended:
				if d := ended.Sub(left); d > time.Second {
					t.Errorf("the store work ended %v after the client left, want within 1s", d)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the store work outlived its client")
			}
		})
	}
}
