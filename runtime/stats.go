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

// Quantile estimates the q-quantile (0 < q <= 1) of the observations by
// linear interpolation inside the bucket that holds it, as Prometheus's
// histogram_quantile does; observations over the last bound count as the
// last bound. It is 0 without observations.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Count == 0 || len(h.Counts) == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	var below uint64
	for i, n := range h.Counts {
		if n == 0 || float64(below+n) < rank {
			below += n
			continue
		}
		if i == len(LatencyBounds) {
			break
		}
		lower := 0.0
		if i > 0 {
			lower = LatencyBounds[i-1]
		}
		upper := LatencyBounds[i]
		secs := lower + (upper-lower)*(rank-float64(below))/float64(n)
		return time.Duration(secs * float64(time.Second))
	}
	return time.Duration(LatencyBounds[len(LatencyBounds)-1] * float64(time.Second))
}

// CallStats are counters for a plugin or one of its tools.
type CallStats struct {
	Calls  uint64
	Errors uint64
	// ErrorsByCode counts errors by code. A plugin chooses its own codes,
	// so at most MaxErrorCodes distinct codes are kept; the errors of any
	// further code count under OtherCodes.
	ErrorsByCode map[failure.Code]uint64
	Latency      Histogram
}

// Bounds of the error counters, which a plugin's own error codes feed.
const (
	// MaxErrorCodes is the number of distinct error codes counted per
	// plugin and per tool.
	MaxErrorCodes = 32
	// OtherCodes counts the errors whose code came after MaxErrorCodes others.
	OtherCodes failure.Code = "OTHER"
	// RecentErrors is the number of recent errors a plugin remembers.
	RecentErrors = 20
)

// RecentError is one failed call: when, which tool, which code; never the
// arguments, the message or the user.
type RecentError struct {
	At   time.Time
	Tool string // a tool slug, or a resource or prompt export
	Code failure.Code
}

// Stats is a snapshot of one plugin's counters.
type Stats struct {
	CallStats
	HTTPRequests  uint64
	EgressDenied  uint64
	InstancesIdle int
	InstancesBusy int
	PoolUsers     int           // users with idle instances
	MemoryPages   uint64        // pages in use by the plugin's live instances
	MaxPages      uint64        // pages of the largest live instance
	Recent        []RecentError // the last RecentErrors errors, oldest first
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
	if _, ok := c.byCode[code]; !ok && len(c.byCode) >= MaxErrorCodes {
		code = OtherCodes
	}
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

// errorLog remembers a plugin's last RecentErrors failed calls.
type errorLog struct {
	mu   sync.Mutex
	ring [RecentErrors]RecentError
	next int // index of the next entry to write
	n    int // entries written, at most RecentErrors
}

func (l *errorLog) add(tool string, code failure.Code) {
	l.mu.Lock()
	l.ring[l.next] = RecentError{At: time.Now(), Tool: tool, Code: code}
	l.next = (l.next + 1) % RecentErrors
	l.n = min(l.n+1, RecentErrors)
	l.mu.Unlock()
}

// list returns the remembered errors, oldest first.
func (l *errorLog) list() []RecentError {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RecentError, 0, l.n)
	for i := range l.n {
		out = append(out, l.ring[(l.next-l.n+i+RecentErrors)%RecentErrors])
	}
	return out
}

// ABI names the plugin's ABI: "workbench_v1", or "extism" for a plugin an
// ABI such as Extism's (Config.Extism) runs.
func (p *Plugin) ABI() string {
	if _, ok := p.engine.(*abiEngine); ok {
		return "extism"
	}
	return ImportModule
}
