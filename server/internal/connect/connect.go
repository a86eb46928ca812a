package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Defaults of Options.
const (
	DefaultHandshakeWindow = 10 * time.Minute
	DefaultKeepTerminal    = time.Hour
	DefaultSweepInterval   = 60 * time.Second
)

// Polling of Wait: the store is read again after pollMin, doubling up to
// pollMax, so a handshake finished by another replica is seen within pollMax.
// A handshake finished in this process wakes waiters at once.
const (
	pollMin = 50 * time.Millisecond
	pollMax = time.Second
)

// ConnectPath is the portal page of a pending connection, followed by its id:
// <SERVER_PUBLIC_URL>/connect/<id>.
const ConnectPath = "/connect/"

// CookieUnavailable is why a cookie-auth handshake fails.
const CookieUnavailable = "cookie capture is not available on this server yet"

// Errors. Each is wrapped with a message fit for the person or agent who
// caused it; none carries a secret.
var (
	// ErrWrongMode: the step does not fit the integration's auth mode.
	ErrWrongMode = errors.New("wrong auth mode for this step")
	// ErrInvalidInput: a form value is missing or malformed (see
	// *FieldErrors).
	ErrInvalidInput = errors.New("invalid input")
	// ErrUnknownState: an OAuth callback's state is unknown or was already
	// used.
	ErrUnknownState = errors.New("unknown or already used OAuth state")
	// ErrWrongUser: an OAuth callback arrived in another user's session.
	ErrWrongUser = errors.New("authorization completed by another user")
	// ErrAuthorization: the provider refused the authorization or the code
	// exchange failed; the handshake is FAILED with the reason.
	ErrAuthorization = errors.New("authorization failed")
)

// Store is the part of store.Store the service uses.
type Store interface {
	User(ctx context.Context, userID string) (store.User, error)
	CreatePending(ctx context.Context, p store.NewPending) (store.PendingConnection, error)
	Pending(ctx context.Context, userID, id string) (store.PendingConnection, error)
	ConsumePendingState(ctx context.Context, state string) (store.PendingConnection, error)
	CompletePending(ctx context.Context, userID, id string, o store.Outcome) (store.PendingConnection, error)
	ExpirePending(ctx context.Context) (int, error)
	PrunePending(ctx context.Context, keep time.Duration) (int, error)
}

// Vault seals credentials and PKCE verifiers; *connections.Service is one.
type Vault interface {
	Seal(ctx context.Context, userID, integration string, sec connections.Secret) (store.Connection, error)
	SealVerifier(u store.User, integration, verifier string) ([]byte, string, error)
	OpenVerifier(p store.PendingConnection) (string, error)
}

// Options configure a Service. Store, Vault, Providers and Catalog are
// required.
type Options struct {
	Store     Store
	Vault     Vault
	Providers *Providers
	Catalog   Catalog
	// PublicURL is SERVER_PUBLIC_URL without a trailing slash; the URLs
	// Connect returns are under it.
	PublicURL string
	// HandshakeWindow is how long a handshake may take; 0 means 10 minutes.
	HandshakeWindow time.Duration
	// KeepTerminal is how long an ended record is kept for Wait; 0 means an
	// hour.
	KeepTerminal time.Duration
	// SweepInterval is how often Run expires and prunes; 0 means 60 s.
	SweepInterval time.Duration
	// Now is the clock of handshake windows; nil means time.Now. It should
	// be the store's clock.
	Now func() time.Time
	// Logger reports sweeps; nil discards.
	Logger *slog.Logger
}

// Service runs connect handshakes. It is safe for concurrent use.
type Service struct {
	store     Store
	vault     Vault
	providers *Providers
	catalog   Catalog
	publicURL string
	window    time.Duration
	keep      time.Duration
	interval  time.Duration
	now       func() time.Time
	logger    *slog.Logger
	changes   broadcast
}

// New returns a Service for o.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Vault == nil || o.Providers == nil || o.Catalog == nil {
		return nil, errors.New("connect: Options need a Store, a Vault, Providers and a Catalog")
	}
	s := &Service{store: o.Store, vault: o.Vault, providers: o.Providers, catalog: o.Catalog,
		publicURL: strings.TrimRight(o.PublicURL, "/"), window: o.HandshakeWindow, keep: o.KeepTerminal,
		interval: o.SweepInterval, now: o.Now, logger: o.Logger}
	if s.window <= 0 {
		s.window = DefaultHandshakeWindow
	}
	if s.keep <= 0 {
		s.keep = DefaultKeepTerminal
	}
	if s.interval <= 0 {
		s.interval = DefaultSweepInterval
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.changes.ch = make(chan struct{})
	return s, nil
}

// Connect starts a handshake for the user's connection to integration and
// returns the URL the user opens and the pending connection's id. An
// integration with auth mode none is CONNECTED at once; a cookie one is
// FAILED at once with CookieUnavailable, and its URL explains why.
func (s *Service) Connect(ctx context.Context, userID, integration string) (string, string, error) {
	m, ok := s.catalog.Manifest(integration)
	if !ok {
		return "", "", fmt.Errorf("connect: %w: %q is not loaded on this server", failure.ErrUnknownIntegration, integration)
	}
	np := store.NewPending{UserID: userID, Integration: integration, Mode: m.Auth.Mode, ExpiresAt: s.now().Add(s.window)}
	if m.Auth.Mode == manifest.ModeOAuth2 {
		// Fail before creating anything when the provider is not set up.
		if _, err := s.providers.provider(integration); err != nil {
			return "", "", err
		}
		u, err := s.store.User(ctx, userID)
		if err != nil {
			return "", "", err
		}
		if np.SealedVerifier, np.KeyID, err = s.vault.SealVerifier(u, integration, newVerifier()); err != nil {
			return "", "", err
		}
	}
	p, err := s.store.CreatePending(ctx, np)
	if err != nil {
		return "", "", err
	}
	link := s.publicURL + ConnectPath + p.ID
	switch m.Auth.Mode {
	case manifest.ModeOAuth2:
		link += "?" + url.Values{"state": {p.State}}.Encode()
	case manifest.ModeNone:
		err = s.finish(ctx, p, store.Outcome{Status: store.PendingConnected})
	case manifest.ModeCookie:
		err = s.finish(ctx, p, store.Outcome{Status: store.PendingFailed, Reason: CookieUnavailable})
	}
	if err != nil {
		return "", "", err
	}
	return link, p.ID, nil
}

// Handshake is a pending connection with the manifest of its integration.
type Handshake struct {
	Pending store.PendingConnection
	// Manifest is nil when the integration is no longer loaded.
	Manifest *manifest.Manifest
}

// Handshake returns one of the user's pending connections. A PENDING record
// past its window is expired first, so the result is never stale.
func (s *Service) Handshake(ctx context.Context, userID, id string) (Handshake, error) {
	p, err := s.pending(ctx, userID, id)
	if err != nil {
		return Handshake{}, err
	}
	h := Handshake{Pending: p}
	if m, ok := s.catalog.Manifest(p.Integration); ok && m.Auth.Mode == p.Mode {
		h.Manifest = m
	}
	return h, nil
}

// AuthorizeURL returns the provider URL that continues the user's oauth2
// handshake id, given the state from the URL Connect returned.
func (s *Service) AuthorizeURL(ctx context.Context, userID, id, state string) (string, error) {
	p, err := s.open(ctx, userID, id, manifest.ModeOAuth2)
	if err != nil {
		return "", err
	}
	if state == "" || len(state) > 256 {
		return "", fmt.Errorf("connect: %w: the link lacks its state parameter; call connect again for a new link", ErrUnknownState)
	}
	verifier, err := s.vault.OpenVerifier(p)
	if err != nil {
		return "", err
	}
	return s.providers.authorizeURL(p.Integration, state, verifier)
}

// pending reads one of the user's records, expiring it first when it is
// overdue.
func (s *Service) pending(ctx context.Context, userID, id string) (store.PendingConnection, error) {
	if !looksLikePendingID(id) {
		return store.PendingConnection{}, fmt.Errorf("connect: %w: %q is not a connection id", failure.ErrUnknownConnection, clip(id))
	}
	p, err := s.store.Pending(ctx, userID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.PendingConnection{}, fmt.Errorf("connect: %w: you have no pending connection %q", failure.ErrUnknownConnection, id)
	}
	if err != nil {
		return store.PendingConnection{}, err
	}
	if p.Status == store.PendingWaiting && !s.now().Before(p.ExpiresAt) {
		return s.expire(ctx, p)
	}
	return p, nil
}

// expire ends an overdue PENDING record and returns it as it now stands.
func (s *Service) expire(ctx context.Context, p store.PendingConnection) (store.PendingConnection, error) {
	done, err := s.store.CompletePending(ctx, p.UserID, p.ID, store.Outcome{Status: store.PendingExpired,
		Reason: "the connection was not completed within its handshake window"})
	if errors.Is(err, store.ErrNotPending) { // someone else ended it first
		return s.store.Pending(ctx, p.UserID, p.ID)
	}
	if err != nil {
		return store.PendingConnection{}, err
	}
	s.changes.notify()
	return done, nil
}

// open returns a record that is still PENDING and uses the given mode.
func (s *Service) open(ctx context.Context, userID, id, mode string) (store.PendingConnection, error) {
	p, err := s.pending(ctx, userID, id)
	if err != nil {
		return store.PendingConnection{}, err
	}
	switch {
	case p.Status == store.PendingExpired:
		return store.PendingConnection{}, fmt.Errorf("connect: %w: the %s connection request ran out of time; start a new one", store.ErrExpired, p.Integration)
	case p.Status != store.PendingWaiting:
		return store.PendingConnection{}, fmt.Errorf("connect: %w: the %s connection request already ended (%s)", store.ErrNotPending, p.Integration, p.Status)
	case p.Mode != mode:
		return store.PendingConnection{}, fmt.Errorf("connect: %w: %s connects with %s, not %s", ErrWrongMode, p.Integration, p.Mode, mode)
	}
	return p, nil
}

// finish ends a record the service just read and wakes waiters.
func (s *Service) finish(ctx context.Context, p store.PendingConnection, o store.Outcome) error {
	_, err := s.store.CompletePending(ctx, p.UserID, p.ID, o)
	switch {
	case errors.Is(err, store.ErrExpired):
		return fmt.Errorf("connect: %w: the %s connection request ran out of time; start a new one", store.ErrExpired, p.Integration)
	case errors.Is(err, store.ErrNotPending):
		return fmt.Errorf("connect: %w: the %s connection request already ended", store.ErrNotPending, p.Integration)
	case err != nil:
		return err
	}
	s.changes.notify()
	return nil
}

// Wait blocks until the user's pending connection id is terminal, timeout
// passes (it then reports PENDING) or ctx ends, and returns the status with
// the reason of an EXPIRED or FAILED record. A record that ended before the
// call is reported as it ended.
func (s *Service) Wait(ctx context.Context, userID, id string, timeout time.Duration) (store.PendingStatus, string, error) {
	deadline := time.NewTimer(max(timeout, 0))
	defer deadline.Stop()
	poll := time.NewTimer(pollMin)
	defer poll.Stop()
	backoff := pollMin
	for {
		changed := s.changes.wait() // taken before reading, so no wake-up is lost
		p, err := s.pending(ctx, userID, id)
		if err != nil {
			return "", "", err
		}
		if p.Status.Terminal() {
			return p.Status, p.Reason, nil
		}
		poll.Reset(min(backoff, max(p.ExpiresAt.Sub(s.now()), time.Millisecond)))
		select {
		case <-changed:
		case <-poll.C:
			backoff = min(2*backoff, pollMax)
		case <-deadline.C:
			return store.PendingWaiting, "", nil
		case <-ctx.Done():
			return "", "", fmt.Errorf("connect: waiting for %s: %w", id, ctx.Err())
		}
	}
}

// Sweep expires every overdue PENDING record and deletes terminal records
// older than the keep period.
func (s *Service) Sweep(ctx context.Context) (expired, pruned int, err error) {
	expired, err = s.store.ExpirePending(ctx)
	if err != nil {
		return 0, 0, err
	}
	if expired > 0 {
		s.changes.notify()
	}
	pruned, err = s.store.PrunePending(ctx, s.keep)
	return expired, pruned, err
}

// Run sweeps every SweepInterval until ctx ends. Run it in one
// goroutine owned by the server.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		expired, pruned, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.logger.Warn("sweeping pending connections", "err", err)
		case expired+pruned > 0:
			s.logger.Debug("swept pending connections", "expired", expired, "pruned", pruned)
		}
	}
}

// broadcast wakes every waiter when any handshake changes: wait returns a
// channel that notify closes (and replaces).
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}

// looksLikePendingID reports whether id has the shape of a store id, so
// garbage never reaches a query.
func looksLikePendingID(id string) bool {
	rest, ok := strings.CutPrefix(id, store.PrefixPending)
	if !ok || rest == "" || len(rest) > 40 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// clip shortens untrusted text quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
