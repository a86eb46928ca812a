package runtime

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

// LatencyBounds are the upper bounds, in seconds, of the latency histogram buckets.
var LatencyBounds = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
}

// Histogram is a snapshot of a latency histogram. Counts[i] counts
// observations at most LatencyBounds[i]; the last entry counts the rest.
type Histogram struct {
	Counts []uint64
	Sum    time.Duration
	Count  uint64
}

// CallStats are counters for a plugin or one of its tools.
type CallStats struct {
	Calls        uint64
	Errors       uint64
	ErrorsByCode map[failure.Code]uint64
	Latency      Histogram
}

// Stats is a snapshot of one plugin's counters.
type Stats struct {
	CallStats
	HTTPRequests  uint64
	EgressDenied  uint64
	InstancesIdle int
	InstancesBusy int
	MemoryPages   uint64 // pages in use by the plugin's live instances
	Tools         map[string]CallStats
}

// callCounters is the live, concurrency-safe form of CallStats.
type callCounters struct {
	calls   atomic.Uint64
	errors  atomic.Uint64
	sumNano atomic.Int64
	buckets []atomic.Uint64

	mu     sync.Mutex
	byCode map[failure.Code]uint64
}

func newCallCounters() *callCounters {
	return &callCounters{buckets: make([]atomic.Uint64, len(LatencyBounds)+1), byCode: map[failure.Code]uint64{}}
}

func (c *callCounters) observe(d time.Duration, code failure.Code) {
	c.calls.Add(1)
	c.sumNano.Add(int64(d))
	c.buckets[sort.SearchFloat64s(LatencyBounds, d.Seconds())].Add(1)
	if code == "" {
		return
	}
	c.errors.Add(1)
	c.mu.Lock()
	c.byCode[code]++
	c.mu.Unlock()
}

func (c *callCounters) snapshot() CallStats {
	s := CallStats{Calls: c.calls.Load(), Errors: c.errors.Load(), ErrorsByCode: map[failure.Code]uint64{}}
	s.Latency.Counts = make([]uint64, len(c.buckets))
	for i := range c.buckets {
		s.Latency.Counts[i] = c.buckets[i].Load()
		s.Latency.Count += s.Latency.Counts[i]
	}
	s.Latency.Sum = time.Duration(c.sumNano.Load())
	c.mu.Lock()
	for k, v := range c.byCode {
		s.ErrorsByCode[k] = v
	}
	c.mu.Unlock()
	return s
}
