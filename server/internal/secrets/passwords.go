package secrets

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"
)

// Defaults of PasswordOptions.
const (
	DefaultPasswordWait = 2 * time.Second
	// BusyRetryAfter is what a caller refused with ErrBusy is told to wait.
	BusyRetryAfter = time.Second
)

// ErrBusy: every password run slot and queue place is taken; the caller
// should answer at once (429 or 503 with Retry-After) rather than wait.
var ErrBusy = errors.New("password hashing is at capacity")

// PasswordOptions configure Passwords. Every zero value has a default.
type PasswordOptions struct {
	// Concurrency bounds the argon2id runs in flight
	// (PASSWORD_HASH_CONCURRENCY); 0 means the number of CPUs.
	Concurrency int
	// Queue bounds the callers waiting for a run; 0 means twice
	// Concurrency, negative means none wait.
	Queue int
	// MaxWait bounds a queued caller's wait; 0 means DefaultPasswordWait.
	MaxWait time.Duration
	// Cost is the cost of new hashes; zero means DefaultPasswordCost.
	Cost PasswordCost
}

// Passwords hashes and verifies passwords under one bound on the argon2id
// runs in flight. Each run holds Cost.MemoryKiB of memory for tens of
// milliseconds, so unbounded concurrency lets anyone who can post a password
// exhaust the host. A caller past the bound waits in a short queue; with the
// queue full, or after MaxWait, it gets ErrBusy. The server makes one for
// the process and hands it to everything that checks or sets a password.
type Passwords struct {
	cost    PasswordCost
	running chan struct{} // a token per run in flight
	waiting chan struct{} // a token per caller queued
	maxWait time.Duration
	dummy   func() (string, error)
}

// NewPasswords returns Passwords configured by o.
func NewPasswords(o PasswordOptions) *Passwords {
	if o.Concurrency <= 0 {
		o.Concurrency = goruntime.NumCPU()
	}
	if o.Queue == 0 {
		o.Queue = 2 * o.Concurrency
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultPasswordWait
	}
	if o.Cost == (PasswordCost{}) {
		o.Cost = DefaultPasswordCost
	}
	p := &Passwords{cost: o.Cost, running: make(chan struct{}, o.Concurrency),
		waiting: make(chan struct{}, max(o.Queue, 0)), maxWait: o.MaxWait}
	p.dummy = sync.OnceValues(func() (string, error) {
		return hashPassword("workbench timing equaliser", p.cost)
	})
	return p
}

// Hash returns the argon2id hash of password. An empty or overlong password
// wraps ErrPassword; no free run wraps ErrBusy.
func (p *Passwords) Hash(ctx context.Context, password string) (string, error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return hashPassword(password, p.cost)
}

// Verify reports whether password matches the encoded hash. A malformed hash
// wraps ErrPasswordHash; no free run wraps ErrBusy.
func (p *Passwords) Verify(ctx context.Context, password, encoded string) (bool, error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return verifyPassword(password, encoded)
}

// VerifyNothing costs what Verify costs and matches nothing: it is checked
// for an unknown account, so a sign-in takes as long whether or not the
// account exists.
func (p *Passwords) VerifyNothing(ctx context.Context, password string) error {
	release, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	dummy, err := p.dummy()
	if err != nil {
		return err
	}
	_, err = verifyPassword(password, dummy)
	return err
}

// acquire takes a run slot, queueing for at most maxWait when none is free
// and a queue place is.
func (p *Passwords) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-p.running }
	select {
	case p.running <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case p.waiting <- struct{}{}:
	default:
		return nil, p.busy("the queue is full")
	}
	defer func() { <-p.waiting }()
	t := time.NewTimer(p.maxWait)
	defer t.Stop()
	select {
	case p.running <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, p.busy(fmt.Sprintf("no slot freed within %v", p.maxWait))
	case <-ctx.Done():
		return nil, fmt.Errorf("secrets: waiting to check a password: %w", ctx.Err())
	}
}

func (p *Passwords) busy(why string) error {
	return fmt.Errorf("secrets: %w: %d runs at once (PASSWORD_HASH_CONCURRENCY), %d may wait; %s",
		ErrBusy, cap(p.running), cap(p.waiting), why)
}
