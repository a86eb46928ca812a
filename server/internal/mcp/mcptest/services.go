package mcptest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// Connections is an in-memory metatools.Connections: Connect records a
// PENDING connection, Complete or Expire settles it, and Wait blocks until
// it settles or its timeout passes.
type Connections struct {
	// URL is the base of the authorization URLs Connect returns.
	URL string
	// Known lists the integrations Connect accepts.
	Known []string

	mu        sync.Mutex
	connected map[[2]string]bool // user, integration
	pending   map[string]*pending
	nextID    int
	changed   chan struct{} // closed and replaced on every change
	failWith  error
}

type pending struct {
	user, integration, status, reason string
}

var _ metatools.Connections = (*Connections)(nil)

// NewConnections returns a service that knows the given integrations.
func NewConnections(url string, known ...string) *Connections {
	return &Connections{URL: url, Known: known, connected: map[[2]string]bool{}, pending: map[string]*pending{}, changed: make(chan struct{})}
}

// SetConnected marks user as connected (or not) to integration.
func (c *Connections) SetConnected(user, integration string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connected[[2]string{user, integration}] = ok
}

// FailWith makes every call fail with err (nil to stop).
func (c *Connections) FailWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failWith = err
}

// Connected implements metatools.Connections.
func (c *Connections) Connected(_ context.Context, user, integration string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failWith != nil {
		return false, c.failWith
	}
	return c.connected[[2]string{user, integration}], nil
}

// Connect implements metatools.Connections.
func (c *Connections) Connect(_ context.Context, user, integration string) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failWith != nil {
		return "", "", c.failWith
	}
	if !slices.Contains(c.Known, integration) {
		return "", "", fmt.Errorf("%w: %s", failure.ErrUnknownIntegration, integration)
	}
	c.nextID++
	id := fmt.Sprintf("conn_%d", c.nextID)
	c.pending[id] = &pending{user: user, integration: integration, status: metatools.StatusPending}
	return c.URL + "/connect/" + id, id, nil
}

// Complete settles a pending connection as CONNECTED.
func (c *Connections) Complete(id string) { c.settle(id, metatools.StatusConnected, "") }

// Expire settles a pending connection as EXPIRED with reason.
func (c *Connections) Expire(id, reason string) { c.settle(id, metatools.StatusExpired, reason) }

func (c *Connections) settle(id, status, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p == nil {
		return
	}
	p.status, p.reason = status, reason
	if status == metatools.StatusConnected {
		c.connected[[2]string{p.user, p.integration}] = true
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Wait implements metatools.Connections.
func (c *Connections) Wait(ctx context.Context, user, id string, timeout time.Duration) (string, string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		p := c.pending[id]
		changed := c.changed
		if p == nil || p.user != user {
			c.mu.Unlock()
			return "", "", fmt.Errorf("%w: %s", failure.ErrUnknownConnection, id)
		}
		status, reason := p.status, p.reason
		c.mu.Unlock()
		if status != metatools.StatusPending {
			return status, reason, nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return metatools.StatusPending, "", nil
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
}

// CurlSessions is an in-memory metatools.CurlSessions that records mints.
type CurlSessions struct {
	Base string

	mu    sync.Mutex
	mints [][]string
}

var _ metatools.CurlSessions = (*CurlSessions)(nil)

// Mint implements metatools.CurlSessions.
func (s *CurlSessions) Mint(_ context.Context, user string, integrations []string) (metatools.CurlSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mints = append(s.mints, slices.Clone(integrations))
	ep := map[string]string{}
	for _, in := range integrations {
		ep[in] = s.Base + "/c/" + in + "/"
	}
	return metatools.CurlSession{Token: "cs_" + user, ExpiresAt: time.Date(2030, 1, 1, 0, 15, 0, 0, time.UTC), Endpoints: ep}, nil
}

// Mints returns the integrations of every mint so far.
func (s *CurlSessions) Mints() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mints)
}
