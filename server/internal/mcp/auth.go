package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// Principal is the authenticated user of a request.
type Principal = metatools.Principal

// Authenticator resolves the bearer token of a request: an API token or an
// OAuth access token issued to an MCP client. A token that does not
// authenticate returns an error wrapping failure.ErrUnauthenticated; one
// wrapping failure.ErrUnavailable is answered 503 with Retry-After (the
// store is down); any other error is a failure of the service (answered
// with 500, details only logged).
type Authenticator interface {
	Authenticate(ctx context.Context, bearerToken string) (Principal, error)
}

// principalKey is where the principal travels in auth.TokenInfo.Extra.
const principalKey = "workbench.principal"

// requireBearer wraps next so that every request carries a valid bearer
// token; others get 401 with WWW-Authenticate naming the resource metadata,
// or 403 when a required scope is missing.
func requireBearer(next http.Handler, a Authenticator, metadataURL string, scopes []string, logger *slog.Logger) http.Handler {
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		p, err := a.Authenticate(ctx, token)
		switch {
		case errors.Is(err, failure.ErrUnauthenticated):
			return nil, fmt.Errorf("%w: the bearer token is not valid", auth.ErrInvalidToken)
		case errors.Is(err, failure.ErrUnavailable):
			logger.Warn("authenticating a bearer token: the store is unavailable", "err", err)
			if o, ok := r.Context().Value(outcomeKey{}).(*authOutcome); ok {
				o.unavailable = true
			}
			return nil, errors.New("Workbench cannot check tokens right now; retry shortly")
		case err != nil:
			logger.Error("authenticating a bearer token", "err", err)
			return nil, errors.New("the token could not be checked; try again later")
		case p.UserID == "":
			logger.Error("authenticator returned a principal without a user id")
			return nil, errors.New("the token could not be checked; try again later")
		}
		return &auth.TokenInfo{UserID: p.UserID, Scopes: p.Scopes, Extra: map[string]any{principalKey: p}}, nil
	}
	// The SDK's middleware answers failures itself; what it lets through
	// is served on the original writer (found in the context), so that
	// only failures pass through challengeWriter and streaming keeps the
	// writer's Flusher.
	check := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL:    metadataURL,
		Scopes:                 scopes,
		AllowMissingExpiration: true,
	})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(r.Context().Value(writerKey{}).(http.ResponseWriter), r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome := &authOutcome{}
		cw := &challengeWriter{ResponseWriter: w, outcome: outcome, hasToken: strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ")}
		ctx := context.WithValue(context.WithValue(r.Context(), writerKey{}, w), outcomeKey{}, outcome)
		check.ServeHTTP(cw, r.WithContext(ctx))
	})
}

// authOutcome is what the token check learned that the SDK's answer does
// not carry: whether the store was unavailable.
type authOutcome struct{ unavailable bool }

// outcomeKey carries a request's *authOutcome to the token check.
type outcomeKey struct{}

// retryAfterSeconds is what a 503 tells the client to wait.
const retryAfterSeconds = "1"

// writerKey carries a request's original http.ResponseWriter past the
// bearer check.
type writerKey struct{}

// challengeWriter adds the RFC 6750 error code to the bearer challenge of a
// refused request: invalid_token on a 401 for a token that did not
// authenticate (not for a request without one), insufficient_scope on a
// 403; and turns the 500 of a store outage into 503 with Retry-After.
type challengeWriter struct {
	http.ResponseWriter
	outcome  *authOutcome
	hasToken bool
}

func (c *challengeWriter) WriteHeader(code int) {
	h := c.Header()
	if code == http.StatusInternalServerError && c.outcome.unavailable {
		// A store outage is temporary: 503, never 500.
		h.Set("Retry-After", retryAfterSeconds)
		code = http.StatusServiceUnavailable
	}
	if ch := h.Get("WWW-Authenticate"); strings.HasPrefix(ch, "Bearer ") {
		switch {
		case code == http.StatusForbidden:
			h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", `+strings.TrimPrefix(ch, "Bearer "))
		case code == http.StatusUnauthorized && c.hasToken:
			h.Set("WWW-Authenticate", `Bearer error="invalid_token", `+strings.TrimPrefix(ch, "Bearer "))
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

// principalOf returns the principal attached to a request by requireBearer.
func principalOf(info *auth.TokenInfo) (Principal, bool) {
	if info == nil {
		return Principal{}, false
	}
	p, ok := info.Extra[principalKey].(Principal)
	return p, ok
}
