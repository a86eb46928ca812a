package customapps

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// Defaults of Options.
const (
	DefaultToolsTTL       = 5 * time.Minute
	DefaultFailureTTL     = 30 * time.Second
	DefaultMaxToolsPerApp = 200
	DefaultCallTimeout    = 60 * time.Second
	DefaultListTimeout    = 10 * time.Second
	DefaultMaxAppsPerUser = 50
	DefaultAppsTTL        = 10 * time.Second
)

// Store is the part of the store custom apps use.
type Store interface {
	CreateCustomApp(ctx context.Context, a store.NewCustomApp, cred *store.Connection) (store.CustomApp, error)
	CustomApps(ctx context.Context, userID string) ([]store.CustomApp, error)
	DeleteCustomApp(ctx context.Context, userID, name string) (store.CustomApp, error)
}

// Credentials seals and opens an app's bearer token. The connection
// service does (server/wiring.go): the token is a connection keyed by the
// app's id, sealed like every other credential and re-sealed by key
// rotation.
type Credentials interface {
	// SealBearer returns the connection row that carries token for the
	// user's app, sealed, without storing it.
	SealBearer(ctx context.Context, userID, appID, token string) (store.Connection, error)
	// Bearer returns the token stored for the user's app.
	Bearer(ctx context.Context, userID, appID string) (string, error)
}

// Options configure a Service. Every zero value has a documented default.
type Options struct {
	// Store keeps the apps. Required.
	Store Store
	// Credentials seals and opens manual bearer tokens. Nil refuses apps
	// with auth manual.
	Credentials Credentials
	// Taken reports whether a name belongs to an integration of the shared
	// catalog, which an app may not take; nil means no name is taken.
	Taken func(name string) bool
	// HTTPClient carries every request to an app; build it with
	// NewHTTPClient so that it obeys the egress rules. Nil refuses every
	// call (the CLI registers apps without calling them).
	HTTPClient *http.Client
	// AppsTTL is how long a user's list of apps is reused before the store
	// is asked again, so that meta-tool calls do not each query it; apps
	// added or removed through another Service (the CLI, another replica)
	// show within it. 0 means DefaultAppsTTL.
	AppsTTL time.Duration
	// ToolsTTL is how long an app's tool list is reused; 0 means
	// DefaultToolsTTL.
	ToolsTTL time.Duration
	// FailureTTL is how long a failed tool listing is remembered before
	// the app is tried again; 0 means DefaultFailureTTL.
	FailureTTL time.Duration
	// MaxToolsPerApp bounds an app's tool list; an app listing more fails
	// with LIMIT_EXCEEDED. 0 means DefaultMaxToolsPerApp.
	MaxToolsPerApp int
	// MaxAppsPerUser bounds how many apps one user may add; 0 means
	// DefaultMaxAppsPerUser.
	MaxAppsPerUser int
	// ListTimeout bounds listing an app's tools; 0 means
	// DefaultListTimeout.
	ListTimeout time.Duration
	// CallTimeout bounds one tool call; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// Logger reports apps that fail; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service registers custom apps and serves their tools. It is safe for
// concurrent use.
type Service struct {
	opts   Options
	logger *slog.Logger

	mu     sync.Mutex
	apps   map[string]userApps // by user
	tools  map[appKey]*listing // by user and app id
	flight map[appKey]chan struct{}
}

// userApps is a user's apps as last read from the store.
type userApps struct {
	apps  []store.CustomApp
	until int64 // unix nanoseconds after which the store is asked again
}

// New returns a Service over opts.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("customapps: Options.Store is required")
	}
	if opts.AppsTTL <= 0 {
		opts.AppsTTL = DefaultAppsTTL
	}
	if opts.ToolsTTL <= 0 {
		opts.ToolsTTL = DefaultToolsTTL
	}
	if opts.FailureTTL <= 0 {
		opts.FailureTTL = DefaultFailureTTL
	}
	if opts.MaxToolsPerApp <= 0 {
		opts.MaxToolsPerApp = DefaultMaxToolsPerApp
	}
	if opts.MaxAppsPerUser <= 0 {
		opts.MaxAppsPerUser = DefaultMaxAppsPerUser
	}
	if opts.ListTimeout <= 0 {
		opts.ListTimeout = DefaultListTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{opts: opts, logger: logger, apps: map[string]userApps{}, tools: map[appKey]*listing{}, flight: map[appKey]chan struct{}{}}, nil
}

// NewApp is what Add needs.
type NewApp struct {
	Name   string
	URL    string
	Auth   string // store.AppAuthNone (the default) or store.AppAuthManual
	Bearer string // the token of an app with auth manual
}

// Add registers an app for the user. The name must be free among the
// user's apps and not an integration's, and the user may have at most
// MaxAppsPerUser apps; a manual app needs a bearer token,
// which is sealed and stored with the app in one transaction. Failures wrap
// store.ErrInvalid, store.ErrConflict or store.ErrNotFound (no such user).
func (s *Service) Add(ctx context.Context, userID string, in NewApp) (store.CustomApp, error) {
	if in.Auth == "" {
		in.Auth = store.AppAuthNone
	}
	if err := store.CheckCustomAppName(in.Name); err != nil {
		return store.CustomApp{}, err
	}
	if s.opts.Taken != nil && s.opts.Taken(in.Name) {
		return store.CustomApp{}, fmt.Errorf("%w: %q is the name of an integration; choose another app name", store.ErrConflict, in.Name)
	}
	have, err := s.opts.Store.CustomApps(ctx, userID)
	if err != nil {
		return store.CustomApp{}, err
	}
	for _, a := range have {
		if a.Name == in.Name {
			return store.CustomApp{}, fmt.Errorf("%w: you already have an app named %q", store.ErrConflict, in.Name)
		}
	}
	if len(have) >= s.opts.MaxAppsPerUser {
		return store.CustomApp{}, fmt.Errorf("%w: a user may have at most %d apps (the limit); remove one first", store.ErrInvalid, s.opts.MaxAppsPerUser)
	}
	na := store.NewCustomApp{ID: store.NewID(store.PrefixCustomApp), UserID: userID, Name: in.Name, URL: in.URL, Auth: in.Auth}
	var cred *store.Connection
	switch {
	case in.Auth == store.AppAuthManual && in.Bearer == "":
		return store.CustomApp{}, fmt.Errorf("%w: an app with auth manual needs a bearer token", store.ErrInvalid)
	case in.Auth != store.AppAuthManual && in.Bearer != "":
		return store.CustomApp{}, fmt.Errorf("%w: a bearer token needs auth manual", store.ErrInvalid)
	case in.Auth == store.AppAuthManual:
		if s.opts.Credentials == nil {
			return store.CustomApp{}, fmt.Errorf("%w: this server cannot store app credentials", store.ErrInvalid)
		}
		if err := store.CheckCustomAppURL(in.URL); err != nil { // before sealing anything
			return store.CustomApp{}, err
		}
		c, err := s.opts.Credentials.SealBearer(ctx, userID, na.ID, in.Bearer)
		if err != nil {
			return store.CustomApp{}, err
		}
		cred = &c
	}
	rec, err := s.opts.Store.CreateCustomApp(ctx, na, cred)
	if err == nil {
		s.forget(userID)
	}
	return rec, err
}

// List returns the user's apps by name.
func (s *Service) List(ctx context.Context, userID string) ([]store.CustomApp, error) {
	return s.opts.Store.CustomApps(ctx, userID)
}

// Remove deletes the user's app with this name and its credential, and
// forgets its tools. An unknown name wraps store.ErrNotFound.
func (s *Service) Remove(ctx context.Context, userID, name string) error {
	a, err := s.opts.Store.DeleteCustomApp(ctx, userID, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.tools, appKey{userID, a.ID})
	s.mu.Unlock()
	s.forget(userID)
	return nil
}

// forget drops the user's cached list of apps.
func (s *Service) forget(userID string) {
	s.mu.Lock()
	delete(s.apps, userID)
	s.mu.Unlock()
}

// appsOf returns the user's apps, from the cache within AppsTTL.
func (s *Service) appsOf(ctx context.Context, userID string) ([]store.CustomApp, error) {
	now := s.opts.Now().UnixNano()
	s.mu.Lock()
	cached, ok := s.apps[userID]
	s.mu.Unlock()
	if ok && now < cached.until {
		return cached.apps, nil
	}
	apps, err := s.opts.Store.CustomApps(ctx, userID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	keep(s.apps, userID, userApps{apps: apps, until: s.opts.Now().Add(s.opts.AppsTTL).UnixNano()}, now)
	s.mu.Unlock()
	return apps, nil
}

// expiring is a cache entry with an expiry.
type expiring interface{ expiry() int64 }

func (u userApps) expiry() int64 { return u.until }
func (l *listing) expiry() int64 { return l.until }

// keep stores v under k unless m holds maxCachedListings entries even after
// dropping those expired at now.
func keep[K comparable, V expiring](m map[K]V, k K, v V, now int64) {
	if len(m) >= maxCachedListings {
		for old, e := range m {
			if now >= e.expiry() {
				delete(m, old)
			}
		}
	}
	if len(m) < maxCachedListings {
		m[k] = v
	}
}
