package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/oauthserver"
)

// The /mcp endpoint is built in New, the store opens in Run: these adapters
// read the server's state at call time. Requests reach /mcp only after Run
// set it, since the listener opens after the store.

// storeTokens authenticates /mcp bearer tokens against the API tokens in
// the store and the access tokens Workbench's OAuth server issued for /mcp.
type storeTokens struct{ s *Server }

var _ mcp.Authenticator = storeTokens{}

func (a storeTokens) Authenticate(ctx context.Context, bearer string) (mcp.Principal, error) {
	st := a.s.state
	if st == nil {
		return mcp.Principal{}, fmt.Errorf("the store is not open yet: %w", mcp.ErrUnauthenticated)
	}
	userID, scopes := "", oauthserver.RequiredScopes() // an API token may do everything
	tok, err := accounts.Authenticate(ctx, st.store, bearer)
	switch {
	case errors.Is(err, accounts.ErrUnauthenticated):
		// Not an API token: an OAuth access token issued for /mcp?
		at, oerr := st.oauth.Authenticate(ctx, bearer)
		if errors.Is(oerr, oauthserver.ErrUnauthenticated) {
			return mcp.Principal{}, fmt.Errorf("%w: %w", mcp.ErrUnauthenticated, err)
		}
		if oerr != nil {
			return mcp.Principal{}, oerr
		}
		userID, scopes = at.UserID, oauthserver.ScopesOf(at)
	case err != nil:
		return mcp.Principal{}, err
	default:
		userID = tok.UserID
	}
	u, err := st.store.User(ctx, userID)
	if err != nil {
		return mcp.Principal{}, fmt.Errorf("token of user %s: %w", userID, err)
	}
	return mcp.Principal{UserID: u.ID, TenantID: u.TenantID, Email: u.Email, Scopes: scopes}, nil
}

// storeConnections backs connect, wait_for_connection and the connected
// flags of the meta-tools with the connect and connections services.
type storeConnections struct{ s *Server }

var _ metatools.Connections = storeConnections{}

func (c storeConnections) Connected(ctx context.Context, userID, integration string) (bool, error) {
	in, ok := c.s.reg.Current().Integration(integration)
	if !ok {
		return false, fmt.Errorf("%q: %w", integration, failure.ErrUnknownIntegration)
	}
	state, err := c.s.state.connections.Status(ctx, userID, integration, in.Manifest().Auth.Mode)
	return state.Connected, err
}

func (c storeConnections) Connect(ctx context.Context, userID, integration string) (string, string, error) {
	return c.s.state.connect.Connect(ctx, userID, integration)
}

func (c storeConnections) Wait(ctx context.Context, userID, connectionID string, timeout time.Duration) (string, string, error) {
	status, reason, err := c.s.state.connect.Wait(ctx, userID, connectionID, timeout)
	if errors.Is(err, failure.ErrUnknownConnection) {
		return "", "", fmt.Errorf("%w: %w", failure.ErrUnknownConnection, err)
	}
	return string(status), reason, err
}
