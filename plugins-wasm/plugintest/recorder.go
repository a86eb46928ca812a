package plugintest

import (
	"slices"
	"sync"
)

// Recorder keeps the requests a fake API received, in order. R is the
// fake's own record of a request. The zero Recorder is ready and safe for
// concurrent use.
type Recorder[R any] struct {
	mu       sync.Mutex
	requests []R
}

// Add records r.
func (rec *Recorder[R]) Add(r R) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.requests = append(rec.requests, r)
}

// All returns a copy of every request recorded since the last Clear.
func (rec *Recorder[R]) All() []R {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.requests)
}

// Clear forgets the recorded requests.
func (rec *Recorder[R]) Clear() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.requests = nil
}
