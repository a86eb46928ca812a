package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// testAttempts checks the attempt counter's backoff, forgetting, clearing,
// pruning and bad input.
func testAttempts(t *testing.T, h *harness) {
	st := h.st
	p := store.AttemptPolicy{Free: 3, Wait: 10 * time.Second, MaxWait: 35 * time.Second, Forget: time.Hour}
	take := func(key string) time.Duration {
		t.Helper()
		wait, err := st.TakeAttempt(ctx, key, p)
		must(t, "TakeAttempt", err)
		return wait
	}
	for i := range 3 {
		if w := take("a"); w != 0 {
			t.Fatalf("attempt %d waits %v, want 0", i+1, w)
		}
	}
	// The third attempt made the next one wait 10 s.
	if w := take("a"); w != 10*time.Second {
		t.Fatalf("fourth attempt waits %v, want 10s", w)
	}
	h.clock.Advance(4 * time.Second)
	if w := take("a"); w != 6*time.Second {
		t.Fatalf("fourth attempt 4 s later waits %v, want 6s", w)
	}
	if w := take("other"); w != 0 {
		t.Fatalf("another key waits %v", w)
	}
	// Each attempt past Free doubles the wait, up to MaxWait.
	h.clock.Advance(6 * time.Second) // the wait is over
	for _, want := range []time.Duration{20 * time.Second, 35 * time.Second, 35 * time.Second} {
		if w := take("a"); w != 0 {
			t.Fatalf("attempt after the wait waits %v", w)
		}
		if w := take("a"); w != want {
			t.Fatalf("next wait %v, want %v", w, want)
		}
		h.clock.Advance(want)
	}
	// A key quiet for Forget starts over.
	h.clock.Advance(time.Hour)
	for i := range 3 {
		if w := take("a"); w != 0 {
			t.Fatalf("after forgetting, attempt %d waits %v", i+1, w)
		}
	}
	must(t, "ClearAttempts", st.ClearAttempts(ctx, "a"))
	if w := take("a"); w != 0 {
		t.Fatalf("after clearing waits %v", w)
	}

	// Pruning keeps waiting keys and recent ones.
	h.clock.Advance(2 * time.Hour)
	take("b")
	take("b")
	take("b") // waiting 10 s now
	n, err := st.PruneAttempts(ctx, time.Hour)
	must(t, "PruneAttempts", err)
	if n != 2 { // "a" and "other"
		t.Fatalf("PruneAttempts = %d, want 2", n)
	}
	if w := take("b"); w != 10*time.Second {
		t.Fatalf("a pruning lost a waiting key: waits %v", w)
	}

	for _, bad := range []struct {
		key string
		p   store.AttemptPolicy
	}{
		{"", p},
		{strings.Repeat("k", store.MaxAttemptKeyLen+1), p},
		{"k", store.AttemptPolicy{Free: 0, Wait: time.Second, MaxWait: time.Second, Forget: time.Hour}},
		{"k", store.AttemptPolicy{Free: 1, Wait: time.Second, MaxWait: time.Millisecond, Forget: time.Hour}},
	} {
		if _, err := st.TakeAttempt(ctx, bad.key, bad.p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("TakeAttempt(%d-byte key, %+v) err = %v, want ErrInvalid", len(bad.key), bad.p, err)
		}
	}
}

// testConcurrentAttempts takes many attempts on one key at once: exactly
// Free of them may go ahead, however they interleave.
func testConcurrentAttempts(t *testing.T, h *harness) {
	p := store.AttemptPolicy{Free: 5, Wait: time.Minute, MaxWait: time.Hour, Forget: time.Hour}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range 4 * hammerWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := h.st.TakeAttempt(ctx, "burst", p)
			if err != nil {
				t.Error(err)
				return
			}
			if wait == 0 {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != p.Free {
		t.Fatalf("%d of a burst of %d went ahead, want %d", allowed, 4*hammerWorkers, p.Free)
	}
}
