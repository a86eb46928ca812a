package server

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/workbench-dev/workbench/runtime/extism"
	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	mcpcatalog "github.com/workbench-dev/workbench/server/internal/mcp/catalog"
	"github.com/workbench-dev/workbench/server/internal/oauthserver"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/secrets"
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
	mcp    *mcp.Endpoint // /mcp

	announce  io.Writer          // where the first-start notice goes (AnnounceTo)
	passwords *secrets.Passwords // every password hash and check, under one bound
	state     *state             // the store and its services, set by Run before Ready

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

		passwords: secrets.NewPasswords(secrets.PasswordOptions{Concurrency: cfg.PasswordHashConcurrency}),

		announce: os.Stdout,
	}
	s.app = fiber.New(fiber.Config{
		DisableStartupMessage: true,
		ErrorHandler:          httpapi.ErrorHandler(logger.With("component", "http")),
		ReadTimeout:           readTimeout,
		IdleTimeout:           idleTimeout,
		// No WriteTimeout: /mcp streams responses for as long as a call runs;
		// each call has its own deadline.
		StreamRequestBody: true, // the proxy and jot uploads stream; BoundBodies keeps the limit elsewhere
	})
	s.app.Use(fiberfix.BoundBodies(fiber.DefaultBodyLimit, streamedBodies...)) // server/proxy.go
	httpapi.Register(s.app, httpapi.Deps{Health: s})

	// /mcp: the MCP endpoint (server/internal/mcp).
	ep, err := s.newMCPEndpoint(logger.With("component", "mcp"))
	if err != nil {
		return nil, err
	}
	s.mcp = ep
	s.app.All("/mcp", fiberfix.Bridge(context.Background(), ep, 0))
	return s, nil
}

// newMCPEndpoint builds the /mcp endpoint over the registry, with API
// tokens and connections from the store (mcp_services.go).
func (s *Server) newMCPEndpoint(logger *slog.Logger) (*mcp.Endpoint, error) {
	var authenticator mcp.Authenticator = storeTokens{s}
	if s.cfg.MCPAuthenticator != nil {
		authenticator = s.cfg.MCPAuthenticator
	}
	// Replicas that share the encryption key accept each other's
	// input-required states.
	stateKey, err := newKeyring(s.cfg).DeriveKey("mcp request state")
	if err != nil {
		return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	ep, err := mcp.New(mcp.Options{
		RequestStateKey: stateKey,
		Catalog:         mcpcatalog.FromRegistry(s.reg, s.nativeIntegrations()...),
		CurlSessions:    s.curlSessions(),
		Authenticator:   authenticator,
		Connections:     storeConnections{s},
		PublicURL:       s.cfg.PublicURL,
		Surface:         mcp.Surface(s.cfg.ToolSurface),
		Version:         Version(),
		Logger:          logger,
		// Every token needs the OAuth server's "mcp" scope; API tokens
		// carry it (mcp_services.go).
		RequiredScopes: oauthserver.RequiredScopes(),
	})
	if err != nil {
		return nil, fmt.Errorf("mcp endpoint: %w", err)
	}
	return ep, nil
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

// Run opens (and migrates) the store, creating the first admin on an empty
// one, creates the plugin host, listens, loads the plugins in the background
// and serves until ctx ends. Then it shuts down gracefully: it stops
// accepting, waits up to 15 s for requests in flight, stops loading and the
// sweepers, closes the plugins, the host and the store. Run returns nil
// after a shutdown caused by ctx, and the error otherwise. It may be called
// once.
func (s *Server) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	st, err := s.openState(ctx)
	if err != nil {
		return err
	}
	s.state = st
	host, err := s.newHost(ctx, st.connections)
	if err != nil {
		return errors.Join(err, st.close())
	}
	ln, err := net.Listen("tcp", s.cfg.ListenAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("LISTEN_ADDR: %w", err), s.closeHost(host), st.close())
	}
	sweepCtx, stopSweeping := context.WithCancel(ctx)
	defer stopSweeping()
	sweepersDone := st.runSweepers(sweepCtx)
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	s.loading.Store(true) // before Ready, so nobody sees "not loading, nothing loaded"
	close(s.ready)
	s.logger.Info("listening", "addr", addr, "public_url", s.cfg.PublicURL, "tool_surface", s.cfg.ToolSurface)

	loadCtx, stopLoading := context.WithCancel(ctx)
	defer stopLoading()
	loaded := make(chan struct{})
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
	stopLoading()
	<-loaded
	stopSweeping()
	sweepersDone()
	s.reg.Close()
	return errors.Join(serveErr, s.closeHost(host), st.close())
}

// newHost creates the wasm runtime host with its compilation cache in DataDir.
func (s *Server) newHost(ctx context.Context, creds credential.Source) (*runtime.Host, error) {
	cacheDir := filepath.Join(s.cfg.DataDir, "wasm-cache")
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	host, err := runtime.NewHost(ctx, runtime.Config{
		CacheDir:    cacheDir,
		Credentials: creds,
		Egress:      egress.NewClient(egress.Options{AllowPrivate: s.cfg.EgressAllowPrivate}),
		Extism:      extism.ABI{},
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
	s.mcp.Refresh() // after every swap: direct-surface sessions get tools/list_changed
	s.logger.Info("plugins loaded", "loaded", len(snap.Integrations()), "failed", len(snap.Failed()), "duration", time.Since(start).Round(time.Millisecond))
}
