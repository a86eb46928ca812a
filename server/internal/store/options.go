package store

import "time"

// Options configure an implementation. The zero value uses the wall clock.
type Options struct {
	// Now is the clock behind every time the store records or compares;
	// nil means time.Now.
	Now func() time.Time
}

// Option changes Options.
type Option func(*Options)

// WithClock makes the store read time from now (tests move it forward).
func WithClock(now func() time.Time) Option {
	return func(o *Options) { o.Now = now }
}

// NewOptions applies opts over the defaults.
func NewOptions(opts ...Option) Options {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Clock returns the current time in UTC with the microsecond precision both
// databases keep, so a value read back equals the value written.
func (o Options) Clock() time.Time {
	return Round(o.Now())
}

// Round returns t in UTC truncated to microseconds, the precision the store
// keeps; the zero time stays zero.
func Round(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// TokenUseInterval is how stale a token's LastUsedAt may get before a lookup
// rewrites it.
const TokenUseInterval = time.Minute
