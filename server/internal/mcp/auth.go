package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// Principal is the authenticated user of a request.
type Principal = metatools.Principal

// ErrUnauthenticated is wrapped by an Authenticator for a token that is
// unknown, expired or revoked.
var ErrUnauthenticated = errors.New("invalid or expired bearer token")

// Authenticator resolves the bearer token of a request: an API token or an
// OAuth access token issued to an MCP client. A token that does not
// authenticate returns an error wrapping ErrUnauthenticated; any other error
// is a failure of the service (answered with 500, details only logged).
type Authenticator interface {
	Authenticate(ctx context.Context, bearerToken string) (Principal, error)
}

// principalKey is where the principal travels in auth.TokenInfo.Extra.
const principalKey = "workbench.principal"

// requireBearer wraps next so that every request carries a valid bearer
// token; others get 401 with WWW-Authenticate naming the resource metadata,
// or 403 when a required scope is missing.
func requireBearer(next http.Handler, a Authenticator, metadataURL string, scopes []string, logger *slog.Logger) http.Handler {
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, err := a.Authenticate(ctx, token)
		switch {
		case errors.Is(err, ErrUnauthenticated):
			return nil, fmt.Errorf("%w: the bearer token is not valid", auth.ErrInvalidToken)
		case err != nil:
			logger.Error("authenticating a bearer token", "err", err)
			return nil, errors.New("the token could not be checked; try again later")
		case p.UserID == "":
			logger.Error("authenticator returned a principal without a user id")
			return nil, errors.New("the token could not be checked; try again later")
		}
		return &auth.TokenInfo{UserID: p.UserID, Scopes: p.Scopes, Extra: map[string]any{principalKey: p}}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL:    metadataURL,
		Scopes:                 scopes,
		AllowMissingExpiration: true,
	})(next)
}

// principalOf returns the principal attached to a request by requireBearer.
func principalOf(info *auth.TokenInfo) (Principal, bool) {
	if info == nil {
		return Principal{}, false
	}
	p, ok := info.Extra[principalKey].(Principal)
	return p, ok
}
