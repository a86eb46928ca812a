package accounts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Defaults of TokenCacheOptions.
const (
	DefaultTokenGrace      = 60 * time.Second
	DefaultTokenCacheLimit = 10000
)

// Identity is who a bearer token stands for.
type Identity struct {
	User   store.User
	Scopes []string // nil: every scope (an API token)
}

// TokenCacheOptions configure a TokenCache. Every zero value has a default.
type TokenCacheOptions struct {
	// Grace is how long after its last check a token keeps working while
	// the store is unavailable. 0 means DefaultTokenGrace.
	Grace time.Duration
	// Limit bounds the tokens remembered; 0 means DefaultTokenCacheLimit.
	Limit int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// TokenCache remembers the bearer tokens (by hash) the store confirmed
// recently, so that calls that need nothing else from the store keep
// working through a store outage of up to Grace. While the store answers,
// every request is checked against it, so a revoked token stops at once,
// whichever process revoked it. It is safe for concurrent use.
type TokenCache struct {
	grace time.Duration
	limit int
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]cachedToken
}

type cachedToken struct {
	id      Identity
	checked time.Time
}

// NewTokenCache returns an empty cache.
func NewTokenCache(o TokenCacheOptions) *TokenCache {
	c := &TokenCache{grace: o.Grace, limit: o.Limit, now: o.Now, entries: map[string]cachedToken{}}
	if c.grace <= 0 {
		c.grace = DefaultTokenGrace
	}
	if c.limit <= 0 {
		c.limit = DefaultTokenCacheLimit
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Resolve returns the identity lookup finds for bearer. A token lookup
// refuses (failure.ErrUnauthenticated) is forgotten at once. When lookup
// fails otherwise (the store is down), a token confirmed within Grace keeps
// its last identity, and any other fails wrapping failure.ErrUnavailable.
func (c *TokenCache) Resolve(ctx context.Context, bearer string, lookup func(context.Context) (Identity, error)) (Identity, error) {
	key := secrets.HashToken(bearer)
	now := c.now()
	id, err := lookup(ctx)
	switch {
	case err == nil:
		c.put(key, cachedToken{id: id, checked: now})
		return id, nil
	case errors.Is(err, failure.ErrUnauthenticated):
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
		return Identity{}, err
	case ctx.Err() != nil:
		return Identity{}, err
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	switch {
	case ok && now.Sub(e.checked) < c.grace:
		return e.id, nil
	case errors.Is(err, failure.ErrUnavailable):
		return Identity{}, err
	default:
		return Identity{}, fmt.Errorf("%w: checking a token: %w", failure.ErrUnavailable, err)
	}
}

// put remembers a checked token. When the cache is full it first drops the
// tokens past Grace (useless even in an outage), then any.
func (c *TokenCache) put(key string, e cachedToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.limit {
		cutoff := e.checked.Add(-c.grace)
		for k, old := range c.entries {
			if old.checked.Before(cutoff) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries { // still full: drop any
			if len(c.entries) < c.limit {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = e
}
