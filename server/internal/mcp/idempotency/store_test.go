package idempotency

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func rec(hash, result string) Record {
	return Record{RequestHash: hash, Result: json.RawMessage(result)}
}

func TestMemory_GetPut(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewMemory(MemoryOptions{TTL: time.Hour, Now: clock.Now})

	if _, ok, err := m.Get(ctx, "u1", "k"); ok || err != nil {
		t.Fatalf("empty store Get = %v, %v", ok, err)
	}
	if err := m.Put(ctx, "u1", "k", rec("h1", `{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	// The first outcome wins.
	if err := m.Put(ctx, "u1", "k", rec("h2", `{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := m.Get(ctx, "u1", "k")
	if err != nil || !ok || got.RequestHash != "h1" || string(got.Result) != `{"n":1}` || !got.StoredAt.Equal(clock.Now()) {
		t.Fatalf("Get = %+v, %v, %v; want the first record stamped now", got, ok, err)
	}
	// Keys are per user.
	if _, ok, _ := m.Get(ctx, "u2", "k"); ok {
		t.Error("another user sees u1's key")
	}
	// Records expire after the TTL.
	clock.advance(59 * time.Minute)
	if _, ok, _ := m.Get(ctx, "u1", "k"); !ok {
		t.Error("record gone before its TTL")
	}
	clock.advance(2 * time.Minute)
	if _, ok, _ := m.Get(ctx, "u1", "k"); ok {
		t.Error("record replayed after its TTL")
	}
	if n := m.Len(); n != 0 {
		t.Errorf("Len = %d after expiry", n)
	}
}

func TestMemory_Bounds(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		opts     MemoryOptions
		puts     []string // results, keys k0, k1, ...
		wantKeys []string
	}{
		{"entries", MemoryOptions{MaxEntries: 2}, []string{`1`, `2`, `3`}, []string{"k1", "k2"}},
		{"bytes", MemoryOptions{MaxBytes: 20}, []string{strings.Repeat("1", 10), strings.Repeat("2", 10), strings.Repeat("3", 10)}, []string{"k2"}},
		{"oversized record is dropped", MemoryOptions{MaxBytes: 20}, []string{`1`, strings.Repeat("9", 50)}, []string{"k0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(tt.opts)
			for i, r := range tt.puts {
				if err := m.Put(ctx, "u", fmt.Sprintf("k%d", i), rec("h", r)); err != nil {
					t.Fatal(err)
				}
			}
			var kept []string
			for i := range tt.puts {
				k := fmt.Sprintf("k%d", i)
				if _, ok, _ := m.Get(ctx, "u", k); ok {
					kept = append(kept, k)
				}
			}
			if fmt.Sprint(kept) != fmt.Sprint(tt.wantKeys) {
				t.Errorf("kept %v, want %v", kept, tt.wantKeys)
			}
		})
	}
}

func TestMemory_PutCopiesResult(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{})
	buf := []byte(`{"a":1}`)
	if err := m.Put(ctx, "u", "k", Record{RequestHash: "h", Result: buf}); err != nil {
		t.Fatal(err)
	}
	buf[2] = 'X'
	got, _, _ := m.Get(ctx, "u", "k")
	if string(got.Result) != `{"a":1}` {
		t.Errorf("stored result changed with the caller's buffer: %s", got.Result)
	}
}

// TestMemory_Hammer runs concurrent writers and readers under -race; every
// key ends with its first writer's record.
func TestMemory_Hammer(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{MaxEntries: 100})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := fmt.Sprintf("k%d", i%50)
				_ = m.Put(ctx, "u", k, rec(k, fmt.Sprintf(`{"w":%d}`, w)))
				if r, ok, _ := m.Get(ctx, "u", k); ok && r.RequestHash != k {
					t.Errorf("key %s holds hash %s", k, r.RequestHash)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := m.Len(); n != 50 {
		t.Errorf("Len = %d, want 50", n)
	}
}
