package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

func TestHistogram_Quantile(t *testing.T) {
	// observe fills a histogram through the live counters.
	observe := func(ds ...time.Duration) Histogram {
		c := newCallCounters()
		for _, d := range ds {
			c.observe(d, "")
		}
		return c.snapshot().Latency
	}
	ms := time.Millisecond
	tests := []struct {
		name string
		h    Histogram
		q    float64
		want time.Duration
	}{
		{"empty", observe(), 0.5, 0},
		// Ten calls in the (1ms, 2.5ms] bucket: the median sits halfway.
		{"one bucket p50", observe(2*ms, 2*ms, 2*ms, 2*ms, 2*ms, 2*ms, 2*ms, 2*ms, 2*ms, 2*ms), 0.5, 1750 * time.Microsecond},
		{"one bucket p100", observe(2*ms, 2*ms), 1, 2500 * time.Microsecond},
		// Nine calls in (0.5ms, 1ms] and one slow one: p50 is fast, p99 is in the slow bucket.
		{"tail p50", observe(ms, ms, ms, ms, ms, ms, ms, ms, ms, 4*time.Second), 0.5, 777777 * time.Nanosecond},
		{"tail p99", observe(ms, ms, ms, ms, ms, ms, ms, ms, ms, 4*time.Second), 0.99, 4750 * ms},
		// Past the last bound the estimate is the last bound.
		{"overflow", observe(2 * time.Minute), 0.5, 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.h.Quantile(tt.q)
			if diff := got - tt.want; diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

// TestCallCounters_observe checks that a plugin inventing codes cannot grow
// the counters past MaxErrorCodes.
func TestCallCounters_observe(t *testing.T) {
	c := newCallCounters()
	const extra = 10
	for i := range MaxErrorCodes + extra {
		c.observe(time.Millisecond, failure.Code(fmt.Sprintf("CODE_%d", i)))
	}
	c.observe(time.Millisecond, "CODE_0") // a code already counted keeps its own entry
	s := c.snapshot()
	if len(s.ErrorsByCode) != MaxErrorCodes+1 {
		t.Fatalf("%d codes kept, want %d and %s", len(s.ErrorsByCode), MaxErrorCodes, OtherCodes)
	}
	if s.ErrorsByCode[OtherCodes] != extra || s.ErrorsByCode["CODE_0"] != 2 {
		t.Errorf("OTHER = %d (want %d), CODE_0 = %d (want 2)", s.ErrorsByCode[OtherCodes], extra, s.ErrorsByCode["CODE_0"])
	}
	if s.Calls != MaxErrorCodes+extra+1 || s.Errors != s.Calls {
		t.Errorf("calls %d, errors %d", s.Calls, s.Errors)
	}
}

func TestErrorLog_list(t *testing.T) {
	tests := []struct {
		added     int
		wantFirst string
	}{
		{0, ""},
		{3, "t0"},
		{RecentErrors, "t0"},
		{RecentErrors + 7, "t7"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.added), func(t *testing.T) {
			var l errorLog
			for i := range tt.added {
				l.add(fmt.Sprintf("t%d", i), failure.Trap)
			}
			got := l.list()
			if len(got) != min(tt.added, RecentErrors) {
				t.Fatalf("%d entries, want %d", len(got), min(tt.added, RecentErrors))
			}
			if len(got) == 0 {
				return
			}
			if got[0].Tool != tt.wantFirst || got[len(got)-1].Tool != fmt.Sprintf("t%d", tt.added-1) {
				t.Errorf("entries run %s..%s, want %s..t%d", got[0].Tool, got[len(got)-1].Tool, tt.wantFirst, tt.added-1)
			}
		})
	}
}

func TestPool_counts(t *testing.T) {
	ctx := context.Background()
	var guests fakeGuests
	p := newPool(PoolConfig{}.withDefaults(), guests.create)
	a, _ := p.acquire(ctx, "alice")
	b, _ := p.acquire(ctx, "bob")
	c, _ := p.acquire(ctx, "bob")
	guestOf(b).pages = 9 // bob's first instance grows during its call
	p.release(ctx, b, true)
	want := poolCounts{idle: 1, busy: 2, users: 1, pages: 2 + 9 + 2, maxPages: 9}
	if got := p.counts(); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	p.release(ctx, a, true)
	p.release(ctx, c, false) // broken: closed, no longer counted
	want = poolCounts{idle: 2, busy: 0, users: 2, pages: 2 + 9, maxPages: 9}
	if got := p.counts(); got != want {
		t.Fatalf("after releases: counts = %+v, want %+v", got, want)
	}
}
