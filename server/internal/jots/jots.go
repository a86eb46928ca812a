package jots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/server/internal/clientaddr"
	"github.com/workbench-dev/workbench/server/internal/hostguard"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Default limits.
const (
	DefaultMaxBytes        = 5 << 20
	DefaultMaxFiles        = 1000
	DefaultUploadTTL       = 5 * time.Minute
	DefaultMaxJotsPerUser  = 100
	DefaultMaxBytesPerUser = 100 << 20
	DefaultRecheck         = time.Second
	DefaultCacheBytes      = 64 << 20
	sweepInterval          = time.Minute
)

// Limits bound every jot and every user's jots. Zero fields take the
// defaults.
type Limits struct {
	MaxBytes        int64         // file content of one jot (JOTS_MAX_BYTES)
	MaxFiles        int           // files of one jot (JOTS_MAX_FILES)
	UploadTTL       time.Duration // lifetime of an upload URL (JOTS_UPLOAD_TTL_SECONDS), and of a claim never uploaded to
	MaxJotsPerUser  int           // jots of one user (JOTS_MAX_PER_USER)
	MaxBytesPerUser int64         // file content of all of one user's jots (JOTS_MAX_BYTES_PER_USER)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.UploadTTL <= 0 {
		l.UploadTTL = DefaultUploadTTL
	}
	if l.MaxJotsPerUser <= 0 {
		l.MaxJotsPerUser = DefaultMaxJotsPerUser
	}
	if l.MaxBytesPerUser <= 0 {
		l.MaxBytesPerUser = DefaultMaxBytesPerUser
	}
	return l
}

// describe spells the limits out for tool descriptions and errors.
func (l Limits) describe() string {
	return fmt.Sprintf("%s of file content (JOTS_MAX_BYTES) and %d files (JOTS_MAX_FILES) per jot, upload URLs valid %s (JOTS_UPLOAD_TTL_SECONDS), "+
		"%s", byteSize(l.MaxBytes), l.MaxFiles, l.UploadTTL, l.describeQuota())
}

// describeQuota spells out the per-user bounds.
func (l Limits) describeQuota() string {
	return fmt.Sprintf("%d jots (JOTS_MAX_PER_USER) and %s of file content in all (JOTS_MAX_BYTES_PER_USER) per user",
		l.MaxJotsPerUser, byteSize(l.MaxBytesPerUser))
}

func (l Limits) tarball() tarball.Limits {
	return tarball.Limits{MaxFiles: l.MaxFiles, MaxBytes: l.MaxBytes, MaxFilesName: "JOTS_MAX_FILES", MaxBytesName: "JOTS_MAX_BYTES"}
}

func (l Limits) store() store.JotLimits {
	return store.JotLimits{MaxFiles: l.MaxFiles, MaxBytes: l.MaxBytes, Quota: l.quota()}
}

func (l Limits) quota() store.JotQuota {
	return store.JotQuota{MaxJots: l.MaxJotsPerUser, MaxBytes: l.MaxBytesPerUser}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Store is what the service keeps jots and password attempts in.
type Store interface {
	store.JotStore
	store.AttemptStore
}

// Options configure a Service. Store, PublicURL and Passwords are required.
type Options struct {
	Store     Store
	PublicURL string // SERVER_PUBLIC_URL, without a trailing slash
	// JotsURL, when set, is the separate origin jots are served from
	// (JOTS_PUBLIC_URL, another host than PublicURL's): jot and upload URLs
	// point there, and /j/ requests naming another host are redirected
	// there. Empty serves jots under PublicURL.
	JotsURL string
	Limits  Limits
	// Recheck is how old a cached jot may get before serving rereads its
	// row to see changes made on other replicas: zero means DefaultRecheck,
	// a negative value rereads on every request.
	Recheck time.Duration
	// CacheBytes bounds the cached file contents; zero means
	// DefaultCacheBytes.
	CacheBytes int64
	// Passwords hashes and checks jot passwords: the process's, shared with
	// sign-in, so all password work has one bound.
	Passwords *secrets.Passwords
	// ClientAddr finds the address a password guess came from; the zero
	// value trusts no proxy.
	ClientAddr clientaddr.Resolver
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
}

// Service runs the jots tools and serves jots.
type Service struct {
	store      Store
	origin     string           // where jots are served: JotsURL, else PublicURL
	jotsHost   *hostguard.Hosts // JotsURL's host; nil without JotsURL
	limits     Limits
	recheck    time.Duration
	passwords  *secrets.Passwords
	clientAddr clientaddr.Resolver
	now        func() time.Time
	logger     *slog.Logger

	cache *siteCache
}

// ErrOptions is returned by New for missing or invalid options.
var ErrOptions = errors.New("jots: invalid options")

// New returns a Service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("%w: no store", ErrOptions)
	}
	if opts.Passwords == nil {
		return nil, fmt.Errorf("%w: no Passwords", ErrOptions)
	}
	if !strings.HasPrefix(opts.PublicURL, "http://") && !strings.HasPrefix(opts.PublicURL, "https://") {
		return nil, fmt.Errorf("%w: public URL %q is not http(s)", ErrOptions, opts.PublicURL)
	}
	s := &Service{
		store:      opts.Store,
		origin:     strings.TrimRight(opts.PublicURL, "/"),
		limits:     opts.Limits.withDefaults(),
		recheck:    opts.Recheck,
		passwords:  opts.Passwords,
		clientAddr: opts.ClientAddr,
		now:        opts.Now,
		logger:     opts.Logger,
	}
	if opts.JotsURL != "" {
		h, err := hostguard.Only(opts.JotsURL)
		if err != nil {
			return nil, fmt.Errorf("%w: jots URL: %v", ErrOptions, err)
		}
		s.origin, s.jotsHost = strings.TrimRight(opts.JotsURL, "/"), h
	}
	if s.recheck == 0 {
		s.recheck = DefaultRecheck
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	cacheBytes := opts.CacheBytes
	if cacheBytes <= 0 {
		cacheBytes = DefaultCacheBytes
	}
	s.cache = newSiteCache(cacheBytes)
	return s, nil
}

// Limits returns the effective limits.
func (s *Service) Limits() Limits { return s.limits }

// URL returns where a jot is served.
func (s *Service) URL(name string) string { return s.origin + RoutePrefix + name + "/" }

// Run prunes used and expired upload tokens and releases the claims whose
// last upload URL expired unused, every minute until ctx ends. The server
// runs it in one goroutine.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, sweep := range []struct {
			what string
			run  func(context.Context) (int, error)
		}{{"jot uploads", s.store.PruneJotUploads}, {"lapsed jot claims", s.store.ReleaseJotClaims}} {
			n, err := sweep.run(ctx)
			if err != nil && ctx.Err() == nil {
				s.logger.Warn("sweeping "+sweep.what, "err", err)
			} else if n > 0 {
				s.logger.Debug("swept "+sweep.what, "rows", n)
			}
		}
	}
}
