package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// CurlStore holds curl-session tokens and the proxy's audit log.
type CurlStore interface {
	// CreateCurlSession records a curl session with a new id ("cs_...").
	// The token itself is never stored, only its hash. An unknown user is
	// ErrNotFound; a hash already used is ErrConflict.
	CreateCurlSession(ctx context.Context, n NewCurlSession) (CurlSession, error)
	// CurlSessionByHash returns the session whose token has this hash,
	// revoked and expired ones included until they are pruned, so the
	// caller can say why a token no longer works. Unknown is ErrNotFound.
	CurlSessionByHash(ctx context.Context, hash string) (CurlSession, error)
	// CurlSessions lists the user's sessions (revoked and expired ones until
	// pruned), newest first.
	CurlSessions(ctx context.Context, userID string) ([]CurlSession, error)
	// RevokeCurlSession revokes one of the user's sessions. Another user's
	// session or an unknown id is ErrNotFound; revoking twice is not an
	// error and keeps the first RevokedAt.
	RevokeCurlSession(ctx context.Context, userID, id string) error
	// PruneCurlSessions deletes sessions that expired or were revoked
	// before cutoff and returns how many.
	PruneCurlSessions(ctx context.Context, cutoff time.Time) (int, error)

	// RecordProxyCalls appends audit entries in one transaction. IDs are
	// assigned by the store and the tenant is the user's; entries of users
	// deleted meanwhile are dropped. A malformed entry is ErrInvalid and
	// nothing is recorded.
	RecordProxyCalls(ctx context.Context, calls []ProxyCall) error
	// ProxyCalls lists audit entries matching f, newest (highest ID) first.
	ProxyCalls(ctx context.Context, f ProxyCallFilter) ([]ProxyCall, error)
	// PruneProxyCalls deletes audit entries made before cutoff and returns
	// how many.
	PruneProxyCalls(ctx context.Context, cutoff time.Time) (int, error)
}

// PrefixCurlSession starts curl-session ids.
const PrefixCurlSession = "cs_"

// Limits of curl sessions and audit entries.
const (
	MaxCurlIntegrations  = 16   // integrations one session may name
	MaxProxyPathLen      = 1024 // an audited path is cut to this many bytes
	MaxProxyMethodLen    = 16
	MaxProxyErrorLen     = 64
	MaxProxyCallsPerPage = 1000
	DefaultProxyCallPage = 100
)

// CurlSession is a curl-session token's record. The token is never stored:
// only its SHA-256 and a short prefix that lets a person recognise it.
type CurlSession struct {
	ID           string // "cs_" and random characters
	TenantID     string
	UserID       string
	Integrations []string // sorted, distinct
	Prefix       string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	RevokedAt    time.Time // zero unless revoked
}

// Active reports whether the session's token works at now.
func (s CurlSession) Active(now time.Time) bool {
	return s.RevokedAt.IsZero() && now.Before(s.ExpiresAt)
}

// Allows reports whether the session was minted for integration.
func (s CurlSession) Allows(integration string) bool {
	_, ok := slices.BinarySearch(s.Integrations, integration)
	return ok
}

// NewCurlSession is what CreateCurlSession needs.
type NewCurlSession struct {
	UserID       string
	Integrations []string
	Hash         string // hex SHA-256 of the token
	Prefix       string // the first characters of the token, for display
	ExpiresAt    time.Time
}

// CheckNewCurlSession validates n, sorts and deduplicates its integrations
// and rounds its expiry.
func CheckNewCurlSession(n *NewCurlSession) error {
	if n.UserID == "" {
		return fmt.Errorf("%w: curl session has no user", ErrInvalid)
	}
	if err := CheckHash("curl token hash", n.Hash); err != nil {
		return err
	}
	if n.Prefix == "" || len(n.Prefix) > 16 {
		return fmt.Errorf("%w: curl token prefix must be 1 to 16 characters", ErrInvalid)
	}
	names := slices.Clone(n.Integrations)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 || len(names) > MaxCurlIntegrations {
		return fmt.Errorf("%w: a curl session names 1 to %d integrations", ErrInvalid, MaxCurlIntegrations)
	}
	for _, name := range names {
		if err := CheckIdent("integration", name); err != nil {
			return err
		}
	}
	n.Integrations = names
	if n.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: curl session has no expiry", ErrInvalid)
	}
	n.ExpiresAt = Round(n.ExpiresAt)
	return nil
}

// ProxyCall is one audited proxy request: who called what and how it went.
// It never holds a body, a header or a query value.
type ProxyCall struct {
	ID          int64  // assigned by the store, increasing
	TenantID    string // the user's, set by the store
	UserID      string
	SessionID   string
	Integration string
	Method      string
	Path        string // the upstream path, with query parameter names but no values
	Status      int    // the status the client got
	BytesIn     int64  // request body bytes sent upstream
	BytesOut    int64  // response body bytes sent to the client
	Duration    time.Duration
	Error       string // the proxy's error code when it failed, such as UPSTREAM_UNREACHABLE
	At          time.Time
}

// ProxyCallFilter selects audit entries. Empty fields match everything.
type ProxyCallFilter struct {
	TenantID    string
	UserID      string
	Integration string
	BeforeID    int64 // only entries with a smaller ID (the next page); 0 means none
	Limit       int   // 0 means DefaultProxyCallPage; at most MaxProxyCallsPerPage
}

// CheckProxyCall validates c, cutting its path and error to their limits on
// a rune boundary and rounding its time.
func CheckProxyCall(c *ProxyCall) error {
	if c.UserID == "" || c.SessionID == "" {
		return fmt.Errorf("%w: proxy call has no user or session", ErrInvalid)
	}
	if err := CheckIdent("integration", c.Integration); err != nil {
		return err
	}
	if c.Method == "" || len(c.Method) > MaxProxyMethodLen {
		return fmt.Errorf("%w: proxy call method must be 1 to %d characters", ErrInvalid, MaxProxyMethodLen)
	}
	if c.Status < 100 || c.Status > 999 || c.BytesIn < 0 || c.BytesOut < 0 || c.Duration < 0 {
		return fmt.Errorf("%w: proxy call status, sizes or duration out of range", ErrInvalid)
	}
	if c.At.IsZero() {
		return fmt.Errorf("%w: proxy call has no time", ErrInvalid)
	}
	c.Path = cutUTF8(c.Path, MaxProxyPathLen)
	c.Error = cutUTF8(c.Error, MaxProxyErrorLen)
	c.At = Round(c.At)
	c.Duration = c.Duration.Truncate(time.Microsecond)
	return nil
}

// CheckProxyCallFilter validates f and fills its default limit.
func CheckProxyCallFilter(f *ProxyCallFilter) error {
	if f.Limit == 0 {
		f.Limit = DefaultProxyCallPage
	}
	if f.Limit < 0 || f.Limit > MaxProxyCallsPerPage {
		return fmt.Errorf("%w: a page holds 1 to %d proxy calls", ErrInvalid, MaxProxyCallsPerPage)
	}
	if f.BeforeID < 0 {
		return fmt.Errorf("%w: negative proxy call cursor", ErrInvalid)
	}
	return nil
}

// cutUTF8 drops invalid UTF-8 and cuts s to at most n bytes on a rune
// boundary.
func cutUTF8(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
