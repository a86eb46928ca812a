package runtime

import (
	"time"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Limits bound what one plugin or one tool call may use (docs/abi.md, section 7).
type Limits struct {
	Timeout       time.Duration
	MemoryPages   uint32
	OutputBytes   int64
	ResponseBytes int64
	Concurrency   int
}

// Host-wide constants of ABI v1.
const (
	MaxInputBytes        = 4 << 20
	MaxRequestsPerCall   = 100
	MaxLogRecordBytes    = 4 << 10 // a log record is cut to this length
	maxLogRecordsPerCall = 1000
)

// DefaultLimits apply when a plugin requests nothing.
var DefaultLimits = Limits{
	Timeout:       30 * time.Second,
	MemoryPages:   512,
	OutputBytes:   1 << 20,
	ResponseBytes: 8 << 20,
	Concurrency:   16,
}

// CeilingLimits are the most a plugin can request.
var CeilingLimits = Limits{
	Timeout:       120 * time.Second,
	MemoryPages:   4096,
	OutputBytes:   16 << 20,
	ResponseBytes: 64 << 20,
	Concurrency:   64,
}

// apply overlays the requested limits on l, each cut to the ceiling.
func (l Limits) apply(req *manifest.Limits, ceiling Limits) Limits {
	if req == nil {
		return l
	}
	if req.TimeoutMs > 0 {
		l.Timeout = min(time.Duration(req.TimeoutMs)*time.Millisecond, ceiling.Timeout)
	}
	if req.MemoryPages > 0 {
		l.MemoryPages = min(uint32(min(req.MemoryPages, 65536)), ceiling.MemoryPages)
	}
	if req.OutputBytes > 0 {
		l.OutputBytes = min(req.OutputBytes, ceiling.OutputBytes)
	}
	if req.ResponseBytes > 0 {
		l.ResponseBytes = min(req.ResponseBytes, ceiling.ResponseBytes)
	}
	if req.Concurrency > 0 {
		l.Concurrency = min(req.Concurrency, ceiling.Concurrency)
	}
	return l
}
