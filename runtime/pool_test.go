package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeGuest is a guest that records who created it, whether it is in use and
// whether it was closed.
type fakeGuest struct {
	id     int
	owner  string
	pages  uint64
	inUse  atomic.Bool
	closed atomic.Bool
}

func (g *fakeGuest) run(context.Context, *callState, string, []byte) (json.RawMessage, *hostOrToolError) {
	return json.RawMessage(`{}`), nil
}
func (g *fakeGuest) memoryPages() uint64       { return g.pages }
func (g *fakeGuest) close(ctx context.Context) { g.closed.Store(true) }

// fakeGuests creates fakeGuests for a pool and remembers every one.
type fakeGuests struct {
	mu  sync.Mutex
	all []*fakeGuest
}

func (f *fakeGuests) create(_ context.Context, user string) (*instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := &fakeGuest{id: len(f.all), owner: user, pages: 2}
	f.all = append(f.all, g)
	return &instance{guest: g, user: user, pages: g.pages}, nil
}

// closedIDs lists the guests closed so far.
func (f *fakeGuests) closedIDs() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []int
	for _, g := range f.all {
		if g.closed.Load() {
			ids = append(ids, g.id)
		}
	}
	return ids
}

func guestOf(in *instance) *fakeGuest { return in.guest.(*fakeGuest) }

func TestPool_acquire(t *testing.T) {
	ctx := context.Background()
	var guests fakeGuests
	p := newPool(PoolConfig{}.withDefaults(), guests.create)
	a1, _ := p.acquire(ctx, "alice")
	p.release(ctx, a1, true)
	tests := []struct {
		user    string
		wantID  int
		healthy bool
	}{
		{"alice", 0, true},  // alice's idle instance is reused
		{"bob", 1, true},    // bob never gets alice's
		{"alice", 0, false}, // reused again, then released broken
		{"alice", 2, true},  // the broken one is gone: a new instance
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i, tt.user), func(t *testing.T) {
			in, err := p.acquire(ctx, tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if g := guestOf(in); g.id != tt.wantID || g.owner != tt.user || in.user != tt.user {
				t.Fatalf("acquire(%s) = guest %d of %s, want guest %d", tt.user, g.id, g.owner, tt.wantID)
			}
			p.release(ctx, in, tt.healthy)
			if closed := guestOf(in).closed.Load(); closed == tt.healthy {
				t.Fatalf("released healthy=%v: closed = %v", tt.healthy, closed)
			}
		})
	}
}

func TestPool_release_caps(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		cfg        PoolConfig
		users      []string // one instance each, all busy at once, released in this order
		wantClosed []int    // guest ids, in creation order (= users order)
		wantIdle   int
	}{
		{"under both caps", PoolConfig{MaxIdlePerUser: 2, MaxIdlePerPlugin: 4}, []string{"a", "a", "b"}, nil, 3},
		{"per-user cap drops the user's oldest", PoolConfig{MaxIdlePerUser: 2, MaxIdlePerPlugin: 8}, []string{"a", "a", "a", "b"}, []int{0}, 3},
		{"per-plugin cap drops the least recently used", PoolConfig{MaxIdlePerUser: 4, MaxIdlePerPlugin: 2}, []string{"a", "b", "c", "a"}, []int{0, 1}, 2},
		{"per-plugin cap of one keeps the last", PoolConfig{MaxIdlePerUser: 4, MaxIdlePerPlugin: 1}, []string{"a", "b", "c"}, []int{0, 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var guests fakeGuests
			p := newPool(tt.cfg.withDefaults(), guests.create)
			var busy []*instance
			for _, u := range tt.users {
				in, err := p.acquire(ctx, u)
				if err != nil {
					t.Fatal(err)
				}
				busy = append(busy, in)
			}
			for _, in := range busy {
				p.release(ctx, in, true)
				time.Sleep(time.Millisecond) // distinct lastUsed times for the LRU order
			}
			if got := guests.closedIDs(); fmt.Sprint(got) != fmt.Sprint(tt.wantClosed) {
				t.Errorf("closed guests %v, want %v", got, tt.wantClosed)
			}
			if c := p.counts(); c.idle != tt.wantIdle || c.busy != 0 || c.pages != uint64(2*tt.wantIdle) {
				t.Errorf("counts = %d idle, %d busy, %d pages; want %d idle, 0 busy, %d pages", c.idle, c.busy, c.pages, tt.wantIdle, 2*tt.wantIdle)
			}
		})
	}
}

func TestPool_evictIdle(t *testing.T) {
	ctx := context.Background()
	var guests fakeGuests
	p := newPool(PoolConfig{}.withDefaults(), guests.create)
	acquire := func(user string) *instance {
		in, err := p.acquire(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	old1, old2 := acquire("alice"), acquire("bob")
	p.release(ctx, old1, true)
	p.release(ctx, old2, true)
	time.Sleep(time.Millisecond)
	cutoff := time.Now()
	again := acquire("alice") // alice's idle instance, guest 0
	fresh := acquire("alice") // a second one, guest 2, busy during the sweep
	p.release(ctx, again, true)
	p.evictIdle(ctx, cutoff)
	// Guest 0 was released again after the cutoff: only bob's is stale.
	if got := guests.closedIDs(); fmt.Sprint(got) != "[1]" {
		t.Fatalf("closed guests %v, want [1] (bob's)", got)
	}
	p.release(ctx, fresh, true)
	p.evictIdle(ctx, time.Now().Add(time.Millisecond))
	if idle := p.counts().idle; idle != 0 || len(guests.closedIDs()) != len(guests.all) {
		t.Fatalf("after evicting everything: %d idle, closed %v of %d", idle, guests.closedIDs(), len(guests.all))
	}
}

func TestPool_close(t *testing.T) {
	ctx := context.Background()
	var guests fakeGuests
	p := newPool(PoolConfig{}.withDefaults(), guests.create)
	idle, _ := p.acquire(ctx, "alice")
	busy, _ := p.acquire(ctx, "bob")
	p.release(ctx, idle, true)
	p.close(ctx)
	if !guestOf(idle).closed.Load() || guestOf(busy).closed.Load() {
		t.Fatalf("close: idle closed %v, busy closed %v; want only the idle one", guestOf(idle).closed.Load(), guestOf(busy).closed.Load())
	}
	p.release(ctx, busy, true)
	if !guestOf(busy).closed.Load() {
		t.Fatal("an instance released after close stays open")
	}
	if _, err := p.acquire(ctx, "alice"); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v, want ErrClosed", err)
	}
}

// TestPool_hammer acquires and releases from many goroutines for many users
// and checks that an instance is only ever handed to the user it was created
// for, and to one caller at a time.
func TestPool_hammer(t *testing.T) {
	ctx := context.Background()
	var guests fakeGuests
	p := newPool(PoolConfig{MaxIdlePerUser: 2, MaxIdlePerPlugin: 8}.withDefaults(), guests.create)
	users := []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11"}
	var wg sync.WaitGroup
	var crossed, shared atomic.Int64
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 2000 {
				user := users[r.IntN(len(users))]
				in, err := p.acquire(ctx, user)
				if err != nil {
					t.Error(err)
					return
				}
				g := guestOf(in)
				if g.owner != user || in.user != user {
					crossed.Add(1)
				}
				if !g.inUse.CompareAndSwap(false, true) || g.closed.Load() {
					shared.Add(1)
				}
				if r.IntN(4) == 0 {
					p.evictIdle(ctx, time.Now().Add(-time.Millisecond))
				}
				g.inUse.Store(false)
				p.release(ctx, in, r.IntN(10) != 0)
			}
		}()
	}
	wg.Wait()
	if crossed.Load() != 0 || shared.Load() != 0 {
		t.Fatalf("%d acquisitions got another user's instance, %d got one in use or closed", crossed.Load(), shared.Load())
	}
	if c := p.counts(); c.busy != 0 || c.idle > 8 {
		t.Fatalf("after the hammer: %d idle (cap 8), %d busy", c.idle, c.busy)
	}
}

// TestHost_sweep checks that the host's sweeper closes instances idle past
// PoolConfig.IdleTimeout.
func TestHost_sweep(t *testing.T) {
	p := loadHostile(t, Config{Pool: PoolConfig{IdleTimeout: 50 * time.Millisecond}})
	callOK(t, p, "fixture_echo", "u1", `{}`)
	callOK(t, p, "fixture_echo", "u2", `{}`)
	if s := p.Stats(); s.InstancesIdle != 2 {
		t.Fatalf("after two users' calls: %d idle instances, want 2", s.InstancesIdle)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().InstancesIdle != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d idle instances 5 s after an idle timeout of 50 ms", p.Stats().InstancesIdle)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := p.Stats(); s.MemoryPages != 0 {
		t.Fatalf("memory pages after the sweep = %d, want 0", s.MemoryPages)
	}
}
