package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Defaults of Options.
const (
	DefaultTTL               = 15 * time.Minute
	DefaultSessionKeep       = 24 * time.Hour
	DefaultAuditRetention    = 30 * 24 * time.Hour
	DefaultSweepInterval     = 10 * time.Minute
	DefaultMaxRequestBytes   = 1 << 30
	DefaultMaxResponseBytes  = 4 << 30
	DefaultMaxHeaderBytes    = 32 << 10
	DefaultMaxHeaders        = 100
	DefaultMaxTargetBytes    = 8 << 10
	DefaultMaxConcurrent     = 16
	DefaultHeaderTimeout     = 60 * time.Second
	DefaultExchangeTimeout   = 15 * time.Minute
	defaultAuditQueue        = 4096
	defaultAuditBatch        = 256
	defaultAuditFlush        = 200 * time.Millisecond
	defaultAuditEnqueueWait  = 5 * time.Second
	defaultAuditDrainTimeout = 10 * time.Second
)

// Catalog finds loaded integrations' manifests.
type Catalog interface {
	Manifest(name string) (*manifest.Manifest, bool)
}

// Connections reports whether a user counts as connected to an integration.
type Connections interface {
	Connected(ctx context.Context, userID, integration string) (bool, error)
}

// Settings supplies operator settings; "base_url" (<NAME>_BASE_URL)
// replaces an integration's proxy base URL. runtime.EnvSettings is one.
type Settings interface {
	Setting(integration, name string) (string, bool)
}

// Limits cap one proxied call. Zero fields take the defaults.
type Limits struct {
	MaxRequestBytes  int64         // request body
	MaxResponseBytes int64         // response body
	MaxHeaderBytes   int           // request headers, names and values
	MaxHeaders       int           // request header lines
	MaxTargetBytes   int           // the request target (path and query)
	MaxConcurrent    int           // calls of one session at once
	HeaderTimeout    time.Duration // until the upstream's response headers
	ExchangeTimeout  time.Duration // the whole exchange, bodies included
}

func (l Limits) withDefaults() Limits {
	set := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	seti := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.MaxRequestBytes, DefaultMaxRequestBytes)
	set(&l.MaxResponseBytes, DefaultMaxResponseBytes)
	seti(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	seti(&l.MaxHeaders, DefaultMaxHeaders)
	seti(&l.MaxTargetBytes, DefaultMaxTargetBytes)
	seti(&l.MaxConcurrent, DefaultMaxConcurrent)
	setd(&l.HeaderTimeout, DefaultHeaderTimeout)
	setd(&l.ExchangeTimeout, DefaultExchangeTimeout)
	return l
}

// Options configure a Service. Store, Catalog, Credentials and Egress are
// required.
type Options struct {
	Store       store.CurlStore
	Catalog     Catalog
	Credentials credential.Source
	// Connections, when set, is asked at mint time whether the user is
	// connected to each integration.
	Connections Connections
	// Egress dials every upstream connection (its address rule applies).
	Egress *egress.Client
	// Settings holds base URL overrides; nil means none.
	Settings Settings
	// PublicURL is SERVER_PUBLIC_URL, the start of every endpoint.
	PublicURL string
	Limits    Limits
	// TTL is how long a token works; 0 means 15 minutes.
	TTL time.Duration
	// SessionKeep is how long expired and revoked sessions are kept (so a
	// late request learns why its token stopped working); 0 means 24 hours.
	SessionKeep time.Duration
	// AuditRetention is how long audit rows are kept; 0 means 30 days.
	AuditRetention time.Duration
	// SweepInterval is how often Run prunes; 0 means 10 minutes.
	SweepInterval time.Duration
	// Now is the clock; nil means time.Now. It should be the store's.
	Now func() time.Time
	// Logger reports failures; nil discards.
	Logger *slog.Logger
}

// Service mints curl sessions and serves the proxy. It is safe for
// concurrent use; Run must be running for audit rows to be written.
type Service struct {
	opts Options
	lim  Limits
	// transport dials under egress's address rule; internal dials with
	// egress.Client.DialInternal and carries only calls to an operator's
	// <NAME>_BASE_URL, so no other call reuses its connections.
	transport, internal *http.Transport
	audit               chan store.ProxyCall
	logger              *slog.Logger

	mu       sync.Mutex
	inFlight map[string]int // session id -> calls running
}

// New returns a Service for o.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Catalog == nil || o.Credentials == nil || o.Egress == nil {
		return nil, errors.New("proxy: Options need a Store, a Catalog, Credentials and Egress")
	}
	if _, err := url.Parse(o.PublicURL); err != nil || o.PublicURL == "" {
		return nil, fmt.Errorf("proxy: public URL %q is not a URL", o.PublicURL)
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.SessionKeep <= 0 {
		o.SessionKeep = DefaultSessionKeep
	}
	if o.AuditRetention <= 0 {
		o.AuditRetention = DefaultAuditRetention
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: o, lim: o.Limits.withDefaults(), audit: make(chan store.ProxyCall, defaultAuditQueue),
		logger: o.Logger, inFlight: map[string]int{}}
	s.transport = s.newTransport(o.Egress.DialContext)
	s.internal = s.newTransport(o.Egress.DialInternal)
	return s, nil
}

// newTransport returns an upstream transport that dials with dial.
func (s *Service) newTransport(dial func(ctx context.Context, network, address string) (net.Conn, error)) *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // never an environment proxy: it would bypass the address rule
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  s.lim.HeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // pass encodings through untouched
	}
}

// Close closes idle upstream connections.
func (s *Service) Close() error {
	s.transport.CloseIdleConnections()
	s.internal.CloseIdleConnections()
	return nil
}

// Minted is a new curl session.
type Minted struct {
	Token     string // shown once; only its hash is stored
	SessionID string
	ExpiresAt time.Time
	// Endpoints maps each integration to the URL its requests start from,
	// such as https://wb.example.com/c/github/.
	Endpoints map[string]string
}

// Problem is one integration that Mint refused, with why.
type Problem struct {
	Integration string
	Err         error // wraps failure.ErrUnknownIntegration, failure.ErrNoProxy or failure.ErrNotConnected
}

// MintError lists every integration Mint refused; nothing was minted.
type MintError struct{ Problems []Problem }

func (e *MintError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Integration + ": " + p.Err.Error()
	}
	return "proxy: no curl session minted: " + strings.Join(parts, "; ")
}

// Unwrap returns every problem's error, so errors.Is finds each sentinel.
func (e *MintError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.Err
	}
	return out
}

// Mint creates a session for userID scoped to exactly integrations. It is
// all-or-nothing: when any integration is unknown, has no proxy block or is
// not connected, nothing is minted and the *MintError lists each of them.
func (s *Service) Mint(ctx context.Context, userID string, integrations []string) (Minted, error) {
	names := slices.Clone(integrations)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 || len(names) > store.MaxCurlIntegrations {
		return Minted{}, fmt.Errorf("proxy: a curl session names 1 to %d integrations, got %d", store.MaxCurlIntegrations, len(names))
	}
	var problems []Problem
	for _, name := range names {
		if err := s.mintable(ctx, userID, name); err != nil {
			var p *Problem
			if !errors.As(err, &p) {
				return Minted{}, err
			}
			problems = append(problems, *p)
		}
	}
	if problems != nil {
		return Minted{}, &MintError{Problems: problems}
	}
	token, hash, prefix := newToken()
	rec, err := s.opts.Store.CreateCurlSession(ctx, store.NewCurlSession{UserID: userID, Integrations: names, Hash: hash,
		Prefix: prefix, ExpiresAt: s.opts.Now().Add(s.opts.TTL)})
	if err != nil {
		return Minted{}, fmt.Errorf("proxy: minting a curl session: %w", err)
	}
	m := Minted{Token: token, SessionID: rec.ID, ExpiresAt: rec.ExpiresAt, Endpoints: make(map[string]string, len(names))}
	for _, name := range names {
		m.Endpoints[name] = s.opts.PublicURL + Route + name + "/"
	}
	s.logger.Info("curl session minted", "user", userID, "session", rec.ID, "integrations", names, "expires", rec.ExpiresAt)
	return m, nil
}

func (p *Problem) Error() string { return p.Integration + ": " + p.Err.Error() }

// mintable returns nil when userID may get a token for integration, a
// *Problem when not, and any other error when that cannot be told.
func (s *Service) mintable(ctx context.Context, userID, name string) error {
	m, ok := s.opts.Catalog.Manifest(name)
	switch {
	case !ok:
		return &Problem{Integration: name, Err: fmt.Errorf("%w: no integration is named %q", failure.ErrUnknownIntegration, truncate(name, 64))}
	case m.Proxy == nil:
		return &Problem{Integration: name, Err: fmt.Errorf("%w: %s declares no proxy base URL", failure.ErrNoProxy, name)}
	case m.Auth.Mode == manifest.ModeNone || s.opts.Connections == nil:
		return nil
	}
	connected, err := s.opts.Connections.Connected(ctx, userID, name)
	if err != nil {
		return fmt.Errorf("proxy: checking the connection to %s: %w", name, err)
	}
	if !connected {
		return &Problem{Integration: name, Err: fmt.Errorf("%w: connect %s first", failure.ErrNotConnected, name)}
	}
	return nil
}

// baseURL returns the URL an integration's proxied requests go to: the
// operator's <NAME>_BASE_URL when set (then operator is true: it may be on
// an internal address), else the manifest's proxy.baseUrl.
func (s *Service) baseURL(m *manifest.Manifest) (u *url.URL, operator bool, err error) {
	raw := m.Proxy.BaseURL
	if s.opts.Settings != nil {
		if v, ok := s.opts.Settings.Setting(m.Name, "base_url"); ok {
			raw, operator = v, true
		}
	}
	u, err = url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, false, fmt.Errorf("proxy: the base URL of %s is not an absolute http(s) URL without user, query or fragment", m.Name)
	}
	return u, operator, nil
}

// acquire counts a call of the session; it fails when MaxConcurrent run.
func (s *Service) acquire(sessionID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[sessionID] >= s.lim.MaxConcurrent {
		return false
	}
	s.inFlight[sessionID]++
	return true
}

func (s *Service) release(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[sessionID]--; s.inFlight[sessionID] <= 0 {
		delete(s.inFlight, sessionID)
	}
}
