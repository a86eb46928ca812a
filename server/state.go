package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/oauthserver"
	"github.com/workbench-dev/workbench/server/internal/portal"
	"github.com/workbench-dev/workbench/server/internal/proxy"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/backend"
)

// state is what Run opens before it serves: the store and the services over
// it. Run closes it after the HTTP server and the plugin host are done.
type state struct {
	store       store.Store
	keys        *secrets.Keyring
	connections *connections.Service // the runtime's credential source
	connect     *connect.Service
	portal      *portal.Portal
	oauth       *oauthserver.Server
	proxy       *proxy.Service // curl sessions and /c/ (proxy.go)
	jots        *jotsService   // jots at /j/ (jots.go)

	// sweepers are further periodic clean-ups the services register; each
	// runs until its context ends.
	sweepers []func(context.Context)
}

// catalog adapts the registry to the connect service and the portal: it
// always reads the current snapshot, so plugin reloads show at once.
type catalog struct{ reg *registry.Registry }

// Manifest implements connect.Catalog.
func (c catalog) Manifest(name string) (*manifest.Manifest, bool) {
	in, ok := c.reg.Current().Integration(name)
	if !ok {
		return nil, false
	}
	return in.Manifest(), true
}

// Manifests implements portal.Catalog.
func (c catalog) Manifests() []*manifest.Manifest {
	ins := c.reg.Current().Integrations()
	out := make([]*manifest.Manifest, len(ins))
	for i, in := range ins {
		out[i] = in.Manifest()
	}
	return out
}

// newKeyring returns the keyring cfg describes: ENCRYPTION_KEY (or the key
// generated into DATA_DIR) and ENCRYPTION_KEYS_OLD (with the old-keys file
// in DATA_DIR).
func newKeyring(cfg Config) *secrets.Keyring {
	return secrets.NewKeyring(secrets.Config{Key: cfg.EncryptionKey, OldKeys: cfg.EncryptionKeysOld, DataDir: cfg.DataDir})
}

// openStore opens and migrates the store cfg selects and loads the keyring,
// generating the key on a first start without ENCRYPTION_KEY.
func openStore(ctx context.Context, cfg Config) (store.Store, *secrets.Keyring, error) {
	st, err := backend.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("store (%s): %w", backend.Describe(cfg.DatabaseURL, cfg.DataDir), err)
	}
	keys := newKeyring(cfg)
	if _, err := keys.CurrentKeyID(); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("ENCRYPTION_KEY: %w", err), st.Close())
	}
	return st, keys, nil
}

// AnnounceTo sets where Run prints the first-start notice: the first admin's
// one-time sign-in link and API token, shown once. The default is
// os.Stdout. Call it before Run.
func (s *Server) AnnounceTo(w io.Writer) { s.announce = w }

// openState opens the store, builds the services over it, mounts the portal
// and, on a store without users, creates the first admin and announces it.
func (s *Server) openState(ctx context.Context) (*state, error) {
	st, keys, err := openStore(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	cat := catalog{reg: s.reg}
	providers := connect.NewProviders(connect.ProviderOptions{Catalog: cat, PublicURL: s.cfg.PublicURL, AllowPrivate: s.cfg.EgressAllowPrivate})
	conns := connections.New(st, keys, connections.Options{Refresher: providers})
	svc, err := connect.New(connect.Options{Store: st, Vault: conns, Providers: providers, Catalog: cat, PublicURL: s.cfg.PublicURL,
		HandshakeWindow: s.cfg.ConnectWindow, Logger: s.logger.With("component", "connect")})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	p, err := portal.New(portal.Options{Store: st, Catalog: cat, Connections: conns, Connector: svc,
		SignIn: accounts.NewSignIn(st, s.passwords, accounts.SignInOptions{}), Passwords: s.passwords, ClientAddr: s.cfg.TrustedProxies,
		PublicURL: s.cfg.PublicURL,
		Logger:    s.logger.With("component", "portal")})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	as, err := oauthserver.New(oauthserver.Options{Store: st, PublicURL: s.cfg.PublicURL, SessionCookie: p.SessionCookieName(),
		AllowLoopbackDocuments: s.cfg.EgressAllowPrivate, ClientAddr: s.cfg.TrustedProxies, Logger: s.logger.With("component", "oauth")})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if err := s.ensureAdmin(ctx, st); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	p.Mount(s.app)
	as.Mount(s.app)
	opened := &state{store: st, keys: keys, connections: conns, connect: svc, portal: p, oauth: as}
	if err := s.openProxy(ctx, opened); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if err := s.openJots(ctx, opened); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	s.logger.Info("store open", "store", backend.Describe(s.cfg.DatabaseURL, s.cfg.DataDir))
	return opened, nil
}

// ensureAdmin creates the first admin on a store without users and prints
// its one-time sign-in link and API token. Later starts print nothing.
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
	_, err = fmt.Fprintf(s.announce, `Workbench created the first admin user, %s.
Sign in once with this link before %s (it works one time):
  %s/login/once/%s
The admin's API token (shown only now; keep it secret):
  %s
`, u.Email, expires.Local().Format("15:04 MST"), s.cfg.PublicURL, link, token)
	return err
}

// runSweepers starts the periodic clean-ups and returns a function that
// waits for them to stop once ctx ends.
func (st *state) runSweepers(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() { st.connect.RunSweeper(ctx) })
	wg.Go(func() { st.portal.RunSweeper(ctx) })
	wg.Go(func() { st.oauth.RunSweeper(ctx, time.Hour) })
	for _, sweep := range st.sweepers {
		wg.Go(func() { sweep(ctx) })
	}
	return wg.Wait
}

// close closes the store.
func (st *state) close() error {
	if err := st.store.Close(); err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	return nil
}
