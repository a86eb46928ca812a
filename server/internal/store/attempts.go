package store

import (
	"context"
	"fmt"
	"time"
)

// AttemptStore counts attempts at guarded actions (a sign-in, a jot
// password) per key, in the database, so that every replica enforces one
// limit and a burst of concurrent attempts is counted before any is checked.
type AttemptStore interface {
	// TakeAttempt counts one attempt against key under p and returns zero
	// when it may go ahead, or how long the caller must wait first (the
	// attempt is then not counted). Taking and counting are one atomic step.
	// A malformed key or policy is ErrInvalid.
	TakeAttempt(ctx context.Context, key string, p AttemptPolicy) (time.Duration, error)
	// ClearAttempts forgets key's attempts (after a success).
	ClearAttempts(ctx context.Context, key string) error
	// PruneAttempts deletes keys that are not waiting and saw no attempt
	// for quiet, and returns how many.
	PruneAttempts(ctx context.Context, quiet time.Duration) (int, error)
}

// MaxAttemptKeyLen caps an attempt key in bytes.
const MaxAttemptKeyLen = 512

// AttemptPolicy says how many attempts a key gets before it must wait, and
// how the wait grows: attempt number Free and every later one make the next
// attempt wait Wait, doubled per attempt past Free, at most MaxWait. A key
// with no attempt for Forget starts over.
type AttemptPolicy struct {
	Free    int
	Wait    time.Duration
	MaxWait time.Duration
	Forget  time.Duration
}

// Check reports a policy that cannot work as ErrInvalid.
func (p AttemptPolicy) Check() error {
	if p.Free < 1 || p.Wait <= 0 || p.MaxWait < p.Wait || p.Forget <= 0 {
		return fmt.Errorf("store: attempt policy %+v: %w", p, ErrInvalid)
	}
	return nil
}

// Next returns the attempt count and block that follow an attempt at now,
// given the key's count so far and its last attempt.
func (p AttemptPolicy) Next(taken int, last, now time.Time) (int, time.Time) {
	if now.Sub(last) >= p.Forget {
		taken = 0
	}
	taken++
	if taken < p.Free {
		return taken, time.Time{}
	}
	wait := p.MaxWait
	if shift := taken - p.Free; shift < 30 && p.Wait<<shift < p.MaxWait {
		wait = p.Wait << shift
	}
	return taken, now.Add(wait)
}

// CheckAttemptKey reports a malformed attempt key as ErrInvalid.
func CheckAttemptKey(key string) error {
	if key == "" || len(key) > MaxAttemptKeyLen {
		return fmt.Errorf("store: attempt key of %d bytes (1 to %d): %w", len(key), MaxAttemptKeyLen, ErrInvalid)
	}
	return nil
}
