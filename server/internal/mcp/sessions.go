package mcp

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the session bounds in Options.
const (
	DefaultSessionsPerUser   = 100
	DefaultMaxSessions       = 10000
	DefaultUnusedSessionIdle = 5 * time.Minute
)

// sessionSweepInterval is how often sessions that never made a call are
// looked for besides every new session.
const sessionSweepInterval = time.Minute

// sessionBounds bounds the 2025-era sessions, which the SDK keeps in
// memory until they idle out (Options.SessionIdle): each user keeps the
// newest SessionsPerUser (older ones are closed), the server holds at most
// MaxSessions (an initialize past it is refused), and a session that made
// no call within UnusedSessionIdle of its start is closed.
//
// The SDK has no hook for a session's creation or end, so the bounds see
// sessions through a receiving middleware (initialize creates one, any
// other request but ping uses it) and learn of the ones the SDK closed from
// Server.Sessions when they sweep.
type sessionBounds struct {
	perUser, max int
	unusedIdle   time.Duration
	now          func() time.Time
	live         func() iter.Seq[*sdk.ServerSession]

	mu      sync.Mutex
	tracked map[*sdk.ServerSession]*sessionInfo
}

type sessionInfo struct {
	user    string
	started time.Time
	used    bool
}

func newSessionBounds(opts Options, live func() iter.Seq[*sdk.ServerSession]) *sessionBounds {
	b := &sessionBounds{perUser: opts.SessionsPerUser, max: opts.MaxSessions, unusedIdle: opts.UnusedSessionIdle,
		now: opts.Now, live: live, tracked: map[*sdk.ServerSession]*sessionInfo{}}
	if b.perUser <= 0 {
		b.perUser = DefaultSessionsPerUser
	}
	if b.max <= 0 {
		b.max = DefaultMaxSessions
	}
	if b.unusedIdle <= 0 {
		b.unusedIdle = DefaultUnusedSessionIdle
	}
	if b.now == nil {
		b.now = time.Now
	}
	return b
}

// middleware counts every session's initialize and notes its first call.
// Stateless-era requests (sessions without an ID) pass untouched.
func (b *sessionBounds) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if !ok || ss.ID() == "" {
			return next(ctx, method, req)
		}
		switch method {
		case "initialize":
			p, ok := principalOf(tokenInfo(req.GetExtra()))
			if !ok {
				return nil, errNoPrincipal
			}
			if err := b.open(ss, p.UserID); err != nil {
				return nil, err
			}
		case "ping", "notifications/initialized":
		default:
			b.use(ss)
		}
		return next(ctx, method, req)
	}
}

// open admits a new session of user: it sweeps, closes the user's oldest
// sessions past the per-user bound, and refuses the session when the
// server would hold more than it may.
func (b *sessionBounds) open(ss *sdk.ServerSession, user string) error {
	b.mu.Lock()
	doomed := b.sweepLocked()
	evict := b.oldestLocked(user)
	var err error
	if len(b.tracked)-len(evict) >= b.max {
		err = fmt.Errorf("the server holds %d sessions, its limit; try again later, or use the stateless protocol (%s)", b.max, newEra)
	} else {
		for _, old := range evict {
			delete(b.tracked, old)
		}
		doomed = append(doomed, evict...)
		b.tracked[ss] = &sessionInfo{user: user, started: b.now()}
	}
	b.mu.Unlock()
	b.close(doomed)
	return err
}

// oldestLocked returns the user's oldest sessions that one more would put
// past the per-user bound.
func (b *sessionBounds) oldestLocked(user string) []*sdk.ServerSession {
	var mine []*sdk.ServerSession
	for ss, info := range b.tracked {
		if info.user == user {
			mine = append(mine, ss)
		}
	}
	excess := len(mine) - b.perUser + 1
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(mine, func(x, y *sdk.ServerSession) int { return b.tracked[x].started.Compare(b.tracked[y].started) })
	return mine[:excess]
}

func (b *sessionBounds) use(ss *sdk.ServerSession) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if info := b.tracked[ss]; info != nil {
		info.used = true
	}
}

// sweep closes the sessions that made no call within the idle bound.
func (b *sessionBounds) sweep() {
	b.mu.Lock()
	doomed := b.sweepLocked()
	b.mu.Unlock()
	b.close(doomed)
}

// sweepLocked forgets the sessions the SDK closed, and stops tracking and
// returns the ones that never made a call and are past the idle bound.
func (b *sessionBounds) sweepLocked() []*sdk.ServerSession {
	live := map[*sdk.ServerSession]bool{}
	for ss := range b.live() {
		live[ss] = true
	}
	cutoff := b.now().Add(-b.unusedIdle)
	var doomed []*sdk.ServerSession
	for ss, info := range b.tracked {
		switch {
		case !live[ss]:
			delete(b.tracked, ss)
		case !info.used && !info.started.After(cutoff):
			delete(b.tracked, ss)
			doomed = append(doomed, ss)
		}
	}
	return doomed
}

// close closes sessions in the background: Close waits for their calls in
// flight, which must not hold up the request that evicted them. Each
// goroutine ends with its session's calls, which Endpoint.Close ends.
func (b *sessionBounds) close(doomed []*sdk.ServerSession) {
	for _, ss := range doomed {
		go func() { _ = ss.Close() }()
	}
}

// run sweeps every sessionSweepInterval until ctx ends.
func (b *sessionBounds) run(ctx context.Context) {
	t := time.NewTicker(sessionSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.sweep()
		}
	}
}
