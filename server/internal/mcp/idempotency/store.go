package idempotency

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Omitted says the execution ran but its Result was over the store's
	// byte budget and was not kept; the key stays spent. The store sets it.
	Omitted bool
	// StoredAt is when the record was stored; the store sets it.
	StoredAt time.Time
}

// ErrCapacity is wrapped by Reserve and Put when a user holds as many live
// keys as the store allows. The store never makes room by dropping a live
// record (its retry would run the tool again), so the caller must not run
// the execution under that key.
var ErrCapacity = errors.New("idempotency key budget exhausted")

// Store keeps records by user and key. Keys are scoped to a user: two users
// may use the same key independently, and one user's records never take
// another's room. Implementations must be safe for concurrent use.
type Store interface {
	// Get returns the record stored for userID and key, if any and not expired.
	Get(ctx context.Context, userID, key string) (Record, bool, error)
	// Reserve claims room for userID's key before its execution runs, so
	// that Put cannot be refused afterwards. It fails with an error
	// wrapping ErrCapacity when the user's budget is taken by live records
	// and reservations. release gives the room back unless a record was put
	// for the key meanwhile; call it once, when the execution is over.
	Reserve(ctx context.Context, userID, key string) (release func(), err error)
	// Put stores a record for userID and key unless one is already stored:
	// the first outcome for a key wins. A key without a reservation takes
	// room if there is some (ErrCapacity otherwise).
	Put(ctx context.Context, userID, key string, r Record) error
}

// Defaults of MemoryOptions.
const (
	DefaultTTL             = 24 * time.Hour
	DefaultMaxKeysPerUser  = 10000
	DefaultMaxBytesPerUser = 8 << 20
	DefaultMaxBytes        = 64 << 20
)

// MemoryOptions bound a Memory store. Zero fields take the defaults.
type MemoryOptions struct {
	TTL             time.Duration    // how long a record is replayed and holds its room
	MaxKeysPerUser  int              // live records and reservations of one user
	MaxBytesPerUser int              // bytes of one user's results
	MaxBytes        int              // bytes of every user's results together
	Now             func() time.Time // clock; time.Now when nil
}

// Memory is an in-process Store bounded per user in keys and bytes, in
// bytes overall, and in age. Only age frees room: a record over a byte
// bound is kept without its result (Record.Omitted).
type Memory struct {
	opts MemoryOptions

	mu       sync.Mutex
	order    *list.List // of *entry, oldest first
	byKey    map[memoryKey]*list.Element
	reserved map[memoryKey]bool
	users    map[string]*usage
	nbytes   int
}

type memoryKey struct{ user, key string }

type entry struct {
	key    memoryKey
	record Record
}

// usage is what one user holds: live records plus reservations, and the
// bytes of the records.
type usage struct{ keys, bytes int }

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-process store.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxKeysPerUser <= 0 {
		opts.MaxKeysPerUser = DefaultMaxKeysPerUser
	}
	if opts.MaxBytesPerUser <= 0 {
		opts.MaxBytesPerUser = DefaultMaxBytesPerUser
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Memory{opts: opts, order: list.New(), byKey: map[memoryKey]*list.Element{},
		reserved: map[memoryKey]bool{}, users: map[string]*usage{}}
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

// Reserve implements Store.
func (m *Memory) Reserve(_ context.Context, userID, key string) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	k := memoryKey{userID, key}
	if _, ok := m.byKey[k]; ok || m.reserved[k] {
		return func() {}, nil // the room is taken already
	}
	if err := m.take(k); err != nil {
		return nil, err
	}
	m.reserved[k] = true
	var once sync.Once
	return func() { once.Do(func() { m.release(k) }) }, nil
}

func (m *Memory) release(k memoryKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reserved[k] {
		delete(m.reserved, k)
		m.give(k.user, 0)
	}
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, userID, key string, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	k := memoryKey{userID, key}
	if _, ok := m.byKey[k]; ok {
		return nil
	}
	if m.reserved[k] {
		delete(m.reserved, k)
	} else if err := m.take(k); err != nil {
		return err
	}
	u := m.users[userID]
	r.StoredAt = m.opts.Now()
	r.Omitted = false
	size := recordSize(k, r)
	if u.bytes+size > m.opts.MaxBytesPerUser || m.nbytes+size > m.opts.MaxBytes {
		r.Result, r.Omitted = nil, true
		size = recordSize(k, r)
	} else {
		r.Result = append(json.RawMessage(nil), r.Result...)
	}
	m.byKey[k] = m.order.PushBack(&entry{key: k, record: r})
	u.bytes += size
	m.nbytes += size
	return nil
}

// take counts one more key for k's user, or fails with ErrCapacity.
func (m *Memory) take(k memoryKey) error {
	u := m.users[k.user]
	if u == nil {
		u = &usage{}
		m.users[k.user] = u
	}
	if u.keys >= m.opts.MaxKeysPerUser {
		return fmt.Errorf("%w: you hold %d live idempotency keys, the limit per user; each frees %s after it was stored",
			ErrCapacity, u.keys, m.opts.TTL)
	}
	u.keys++
	return nil
}

// give returns one key and size bytes of user's room.
func (m *Memory) give(user string, size int) {
	u := m.users[user]
	u.keys--
	u.bytes -= size
	m.nbytes -= size
	if u.keys == 0 {
		delete(m.users, user)
	}
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
		e := el.Value.(*entry)
		if e.record.StoredAt.After(cutoff) {
			return
		}
		m.order.Remove(el)
		delete(m.byKey, e.key)
		m.give(e.key.user, recordSize(e.key, e.record))
	}
}

func recordSize(k memoryKey, r Record) int {
	return len(r.Result) + len(r.RequestHash) + len(k.user) + len(k.key)
}
