package accounts

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

// lookups is a fake token lookup: its answer and how often it was asked.
type lookups struct {
	answer Identity
	err    error
	asked  int
}

func (l *lookups) lookup(context.Context) (Identity, error) {
	l.asked++
	return l.answer, l.err
}

func TestTokenCache_Resolve(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	c := NewTokenCache(TokenCacheOptions{Now: clock.Now})
	alice := Identity{User: store.User{ID: "usr_alice"}}
	l := &lookups{answer: alice}
	resolve := func() (Identity, error) { return c.Resolve(ctx, "wb_tok", l.lookup) }

	if id, err := resolve(); err != nil || id.User.ID != "usr_alice" || l.asked != 1 {
		t.Fatalf("first: %+v, %v, asked %d", id, err, l.asked)
	}
	// While the store answers it is asked every time.
	if _, err := resolve(); err != nil || l.asked != 2 {
		t.Fatalf("second: %v, asked %d", err, l.asked)
	}
	// A store outage keeps the token working within Grace of its last
	// check, and no longer.
	clock.Advance(DefaultTokenGrace - time.Second)
	l.err = fmt.Errorf("store: reading a token (postgres): %w", errors.New("connection refused"))
	if id, err := resolve(); err != nil || id.User.ID != "usr_alice" || l.asked != 3 {
		t.Fatalf("outage within grace: %+v, %v, asked %d", id, err, l.asked)
	}
	clock.Advance(time.Second)
	if _, err := resolve(); !errors.Is(err, failure.ErrUnavailable) {
		t.Fatalf("outage past grace: %v, want ErrUnavailable", err)
	}
	// An unknown token during an outage is unavailable, not unauthenticated.
	if _, err := c.Resolve(ctx, "wb_other", l.lookup); !errors.Is(err, failure.ErrUnavailable) || errors.Is(err, failure.ErrUnauthenticated) {
		t.Fatalf("unknown token in an outage: %v", err)
	}
	// The store is back: the token is checked again; revoked, it stops at
	// once and is forgotten, so an outage cannot revive it.
	l.err = nil
	if _, err := resolve(); err != nil {
		t.Fatalf("store back: %v", err)
	}
	l.err = fmt.Errorf("revoked: %w", failure.ErrUnauthenticated)
	if _, err := resolve(); !errors.Is(err, failure.ErrUnauthenticated) {
		t.Fatalf("revoked: %v", err)
	}
	l.err = errors.New("connection refused")
	if _, err := resolve(); !errors.Is(err, failure.ErrUnavailable) {
		t.Fatalf("revoked token in an outage: %v, want ErrUnavailable", err)
	}
}

func TestTokenCache_limit(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	c := NewTokenCache(TokenCacheOptions{Now: clock.Now, Limit: 3})
	l := &lookups{answer: Identity{User: store.User{ID: "usr_x"}}}
	for i := range 10 {
		if _, err := c.Resolve(ctx, fmt.Sprint("wb_", i), l.lookup); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	if n := len(c.entries); n > 3 {
		t.Fatalf("%d entries, limit 3", n)
	}
}
