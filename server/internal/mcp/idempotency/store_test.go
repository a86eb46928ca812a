package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// TestMemory_Budgets reproduces the cross-user eviction of the outside
// review (one user's keyed executions pushed out another's record, whose
// retry then ran again): no record is ever dropped to make room, a user past
// the key budget is refused, and results past a byte budget are kept as
// spent keys without their result.
func TestMemory_Budgets(t *testing.T) {
	ctx := context.Background()
	type put struct {
		user, key, result string
		wantErr           error
	}
	tests := []struct {
		name        string
		opts        MemoryOptions
		puts        []put
		wantKept    []string // user/key with their result
		wantOmitted []string // user/key kept without a result
	}{
		{"another user's record stays", MemoryOptions{MaxKeysPerUser: 2}, []put{
			{"alice", "a", `1`, nil}, {"mallory", "m0", `1`, nil}, {"mallory", "m1", `1`, nil},
			{"mallory", "m2", `1`, ErrCapacity}, {"mallory", "m3", `1`, ErrCapacity},
		}, []string{"alice/a", "mallory/m0", "mallory/m1"}, nil},
		{"own live keys stay", MemoryOptions{MaxKeysPerUser: 1}, []put{
			{"u", "k0", `1`, nil}, {"u", "k1", `2`, ErrCapacity},
		}, []string{"u/k0"}, nil},
		{"a stored key is not counted twice", MemoryOptions{MaxKeysPerUser: 1}, []put{
			{"u", "k0", `1`, nil}, {"u", "k0", `2`, nil},
		}, []string{"u/k0"}, nil},
		{"bytes per user", MemoryOptions{MaxBytesPerUser: 40}, []put{
			{"u", "k0", strings.Repeat("1", 20), nil}, {"u", "k1", strings.Repeat("2", 20), nil}, {"v", "k2", strings.Repeat("3", 20), nil},
		}, []string{"u/k0", "v/k2"}, []string{"u/k1"}},
		{"bytes overall", MemoryOptions{MaxBytes: 40}, []put{
			{"u", "k0", strings.Repeat("1", 20), nil}, {"v", "k1", strings.Repeat("2", 20), nil},
		}, []string{"u/k0"}, []string{"v/k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(tt.opts)
			for _, p := range tt.puts {
				if err := m.Put(ctx, p.user, p.key, rec("h", p.result)); !errors.Is(err, p.wantErr) {
					t.Fatalf("Put(%s/%s) = %v, want %v", p.user, p.key, err, p.wantErr)
				}
			}
			var kept, omitted []string
			for _, p := range tt.puts {
				r, ok, _ := m.Get(ctx, p.user, p.key)
				id := p.user + "/" + p.key
				switch {
				case !ok || slices.Contains(kept, id) || slices.Contains(omitted, id):
				case r.Omitted:
					omitted = append(omitted, id)
				default:
					kept = append(kept, id)
				}
			}
			if fmt.Sprint(kept) != fmt.Sprint(tt.wantKept) || fmt.Sprint(omitted) != fmt.Sprint(tt.wantOmitted) {
				t.Errorf("kept %v omitted %v, want %v and %v", kept, omitted, tt.wantKept, tt.wantOmitted)
			}
		})
	}
}

func TestMemory_Reserve(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewMemory(MemoryOptions{MaxKeysPerUser: 2, TTL: time.Hour, Now: clock.Now})
	r0, err := m.Reserve(ctx, "u", "k0")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := m.Reserve(ctx, "u", "k1")
	if err != nil {
		t.Fatal(err)
	}
	// Reservations hold room: a third key is refused, naming the bound.
	if _, err := m.Reserve(ctx, "u", "k2"); !errors.Is(err, ErrCapacity) || !strings.Contains(err.Error(), "2 live idempotency keys") {
		t.Fatalf("third Reserve = %v, want ErrCapacity naming the limit of 2", err)
	}
	// Another user has room of their own.
	if _, err := m.Reserve(ctx, "v", "k2"); err != nil {
		t.Fatalf("another user's Reserve = %v", err)
	}
	// A reserved key is always stored; releasing it afterwards changes nothing.
	if err := m.Put(ctx, "u", "k0", rec("h", `1`)); err != nil {
		t.Fatal(err)
	}
	r0()
	if _, ok, _ := m.Get(ctx, "u", "k0"); !ok {
		t.Fatal("release after Put dropped the record")
	}
	// A released reservation gives its room back, once.
	r1()
	r1()
	if _, err := m.Reserve(ctx, "u", "k1"); err != nil {
		t.Fatalf("Reserve after release = %v", err)
	}
	if _, err := m.Reserve(ctx, "u", "k3"); !errors.Is(err, ErrCapacity) {
		t.Fatalf("Reserve past the budget after a double release = %v", err)
	}
	// Expiry is what frees a stored key's room.
	clock.advance(2 * time.Hour)
	if _, err := m.Reserve(ctx, "u", "k3"); err != nil {
		t.Fatalf("Reserve after k0 expired = %v", err)
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
	m := NewMemory(MemoryOptions{MaxKeysPerUser: 100})
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
