package mcptest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// errUnknownToken is wrapped, next to Tokens.Unauthenticated, for a token
// Tokens does not know.
var errUnknownToken = errors.New("unknown token")

// Tokens is an in-memory authenticator: a token maps to its user.
type Tokens struct {
	// Unauthenticated is wrapped for unknown tokens; set it to
	// failure.ErrUnauthenticated.
	Unauthenticated error

	mu     sync.Mutex
	users  map[string]metatools.Principal
	broken error
}

// NewTokens returns an authenticator that wraps unauthenticated for unknown tokens.
func NewTokens(unauthenticated error) *Tokens {
	return &Tokens{Unauthenticated: unauthenticated, users: map[string]metatools.Principal{}}
}

// Add makes token authenticate as p.
func (t *Tokens) Add(token string, p metatools.Principal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.users[token] = p
}

// Break makes every lookup fail with err, as a store outage would (nil heals).
func (t *Tokens) Break(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.broken = err
}

// Authenticate implements mcp.Authenticator.
func (t *Tokens) Authenticate(_ context.Context, token string) (metatools.Principal, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return metatools.Principal{}, t.broken
	}
	p, ok := t.users[token]
	if !ok {
		return metatools.Principal{}, fmt.Errorf("%w: %w", t.Unauthenticated, errUnknownToken)
	}
	return p, nil
}
