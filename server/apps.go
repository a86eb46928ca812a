package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/customapps"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Errors of Admin's custom apps.
var (
	// ErrNoApp: the user has no app with the given name.
	ErrNoApp = errors.New("no such app")
	// ErrAppExists: the user already has an app with the name, or an
	// integration has it.
	ErrAppExists = errors.New("the app name is taken")
)

// NewApp is a custom app to add: an MCP server (streamable HTTP) at URL,
// with auth "none" (the default) or "manual" with a bearer token.
type NewApp struct {
	Name   string
	URL    string
	Auth   string
	Bearer string
}

// AppInfo describes a custom app, never its credential.
type AppInfo struct {
	ID   string
	Name string
	URL  string
	Auth string
}

// newCustomApps is the serving side of custom apps: the meta-tools resolve
// each caller's apps through it. An app may not take the name of an
// integration of the catalog, and every request to an app goes through the
// egress address rule.
func newCustomApps(cfg Config, st store.Store, conns *connections.Service, reg *registry.Registry, logger *slog.Logger) (*customapps.Service, error) {
	taken := func(name string) bool {
		_, ok := reg.Current().Integration(name)
		return ok || manifest.Reserved(name)
	}
	dial := egress.NewClient(egress.Options{AllowPrivate: cfg.EgressAllowPrivate}).DialContext
	return customapps.New(customapps.Options{Store: st, Credentials: appCredentials{conns}, Taken: taken,
		HTTPClient: customapps.NewHTTPClient(dial, 0), Logger: logger})
}

// apps is the custom apps service over the admin's store; it registers
// apps and never calls them.
func (a *Admin) apps() (*customapps.Service, error) {
	conns := connections.New(a.store, newKeyring(a.cfg), connections.Options{})
	return customapps.New(customapps.Options{Store: a.store, Credentials: appCredentials{conns}, Taken: manifest.Reserved})
}

// appError maps the store's sentinels to Admin's.
func appError(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%w: %q (%v)", ErrAppExists, name, err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %q (%v)", ErrNoApp, name, err)
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return err
}

// AddApp adds a custom app for the user with the email.
func (a *Admin) AddApp(ctx context.Context, email string, app NewApp) (AppInfo, error) {
	u, err := a.user(ctx, email)
	if err != nil {
		return AppInfo{}, err
	}
	svc, err := a.apps()
	if err != nil {
		return AppInfo{}, err
	}
	rec, err := svc.Add(ctx, u.ID, customapps.NewApp{Name: app.Name, URL: app.URL, Auth: app.Auth, Bearer: app.Bearer})
	if err != nil {
		return AppInfo{}, appError(err, app.Name)
	}
	return appInfo(rec), nil
}

// Apps lists the custom apps of the user with the email, by name.
func (a *Admin) Apps(ctx context.Context, email string) ([]AppInfo, error) {
	u, err := a.user(ctx, email)
	if err != nil {
		return nil, err
	}
	recs, err := a.store.CustomApps(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	out := make([]AppInfo, len(recs))
	for i, r := range recs {
		out[i] = appInfo(r)
	}
	return out, nil
}

// RemoveApp removes a custom app of the user with the email, and its
// credential.
func (a *Admin) RemoveApp(ctx context.Context, email, name string) error {
	u, err := a.user(ctx, email)
	if err != nil {
		return err
	}
	svc, err := a.apps()
	if err != nil {
		return err
	}
	if err := svc.Remove(ctx, u.ID, name); err != nil {
		return appError(err, name)
	}
	return nil
}

func appInfo(r store.CustomApp) AppInfo {
	return AppInfo{ID: r.ID, Name: r.Name, URL: r.URL, Auth: r.Auth}
}
