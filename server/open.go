package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/browser"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/metrics"
	"github.com/workbench-dev/workbench/server/internal/modules"
	"github.com/workbench-dev/workbench/server/internal/oauthserver"
	"github.com/workbench-dev/workbench/server/internal/portal"
	"github.com/workbench-dev/workbench/server/internal/proxy"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/backend"
	wbexec "github.com/workbench-dev/workbench/server/internal/workbench"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
)

// open opens the store and builds every service, the plugin host, the
// catalog and the routes, in this order, each from concrete parts that are
// already open. What it opened is recorded on s, so Close releases it if a
// later step fails.
func (s *Server) open(ctx context.Context) error {
	cfg, logger := s.cfg, s.logger
	st, err := backend.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return fmt.Errorf("store (%s): %w", backend.Describe(cfg.DatabaseURL, cfg.DataDir), err)
	}
	s.store = st
	keys := newKeyring(cfg)
	if _, err := keys.CurrentKeyID(); err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	passwords := secrets.NewPasswords(secrets.PasswordOptions{Concurrency: cfg.PasswordHashConcurrency})

	// The native integrations, then the catalog that holds them and every
	// plugin loaded later.
	jotsSvc, err := jots.New(jots.Options{Store: st, PublicURL: cfg.PublicURL, JotsURL: cfg.JotsPublicURL, Limits: jotLimits(cfg),
		Passwords: passwords, ClientAddr: cfg.TrustedProxies, Logger: logger.With("component", "jots")})
	if err != nil {
		return err
	}
	s.services = append(s.services, jotsSvc)
	workbenchSvc, err := wbexec.New(wbexec.Options{Root: workbenchRoot(cfg), Limits: workbenchLimits(cfg),
		Logger: logger.With("component", "workbench")})
	if err != nil {
		return fmt.Errorf("WORKBENCH_ROOT: %w", err)
	}
	s.services = append(s.services, workbenchSvc)
	browsers, err := browser.NewManager(browser.Options{Dir: filepath.Join(cfg.DataDir, "browser"), TTL: cfg.BrowserSessionTTL,
		MaxSessions: cfg.BrowserMaxSessions, NoSandbox: cfg.BrowserAllowNoSandbox,
		Egress: egress.NewClient(egress.Options{AllowPrivate: cfg.EgressAllowPrivate}), Logger: logger.With("component", "browser")})
	if err != nil {
		return err
	}
	s.services = append(s.services, browsers)
	if s.reg, err = registry.New(logger.With("component", "registry"),
		registry.Native(jots.Manifest(jotLimits(cfg)), jotsSvc),
		registry.Native(wbexec.Manifest(workbenchLimits(cfg)), workbenchSvc),
		registry.Native(browser.Manifest(), browsers)); err != nil {
		return err
	}

	// Connections and the services over them.
	providers := connect.NewProviders(connect.ProviderOptions{Catalog: s.reg, PublicURL: cfg.PublicURL, AllowPrivate: cfg.EgressAllowPrivate})
	conns := connections.New(st, keys, connections.Options{Catalog: s.reg, Refresher: providers})
	s.services = append(s.services, conns)
	connectSvc, err := connect.New(connect.Options{Store: st, Vault: conns, Providers: providers, Catalog: s.reg, PublicURL: cfg.PublicURL,
		HandshakeWindow: cfg.ConnectWindow, Logger: logger.With("component", "connect")})
	if err != nil {
		return err
	}
	s.services = append(s.services, connectSvc)
	portalSvc, err := portal.New(portal.Options{Store: st, Catalog: s.reg, Connections: conns, Connector: connectSvc,
		SignIn: accounts.NewSignIn(st, passwords, accounts.SignInOptions{}), Passwords: passwords, ClientAddr: cfg.TrustedProxies,
		PublicURL: cfg.PublicURL, Logger: logger.With("component", "portal")})
	if err != nil {
		return err
	}
	s.services = append(s.services, portalSvc)
	oauth, err := oauthserver.New(oauthserver.Options{Store: st, PublicURL: cfg.PublicURL, SessionCookie: portalSvc.SessionCookieName(),
		AllowLoopbackDocuments: cfg.EgressAllowPrivate, ClientAddr: cfg.TrustedProxies, Logger: logger.With("component", "oauth")})
	if err != nil {
		return err
	}
	s.services = append(s.services, oauth)
	proxySvc, err := proxy.New(proxy.Options{Store: st, Catalog: s.reg, Credentials: conns, Connections: conns,
		Egress: egress.NewClient(egress.Options{AllowPrivate: cfg.EgressAllowPrivate}), Settings: runtime.EnvSettings{},
		PublicURL: cfg.PublicURL, Logger: logger.With("component", "proxy")})
	if err != nil {
		return err
	}
	s.services = append(s.services, proxySvc)
	if s.host, err = s.newHost(ctx, runtime.Config{Credentials: conns,
		Egress: egress.NewClient(egress.Options{AllowPrivate: cfg.EgressAllowPrivate}), Settings: runtime.EnvSettings{}}); err != nil {
		return err
	}

	apps, err := newCustomApps(cfg, st, conns, s.reg, logger.With("component", "customapps"))
	if err != nil {
		return err
	}

	// The MCP endpoint over the catalog and the services.
	var authenticator mcp.Authenticator = tokens{store: st, oauth: oauth, cache: accounts.NewTokenCache(accounts.TokenCacheOptions{})}
	if cfg.MCPAuthenticator != nil {
		authenticator = cfg.MCPAuthenticator
	}
	// Replicas that share the encryption key accept each other's
	// input-required states.
	stateKey, err := keys.DeriveKey("mcp request state")
	if err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	if s.mcp, err = mcp.New(mcp.Options{
		RequestStateKey: stateKey,
		Catalog:         s.reg,
		Apps:            apps,
		CurlSessions:    curlSessions{proxySvc},
		Authenticator:   authenticator,
		Connections:     userConnections{Service: conns, flow: connectSvc},
		PublicURL:       cfg.PublicURL,
		Surface:         mcp.Surface(cfg.ToolSurface),
		Version:         Version(),
		Logger:          logger.With("component", "mcp"),
		// Every token needs the OAuth server's "mcp" scope; API tokens
		// carry it (tokens.go).
		RequiredScopes: oauthserver.RequiredScopes(),
	}); err != nil {
		return fmt.Errorf("mcp endpoint: %w", err)
	}

	if err := s.ensureAdmin(ctx, st); err != nil {
		return err
	}
	guard, err := hostGuard(cfg, logger.With("component", "hostguard"))
	if err != nil {
		return err
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
	// /metrics before the host guard: scrapers address replicas by IP, and
	// METRICS_TOKEN protects it.
	obs := metrics.New(metrics.Options{Catalog: s.reg, Token: cfg.MetricsToken})
	s.app.Use(obs.Middleware())
	obs.Mount(s.app)
	s.app.Use(guard)
	s.app.Use(fiberfix.BoundBodies(fiber.DefaultBodyLimit, proxy.Route, jots.UploadPrefix, modules.Route))
	api := httpapi.Register(s.app, httpapi.Deps{Health: s, Ready: s, Callers: apiCallers{store: st, portal: portalSvc, cache: accounts.NewTokenCache(accounts.TokenCacheOptions{})}})
	modulesSvc, err := modules.New(modules.Options{Catalog: s.reg, Host: s.host, Refresher: s.mcp, Loading: s.loading.Load,
		UploadDir: filepath.Join(cfg.DataDir, "plugins-uploaded"), Logger: logger.With("component", "modules")})
	if err != nil {
		return err
	}
	modulesSvc.Mount(api.Admin)
	browsers.Mount(api.User)
	portalSvc.Mount(s.app)
	oauth.Mount(s.app)
	proxySvc.Mount(s.app)
	jotsSvc.Mount(s.app)
	s.app.All("/mcp", fiberfix.Bridge(context.Background(), s.mcp, 0))
	logger.Info("store open", "store", backend.Describe(cfg.DatabaseURL, cfg.DataDir))
	return nil
}

// newKeyring returns the keyring cfg describes: ENCRYPTION_KEY (or the key
// generated into DATA_DIR) and ENCRYPTION_KEYS_OLD (with the old-keys file
// in DATA_DIR).
func newKeyring(cfg Config) *secrets.Keyring {
	return secrets.NewKeyring(secrets.Config{Key: cfg.EncryptionKey, OldKeys: cfg.EncryptionKeysOld, DataDir: cfg.DataDir})
}

// jotLimits returns the jot limits cfg sets; zero fields mean the defaults.
func jotLimits(cfg Config) jots.Limits {
	return jots.Limits{MaxBytes: cfg.JotMaxBytes, MaxFiles: cfg.JotMaxFiles, UploadTTL: cfg.JotUploadTTL,
		MaxJotsPerUser: cfg.JotMaxPerUser, MaxBytesPerUser: cfg.JotMaxBytesPerUser}
}

// workbenchRoot returns WORKBENCH_ROOT, by default DATA_DIR/workspaces.
func workbenchRoot(cfg Config) string {
	if cfg.WorkbenchRoot != "" {
		return cfg.WorkbenchRoot
	}
	return filepath.Join(cfg.DataDir, "workspaces")
}

// workbenchLimits returns the exec workspace limits cfg sets; zero fields
// mean the defaults.
func workbenchLimits(cfg Config) workspace.Limits {
	return workspace.Limits{MaxBytes: cfg.WorkbenchMaxBytes, MaxFiles: cfg.WorkbenchMaxFiles,
		MaxPlans: cfg.WorkbenchMaxPlans, Idle: cfg.WorkbenchIdle}
}

// ensureAdmin creates the first admin on a store without users and prints
// its one-time sign-in link and API token to cfg.Announce. Later starts
// print nothing.
func (s *Server) ensureAdmin(ctx context.Context, st store.Store) error {
	u, token, created, err := accounts.EnsureAdmin(ctx, st)
	if err != nil || !created {
		return err
	}
	link, expires, err := accounts.CreateLoginLink(ctx, st, u.ID, time.Now())
	if err != nil {
		return fmt.Errorf("first admin: %w", err)
	}
	s.logger.Info("created the first admin user", "email", u.Email)
	announce := s.cfg.Announce
	if announce == nil {
		announce = os.Stdout
	}
	_, err = fmt.Fprintf(announce, `Workbench created the first admin user, %s.
Sign in once with this link before %s (it works one time):
  %s/login/once/%s
The admin's API token (shown only now; keep it secret):
  %s
`, u.Email, expires.Local().Format("15:04 MST"), s.cfg.PublicURL, link, token)
	return err
}
