package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/extism"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Timeouts of the HTTP server and of shutdown.
const (
	readTimeout     = 60 * time.Second
	idleTimeout     = 120 * time.Second
	shutdownTimeout = 15 * time.Second
)

// ErrAlreadyRun is returned by a second call to Run.
var ErrAlreadyRun = errors.New("server: Run was already called")

// Server is one Workbench server. New opens everything it needs and builds
// every route; Run serves until its context ends and then closes it all.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	app      *fiber.App
	store    store.Store
	reg      *registry.Registry
	host     *runtime.Host
	mcp      *mcp.Endpoint // /mcp
	services []any         // started by Run when they are runners, closed by Close when closers

	started   atomic.Bool
	loading   atomic.Bool
	addr      atomic.Pointer[string]
	ready     chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// runner is a service with background work (sweepers, audit writers): Run
// works until ctx ends.
type runner interface{ Run(ctx context.Context) }

// closer is a service that holds resources until the server stops.
type closer interface{ Close() error }

// New validates cfg (applying defaults to unset fields), creates the data
// directory, opens (and migrates) the store, creates the first admin on an
// empty one, and builds the plugin host, every service and every route, in
// one pass. Nothing listens until Run. If New fails, whatever it opened is
// closed again. A nil logger discards.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (_ *Server, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.PluginsDir != "" {
		if info, err := os.Stat(cfg.PluginsDir); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("%w: PLUGINS_DIR: %s is not a directory", ErrConfig, cfg.PluginsDir)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	s := &Server{cfg: cfg, logger: logger, ready: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Config returns the effective configuration, defaults applied.
func (s *Server) Config() Config { return s.cfg }

// Addr returns the address the server listens on, or "" before it listens.
func (s *Server) Addr() string {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// Ready is closed once the server listens; Addr is set by then.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// PluginHealth reports plugin loading for /healthz without waiting for it.
func (s *Server) PluginHealth() httpapi.PluginHealth {
	snap := s.reg.Current()
	loaded := 0
	for _, in := range snap.Integrations() {
		if in.Plugin != nil {
			loaded++
		}
	}
	return httpapi.PluginHealth{Loading: s.loading.Load(), Loaded: loaded, Failed: len(snap.Failed())}
}

// Readiness reports for /readyz whether plugins are loaded and the store
// answers.
func (s *Server) Readiness(ctx context.Context) error {
	if s.loading.Load() || !s.started.Load() {
		return errors.New("plugins are still loading")
	}
	if _, err := s.store.CountUsers(ctx); err != nil {
		s.logger.Warn("readiness: the store does not answer", "err", err)
		return errors.New("the store does not answer")
	}
	return nil
}

// Run listens, loads the plugins in the background and serves until ctx
// ends. Then it shuts down gracefully: it stops accepting, waits up to 15 s
// for requests in flight, stops loading and the services' background work,
// and closes everything New opened. Run returns nil after a shutdown caused
// by ctx, and the error otherwise. It may be called once.
func (s *Server) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	ln, err := net.Listen("tcp", s.cfg.ListenAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("LISTEN_ADDR: %w", err), s.Close())
	}
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var work sync.WaitGroup
	for _, svc := range s.services {
		if r, ok := svc.(runner); ok {
			work.Go(func() { r.Run(workCtx) })
		}
	}
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	s.loading.Store(true) // before Ready, so nobody sees "not loading, nothing loaded"
	close(s.ready)
	s.logger.Info("listening", "addr", addr, "public_url", s.cfg.PublicURL, "tool_surface", s.cfg.ToolSurface)
	work.Go(func() {
		defer s.loading.Store(false)
		s.loadPlugins(workCtx)
	})

	served := make(chan error, 1)
	go func() { served <- s.app.Listener(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
		s.logger.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		// MCP sessions hold streams open; close them so the HTTP server drains.
		if err := s.mcp.Close(shutdownCtx); err != nil {
			s.logger.Warn("closing MCP sessions", "err", err)
		}
		if err := s.app.ShutdownWithContext(shutdownCtx); err != nil {
			serveErr = fmt.Errorf("shutdown: %w", err)
		}
		cancel()
		if err := <-served; err != nil && serveErr == nil {
			serveErr = fmt.Errorf("serve: %w", err)
		}
	case err := <-served:
		serveErr = fmt.Errorf("serve: %w", err)
		if err == nil {
			serveErr = errors.New("serve: the HTTP server stopped unexpectedly")
		}
	}
	stopWork()
	work.Wait()
	return errors.Join(serveErr, s.Close())
}

// Close releases what New opened: the plugins, the services, the plugin
// host and the store. Run calls it when it ends; call it for a Server that
// never ran. Later calls return the first one's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.reg != nil {
			s.reg.Close()
		}
		for i := len(s.services) - 1; i >= 0; i-- {
			if c, ok := s.services[i].(closer); ok {
				errs = append(errs, c.Close())
			}
		}
		if s.host != nil {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			if err := s.host.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("closing the plugin host: %w", err))
			}
			cancel()
		}
		if s.store != nil {
			if err := s.store.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing the store: %w", err))
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// newHost creates the wasm runtime host with its compilation cache in
// DataDir.
func (s *Server) newHost(ctx context.Context, creds runtime.Config) (*runtime.Host, error) {
	cacheDir := filepath.Join(s.cfg.DataDir, "wasm-cache")
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	creds.CacheDir = cacheDir
	creds.Extism = extism.ABI{}
	creds.Logger = s.logger.With("component", "runtime")
	host, err := runtime.NewHost(ctx, creds)
	if err != nil {
		return nil, fmt.Errorf("plugin host: %w", err)
	}
	return host, nil
}

// loadPlugins loads the built-in and operator plugins into the registry and
// logs what loaded and what failed.
func (s *Server) loadPlugins(ctx context.Context) {
	start := time.Now()
	builtinDir := s.cfg.BuiltinPluginsDir
	if info, err := os.Stat(builtinDir); err != nil || !info.IsDir() {
		s.logger.Warn("no built-in plugins: directory not found", "dir", builtinDir)
		builtinDir = ""
	}
	sources, err := registry.Discover(builtinDir, s.cfg.PluginsDir)
	if err != nil {
		s.logger.Error("listing plugins", "err", err)
		return
	}
	snap, err := s.reg.Load(ctx, s.host, sources)
	if err != nil {
		s.logger.Warn("plugin loading stopped", "err", err)
		return
	}
	for _, in := range snap.Integrations() {
		if in.Plugin == nil {
			continue
		}
		m := in.Manifest()
		s.logger.Info("loaded integration", "integration", in.Name, "version", m.Version, "tools", len(m.Tools), "builtin", in.Builtin, "path", in.Path)
	}
	for _, f := range snap.Failed() {
		s.logger.Error("plugin failed to load", "path", f.Path, "builtin", f.Builtin, "integration", f.Name, "err", f.Err)
	}
	if err := s.reg.Swap(snap); err != nil {
		s.logger.Error("installing plugins", "err", err)
		return
	}
	s.mcp.Refresh() // after every swap: direct-surface sessions get tools/list_changed
	s.logger.Info("plugins loaded", "loaded", len(snap.Integrations()), "failed", len(snap.Failed()), "duration", time.Since(start).Round(time.Millisecond))
}
