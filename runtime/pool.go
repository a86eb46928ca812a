package runtime

import (
	"context"
	"sync"
	"time"
)

// instance is a pooled guest. It serves one call at a time and, once used,
// only the user it was created for.
type instance struct {
	guest
	user     string
	lastUsed time.Time
	pages    uint64 // memory size in pages when last released
}

// pool keeps idle instances per user. An instance is handed only to the user
// it was created for, so whatever a plugin keeps in globals or memory never
// reaches another user's call (docs/abi.md, section 6).
type pool struct {
	cfg PoolConfig
	new func(ctx context.Context, user string) (*instance, error)

	mu     sync.Mutex
	idle   map[string][]*instance // per user, most recently used last
	nIdle  int
	busy   map[*instance]struct{} // instances running a call
	closed bool
}

func newPool(cfg PoolConfig, create func(ctx context.Context, user string) (*instance, error)) *pool {
	return &pool{cfg: cfg, new: create, idle: map[string][]*instance{}, busy: map[*instance]struct{}{}}
}

// acquire returns an idle instance of the user's, or a new one.
func (p *pool) acquire(ctx context.Context, user string) (*instance, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	var in *instance
	if list := p.idle[user]; len(list) > 0 {
		in = list[len(list)-1]
		list[len(list)-1] = nil
		p.setIdle(user, list[:len(list)-1])
		p.nIdle--
		p.busy[in] = struct{}{}
	}
	p.mu.Unlock()
	if in != nil {
		return in, nil
	}
	in, err := p.new(ctx, user)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.busy[in] = struct{}{}
	p.mu.Unlock()
	return in, nil
}

// release returns a healthy instance to its user's idle list and closes a
// broken one. The oldest idle instances go first when a cap is exceeded.
func (p *pool) release(ctx context.Context, in *instance, healthy bool) {
	if !healthy {
		p.mu.Lock()
		delete(p.busy, in)
		p.mu.Unlock()
		in.close(ctx)
		return
	}
	pages := in.memoryPages()
	var evict []*instance
	p.mu.Lock()
	delete(p.busy, in)
	in.lastUsed = time.Now()
	in.pages = pages
	if p.closed {
		p.mu.Unlock()
		in.close(ctx)
		return
	}
	list := append(p.idle[in.user], in)
	if len(list) > p.cfg.MaxIdlePerUser {
		evict = append(evict, list[0])
		list = list[1:]
	} else {
		p.nIdle++
	}
	p.idle[in.user] = list
	for p.nIdle > p.cfg.MaxIdlePerPlugin {
		evict = append(evict, p.popOldest())
	}
	p.mu.Unlock()
	for _, e := range evict {
		e.close(ctx)
	}
}

// popOldest removes the least recently used idle instance; p.mu is held.
func (p *pool) popOldest() *instance {
	var oldestUser string
	var oldest *instance
	for user, list := range p.idle {
		if oldest == nil || list[0].lastUsed.Before(oldest.lastUsed) {
			oldest, oldestUser = list[0], user
		}
	}
	p.setIdle(oldestUser, p.idle[oldestUser][1:])
	p.nIdle--
	return oldest
}

func (p *pool) setIdle(user string, list []*instance) {
	if len(list) == 0 {
		delete(p.idle, user)
		return
	}
	p.idle[user] = list
}

// evictIdle closes instances idle since before cutoff.
func (p *pool) evictIdle(ctx context.Context, cutoff time.Time) {
	var evict []*instance
	p.mu.Lock()
	for user, list := range p.idle {
		n := 0
		for n < len(list) && list[n].lastUsed.Before(cutoff) {
			n++
		}
		evict = append(evict, list[:n]...)
		p.setIdle(user, list[n:])
		p.nIdle -= n
	}
	p.mu.Unlock()
	for _, e := range evict {
		e.close(ctx)
	}
}

// close closes every idle instance and refuses new acquisitions.
func (p *pool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle, p.nIdle = map[string][]*instance{}, 0
	p.mu.Unlock()
	for _, list := range idle {
		for _, in := range list {
			in.close(ctx)
		}
	}
}

// poolCounts is what a pool holds at one moment.
type poolCounts struct {
	idle, busy int
	users      int    // users with idle instances
	pages      uint64 // memory pages of every instance
	maxPages   uint64 // memory pages of the largest instance
}

// counts reports idle and busy instances and the memory pages they hold; a
// busy instance counts with its size when it was last released.
func (p *pool) counts() poolCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := poolCounts{idle: p.nIdle, busy: len(p.busy), users: len(p.idle)}
	add := func(in *instance) {
		c.pages += in.pages
		c.maxPages = max(c.maxPages, in.pages)
	}
	for _, list := range p.idle {
		for _, in := range list {
			add(in)
		}
	}
	for in := range p.busy {
		add(in)
	}
	return c
}
