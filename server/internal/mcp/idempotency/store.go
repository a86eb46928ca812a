package idempotency

import (
	"container/list"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Record is the stored outcome of one keyed execution.
type Record struct {
	// RequestHash identifies the request (tool and arguments) the key was
	// first used with.
	RequestHash string
	// Result is the outcome as the caller wants to replay it.
	Result json.RawMessage
	// StoredAt is when the record was stored; the store sets it.
	StoredAt time.Time
}

// Store keeps records by user and key. Keys are scoped to a user: two users
// may use the same key independently. Implementations must be safe for
// concurrent use.
type Store interface {
	// Get returns the record stored for userID and key, if any and not expired.
	Get(ctx context.Context, userID, key string) (Record, bool, error)
	// Put stores a record for userID and key unless one is already stored:
	// the first outcome for a key wins.
	Put(ctx context.Context, userID, key string, r Record) error
}

// Defaults of MemoryOptions.
const (
	DefaultTTL        = 24 * time.Hour
	DefaultMaxEntries = 10000
	DefaultMaxBytes   = 64 << 20
)

// MemoryOptions bound a Memory store. Zero fields take the defaults.
type MemoryOptions struct {
	TTL        time.Duration    // how long a record is replayed
	MaxEntries int              // records kept at most; the oldest go first
	MaxBytes   int              // bytes of results kept at most; the oldest go first
	Now        func() time.Time // clock; time.Now when nil
}

// Memory is an in-process Store bounded in entries, bytes and age.
type Memory struct {
	opts MemoryOptions

	mu     sync.Mutex
	order  *list.List // of *entry, oldest first
	byKey  map[memoryKey]*list.Element
	nbytes int
}

type memoryKey struct{ user, key string }

type entry struct {
	key    memoryKey
	record Record
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-process store.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Memory{opts: opts, order: list.New(), byKey: map[memoryKey]*list.Element{}}
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, userID, key string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	el, ok := m.byKey[memoryKey{userID, key}]
	if !ok {
		return Record{}, false, nil
	}
	return el.Value.(*entry).record, true, nil
}

// Put implements Store. A record larger than MaxBytes is not kept.
func (m *Memory) Put(_ context.Context, userID, key string, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	k := memoryKey{userID, key}
	if _, ok := m.byKey[k]; ok {
		return nil
	}
	size := len(r.Result) + len(r.RequestHash) + len(userID) + len(key)
	if size > m.opts.MaxBytes {
		return nil
	}
	r.StoredAt = m.opts.Now()
	r.Result = append(json.RawMessage(nil), r.Result...)
	m.byKey[k] = m.order.PushBack(&entry{key: k, record: r})
	m.nbytes += size
	for m.order.Len() > m.opts.MaxEntries || m.nbytes > m.opts.MaxBytes {
		m.remove(m.order.Front())
	}
	return nil
}

// Len returns the number of records kept.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	return m.order.Len()
}

// expire drops records older than the TTL. Records are in insertion order,
// so it stops at the first live one.
func (m *Memory) expire() {
	cutoff := m.opts.Now().Add(-m.opts.TTL)
	for el := m.order.Front(); el != nil; el = m.order.Front() {
		if el.Value.(*entry).record.StoredAt.After(cutoff) {
			return
		}
		m.remove(el)
	}
}

func (m *Memory) remove(el *list.Element) {
	e := m.order.Remove(el).(*entry)
	delete(m.byKey, e.key)
	m.nbytes -= len(e.record.Result) + len(e.record.RequestHash) + len(e.key.user) + len(e.key.key)
}
