package oauthserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// token exchanges a code or a refresh token for a new access token and
// refresh token.
func (s *Server) token(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
	defer cancel()
	form := func(k string) string { return strings.Clone(c.FormValue(k)) }
	clientID := form("client_id")
	if _, err := s.store.OAuthClient(ctx, clientID); errors.Is(err, store.ErrNotFound) {
		return oauthError(c, http.StatusUnauthorized, "invalid_client", "unknown client_id")
	} else if err != nil {
		return s.internalError(c, err)
	}
	if r := form("resource"); r != "" && r != s.resource {
		return oauthError(c, http.StatusBadRequest, "invalid_target", "resource must be "+s.resource)
	}
	var kind store.OAuthTokenKind
	var secret string
	switch form("grant_type") {
	case "authorization_code":
		kind, secret = store.OAuthCode, form("code")
	case "refresh_token":
		kind, secret = store.OAuthRefresh, form("refresh_token")
	case "":
		return oauthError(c, http.StatusBadRequest, "invalid_request", "grant_type is missing")
	default:
		return oauthError(c, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	if secret == "" {
		return oauthError(c, http.StatusBadRequest, "invalid_request", "the "+string(kind)+" is missing")
	}
	if kind == store.OAuthCode && !validVerifier(form("code_verifier")) {
		return oauthError(c, http.StatusBadRequest, "invalid_request", "code_verifier must be 43 to 128 unreserved characters")
	}
	// The credential is checked against the request before it is used up,
	// so that a request with a typo'd scope or the wrong client_id costs
	// nothing: the corrected retry works, and only a second use after a
	// successful one counts as a replay.
	hash := secrets.HashToken(secret)
	grant, err := s.store.OAuthToken(ctx, kind, hash)
	if errors.Is(err, store.ErrNotFound) {
		// Used, revoked, expired or unknown: using it tells a replay (which
		// revokes its grant) from the rest.
		_, err = s.store.ConsumeOAuthToken(ctx, kind, hash)
		return s.spent(c, kind, clientID, err)
	}
	if err != nil {
		return s.internalError(c, err)
	}
	scope, err := s.checkGrant(grant, form)
	if err != nil {
		return s.refuse(c, err)
	}
	if _, err := s.store.ConsumeOAuthToken(ctx, kind, hash); err != nil {
		return s.spent(c, kind, clientID, err) // a concurrent request used it first
	}
	grant.Scope = scope
	access, refresh, err := s.issue(ctx, grant)
	if errors.Is(err, store.ErrConflict) { // revoked by a concurrent replay
		return oauthError(c, http.StatusBadRequest, "invalid_grant", "the grant was revoked")
	}
	if err != nil {
		return s.internalError(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	return c.JSON(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(AccessTTL.Seconds()),
		"refresh_token": refresh, "scope": scope})
}

// checkGrant checks a live code or refresh token against the request that
// presents it and returns the scope to issue, or a *refusal.
func (s *Server) checkGrant(grant store.OAuthToken, form func(string) string) (string, error) {
	kind := string(grant.Kind)
	switch {
	case grant.ClientID != form("client_id"):
		return "", badRequest("invalid_grant", "the "+kind+" was issued to another client")
	case grant.Resource != s.resource:
		return "", badRequest("invalid_target", "the "+kind+" was issued for another resource")
	}
	if grant.Kind == store.OAuthCode {
		if form("redirect_uri") != grant.RedirectURI {
			return "", badRequest("invalid_grant", "redirect_uri does not match the authorization request")
		}
		if !sameString(challengeOf(form("code_verifier")), grant.CodeChallenge) {
			return "", badRequest("invalid_grant", "code_verifier does not match the code_challenge")
		}
		return grant.Scope, nil
	}
	scope, err := narrowScope(form("scope"), grant.Scope)
	if err != nil {
		return "", badRequest("invalid_scope", err.Error())
	}
	return scope, nil
}

// badRequest returns a 400 refusal.
func badRequest(code, description string) *refusal {
	return &refusal{status: http.StatusBadRequest, code: code, description: description}
}

// spent answers a code or refresh token that ConsumeOAuthToken refused
// with err: a replay, whose grant is now revoked, or one that is unknown,
// expired or revoked. A nil err cannot follow a look-up that found nothing
// and is refused all the same.
func (s *Server) spent(c *fiber.Ctx, kind store.OAuthTokenKind, clientID string, err error) error {
	switch {
	case errors.Is(err, store.ErrOAuthReplay):
		// Someone holds a copy of a code or refresh token that was already
		// used: every token of that grant is now revoked (OAuth 2.1 reuse
		// detection), and the client must authorize again.
		s.logger.Warn("an OAuth credential was replayed; its grant is revoked", "kind", kind, "client_id", clientID, "err", err)
		return oauthError(c, http.StatusBadRequest, "invalid_grant", "the "+string(kind)+" was already used; every token of its grant is revoked")
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrExpired):
		return oauthError(c, http.StatusBadRequest, "invalid_grant", "the "+string(kind)+" is unknown, expired or already used")
	}
	return s.internalError(c, err)
}

// issue stores a new access token and refresh token for grant's user,
// client, resource, family and scope and returns them.
func (s *Server) issue(ctx context.Context, grant store.OAuthToken) (access, refresh string, err error) {
	now := s.now()
	access, accessHash := newSecret()
	refresh, refreshHash := newSecret()
	for _, t := range []store.NewOAuthToken{
		{Kind: store.OAuthAccess, Hash: accessHash, ExpiresAt: now.Add(AccessTTL)},
		{Kind: store.OAuthRefresh, Hash: refreshHash, ExpiresAt: now.Add(RefreshTTL)},
	} {
		t.UserID, t.ClientID, t.Resource, t.Family, t.Scope = grant.UserID, grant.ClientID, grant.Resource, grant.Family, grant.Scope
		if _, err := s.store.CreateOAuthToken(ctx, t); err != nil {
			return "", "", err
		}
	}
	return access, refresh, nil
}
