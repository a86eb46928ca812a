package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/customapps"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/oauthserver"
	"github.com/workbench-dev/workbench/server/internal/portal"
	"github.com/workbench-dev/workbench/server/internal/proxy"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// The services under server/internal do not import each other; the few
// places where one's interface meets another's types are here, each built
// once from services that are already open.

// tokens authenticates /mcp bearer tokens: the API tokens in the store and
// the access tokens Workbench's OAuth server issued for /mcp, through a
// cache that rechecks each token every few seconds and bridges a short
// store outage.
type tokens struct {
	store store.Store
	oauth *oauthserver.Server
	cache *accounts.TokenCache
}

var _ mcp.Authenticator = tokens{}

func (a tokens) Authenticate(ctx context.Context, bearer string) (mcp.Principal, error) {
	id, err := a.cache.Resolve(ctx, bearer, func(ctx context.Context) (accounts.Identity, error) {
		id, err := accounts.IdentityOf(ctx, a.store, bearer)
		if !errors.Is(err, failure.ErrUnauthenticated) {
			return id, err // an API token may do everything (nil scopes)
		}
		// Not an API token: an OAuth access token issued for /mcp?
		at, oerr := a.oauth.Authenticate(ctx, bearer)
		if errors.Is(oerr, failure.ErrUnauthenticated) {
			return accounts.Identity{}, err
		}
		if oerr != nil {
			return accounts.Identity{}, oerr
		}
		u, uerr := a.store.User(ctx, at.UserID)
		if uerr != nil {
			return accounts.Identity{}, fmt.Errorf("token of user %s: %w", at.UserID, uerr)
		}
		return accounts.Identity{User: u, Scopes: oauthserver.ScopesOf(at)}, nil
	})
	if err != nil {
		return mcp.Principal{}, err
	}
	scopes := id.Scopes
	if scopes == nil {
		scopes = oauthserver.RequiredScopes()
	}
	return mcp.Principal{UserID: id.User.ID, TenantID: id.User.TenantID, Email: id.User.Email, Scopes: scopes}, nil
}

// apiCallers authenticates /api requests: API tokens (through their own
// cache: an OAuth access token for /mcp is not an /api credential), and the
// portal's sessions.
type apiCallers struct {
	store  store.Store
	portal *portal.Portal
	cache  *accounts.TokenCache
}

var _ httpapi.Callers = apiCallers{}

func (a apiCallers) Bearer(ctx context.Context, token string) (httpapi.Caller, error) {
	id, err := a.cache.Resolve(ctx, token, func(ctx context.Context) (accounts.Identity, error) {
		return accounts.IdentityOf(ctx, a.store, token)
	})
	if err != nil {
		return httpapi.Caller{}, err
	}
	return callerOf(id.User), nil
}

func (a apiCallers) Session(ctx context.Context, cookie string) (httpapi.Caller, string, error) {
	s, u, err := a.portal.Session(ctx, cookie)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Caller{}, "", fmt.Errorf("%w: %w", failure.ErrUnauthenticated, err)
	}
	if err != nil {
		return httpapi.Caller{}, "", err
	}
	return callerOf(u), s.CSRFSecret, nil
}

func (a apiCallers) SessionCookie() string { return a.portal.SessionCookieName() }

func callerOf(u store.User) httpapi.Caller {
	return httpapi.Caller{UserID: u.ID, TenantID: u.TenantID, Email: u.Email, Admin: u.IsAdmin}
}

// userConnections is what the meta-tools know of connections: the
// connections service says who is connected, the connect service runs the
// handshakes.
type userConnections struct {
	*connections.Service
	flow *connect.Service
}

var _ metatools.Connections = userConnections{}

func (c userConnections) Connect(ctx context.Context, userID, integration string) (string, string, error) {
	return c.flow.Connect(ctx, userID, integration)
}

func (c userConnections) Wait(ctx context.Context, userID, connectionID string, timeout time.Duration) (string, string, error) {
	status, reason, err := c.flow.Wait(ctx, userID, connectionID, timeout)
	return string(status), reason, err
}

// curlSessions mints curl_session's tokens through the proxy.
type curlSessions struct{ proxy *proxy.Service }

var _ metatools.CurlSessions = curlSessions{}

func (p curlSessions) Mint(ctx context.Context, userID string, integrations []string) (metatools.CurlSession, error) {
	m, err := p.proxy.Mint(ctx, userID, integrations)
	if err != nil {
		return metatools.CurlSession{}, err
	}
	return metatools.CurlSession{Token: m.Token, ExpiresAt: m.ExpiresAt, Endpoints: m.Endpoints}, nil
}

// appCredentials keeps custom apps' bearer tokens as connections keyed by
// the app's id: sealed like every credential, re-sealed by key rotation.
type appCredentials struct{ conns *connections.Service }

var _ customapps.Credentials = appCredentials{}

func (c appCredentials) SealBearer(ctx context.Context, userID, appID, token string) (store.Connection, error) {
	return c.conns.Seal(ctx, userID, appID, connections.Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: token}})
}

func (c appCredentials) Bearer(ctx context.Context, userID, appID string) (string, error) {
	cred, err := c.conns.Credential(ctx, userID, appID)
	if err != nil {
		return "", err
	}
	return cred.AccessToken, nil
}
