package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// Backend opens stores of one implementation.
type Backend struct {
	// NewDatabase returns the address (a file path, a URL) of a new, empty
	// database that lives until the test ends.
	NewDatabase func(t *testing.T) string
	// Open opens and migrates the store at addr.
	Open func(ctx context.Context, addr string, opts ...store.Option) (store.Store, error)
}

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"Tenants", testTenants},
		{"Users", testUsers},
		{"Tokens", testTokens},
		{"Sessions", testSessions},
		{"LoginLinks", testLoginLinks},
		{"OAuth", testOAuth},
		{"OAuthClientExpiry", testOAuthClientExpiry},
		{"Connections", testConnections},
		{"ResealConnections", testReseal},
		{"Pending", testPending},
		{"PendingExpiry", testPendingExpiry},
		{"Curl", testCurl},
		{"Jots", testJots},
		{"JotQuotas", testJotQuotas},
		{"CustomApps", testCustomApps},
		{"Attempts", testAttempts},
		{"ConcurrentAttempts", testConcurrentAttempts},
		{"Isolation", testIsolation},
		{"Durability", testDurability},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentCompareAndSet", testConcurrentCAS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &harness{backend: b, clock: NewClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))}
			h.addr = b.NewDatabase(t)
			h.st = h.open(t)
			tt.fn(t, h)
		})
	}
}

// harness is one subtest's database, store and clock.
type harness struct {
	backend Backend
	addr    string
	clock   *Clock
	st      store.Store
}

// open opens the harness database with its clock and closes it when t ends.
func (h *harness) open(t *testing.T) store.Store {
	t.Helper()
	st, err := h.backend.Open(context.Background(), h.addr, store.WithClock(h.clock.Now))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st
}

// Clock is a settable clock for store.WithClock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
