package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Timeouts of the HTTP server and of shutdown.
const (
	readTimeout     = 60 * time.Second
	idleTimeout     = 120 * time.Second
	shutdownTimeout = 15 * time.Second
)

// ErrAlreadyRun is returned by a second call to Run.
var ErrAlreadyRun = errors.New("server: Run was already called")

// Server is one Workbench server. Create it with New and start it with Run.
type Server struct {
	cfg    Config
	logger *slog.Logger
	app    *fiber.App
	reg    *registry.Registry

	started atomic.Bool
	loading atomic.Bool
	addr    atomic.Pointer[string]
	ready   chan struct{}
}

// New validates cfg (applying defaults to unset fields), creates the data
// directory and prepares the HTTP routes. Nothing listens until Run. A nil
// logger discards.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
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
	s := &Server{
		cfg:    cfg,
		logger: logger,
		reg:    registry.New(logger.With("component", "registry")),
		ready:  make(chan struct{}),
	}
	s.app = fiber.New(fiber.Config{
		DisableStartupMessage: true,
		ErrorHandler:          httpapi.ErrorHandler(logger.With("component", "http")),
		ReadTimeout:           readTimeout,
		IdleTimeout:           idleTimeout,
		// No WriteTimeout: /mcp streams responses for as long as a call runs;
		// each call has its own deadline.
	})
	httpapi.Register(s.app, httpapi.Deps{Health: s})
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
	return httpapi.PluginHealth{
		Loading: s.loading.Load(),
		Loaded:  len(snap.Integrations()),
		Failed:  len(snap.Failed()),
	}
}

// Run creates the plugin host, listens, loads the plugins in the background
// and serves until ctx ends. Then it shuts down gracefully: it stops
// accepting, waits up to 15 s for requests in flight, stops loading, closes
// the plugins and the host. Run returns nil after a shutdown caused by ctx,
// and the error otherwise. It may be called once.
func (s *Server) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	host, err := s.newHost(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.ListenAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("LISTEN_ADDR: %w", err), s.closeHost(host))
	}
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	close(s.ready)
	s.logger.Info("listening", "addr", addr, "public_url", s.cfg.PublicURL, "tool_surface", s.cfg.ToolSurface)

	loadCtx, stopLoading := context.WithCancel(ctx)
	defer stopLoading()
	loaded := make(chan struct{})
	s.loading.Store(true)
	go func() {
		defer close(loaded)
		defer s.loading.Store(false)
		s.loadPlugins(loadCtx, host)
	}()

	served := make(chan error, 1)
	go func() { served <- s.app.Listener(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
		s.logger.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
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
	stopLoading()
	<-loaded
	s.reg.Close()
	return errors.Join(serveErr, s.closeHost(host))
}

// newHost creates the wasm runtime host with its compilation cache in DataDir.
func (s *Server) newHost(ctx context.Context) (*runtime.Host, error) {
	cacheDir := filepath.Join(s.cfg.DataDir, "wasm-cache")
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	host, err := runtime.NewHost(ctx, runtime.Config{
		CacheDir:    cacheDir,
		Credentials: credential.NewMemory(),
		Egress:      egress.NewClient(egress.Options{AllowPrivate: s.cfg.EgressAllowPrivate}),
		Settings:    runtime.EnvSettings{},
		Logger:      s.logger.With("component", "runtime"),
	})
	if err != nil {
		return nil, fmt.Errorf("plugin host: %w", err)
	}
	return host, nil
}

func (s *Server) closeHost(host *runtime.Host) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := host.Close(ctx); err != nil {
		return fmt.Errorf("closing plugin host: %w", err)
	}
	return nil
}

// loadPlugins loads the built-in and operator plugins into the registry and
// logs what loaded and what failed.
func (s *Server) loadPlugins(ctx context.Context, host *runtime.Host) {
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
	snap, err := registry.Load(ctx, host, sources)
	if err != nil {
		s.logger.Warn("plugin loading stopped", "err", err)
		return
	}
	for _, in := range snap.Integrations() {
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
	s.logger.Info("plugins loaded", "loaded", len(snap.Integrations()), "failed", len(snap.Failed()), "duration", time.Since(start).Round(time.Millisecond))
}
