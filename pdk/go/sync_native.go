//go:build !wasip1

package pdk

import (
	"sync"
	"sync/atomic"
)

// exportMutex guards state the exports share. Native callers (tests) may
// run tools from several goroutines, so it is a real mutex here; in wasm it
// does nothing (sync_wasip1.go).
type exportMutex = sync.Mutex

// spare holds one value kept between calls.
type spare[T any] = atomic.Pointer[T]
