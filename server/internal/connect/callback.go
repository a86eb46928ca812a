package connect

import (
	"context"
	"errors"
	"fmt"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Callback is what a provider sent back to CallbackPath<integration>.
type Callback struct {
	State            string
	Code             string
	Error            string // the provider's error code, such as access_denied
	ErrorDescription string
}

// CompleteOAuth ends the oauth2 handshake the callback's state belongs to.
// userID is the portal user whose browser delivered the callback: it must
// own the handshake. The state is spent whatever happens, so a replay gets
// ErrUnknownState. A provider error or a failed code exchange marks the
// handshake FAILED with the reason and returns an error wrapping
// ErrAuthorization; success stores the tokens as the user's connection and
// marks the handshake CONNECTED.
func (s *Service) CompleteOAuth(ctx context.Context, userID, integration string, cb Callback) (store.PendingConnection, error) {
	p, err := s.store.ConsumePendingState(ctx, cb.State)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.PendingConnection{}, fmt.Errorf("connect: %w: this authorization response does not belong to a connection request in progress (it was already used, or it is not ours)", ErrUnknownState)
	case errors.Is(err, store.ErrExpired):
		return store.PendingConnection{}, fmt.Errorf("connect: %w: the %s connection request ran out of time; start a new one", store.ErrExpired, integration)
	case errors.Is(err, store.ErrNotPending):
		return store.PendingConnection{}, fmt.Errorf("connect: %w: the %s connection request already ended", store.ErrNotPending, integration)
	case err != nil:
		return store.PendingConnection{}, err
	}
	fail := func(sentinel error, reason string) (store.PendingConnection, error) {
		if err := s.finish(ctx, p, store.Outcome{Status: store.PendingFailed, Reason: reason}); err != nil {
			return store.PendingConnection{}, errors.Join(fmt.Errorf("connect: %w: %s", sentinel, reason), err)
		}
		return store.PendingConnection{}, fmt.Errorf("connect: %w: %s", sentinel, reason)
	}
	switch {
	case p.UserID != userID:
		return fail(ErrWrongUser, "the authorization came back in another user's browser session; the request was cancelled")
	case p.Integration != integration || p.Mode != manifest.ModeOAuth2:
		return fail(ErrUnknownState, fmt.Sprintf("the authorization came back for %q, but the request was for %s", clip(integration), p.Integration))
	case cb.Error != "":
		reason := "the provider refused the authorization: " + cleanText(cb.Error, 64)
		if d := cleanText(cb.ErrorDescription, maxProviderMessage); d != "" {
			reason += ": " + d
		}
		return fail(ErrAuthorization, reason)
	case cb.Code == "":
		return fail(ErrAuthorization, "the provider sent no authorization code")
	}
	verifier, err := s.vault.OpenVerifier(p)
	if err != nil {
		_, ferr := fail(ErrAuthorization, "the request's PKCE verifier could not be read")
		return store.PendingConnection{}, errors.Join(ferr, err)
	}
	tok, err := s.providers.exchange(ctx, p.Integration, cb.Code, verifier)
	if err != nil {
		var perr *ProviderError
		if errors.As(err, &perr) {
			return fail(ErrAuthorization, "the code exchange failed: "+perr.Error())
		}
		if errors.Is(err, failure.ErrNotConfigured) || errors.Is(err, failure.ErrUnknownIntegration) {
			return fail(ErrAuthorization, err.Error())
		}
		_, ferr := fail(ErrAuthorization, "the provider's token endpoint could not be reached")
		return store.PendingConnection{}, errors.Join(ferr, err)
	}
	row, err := s.vault.Seal(ctx, p.UserID, p.Integration, connections.Secret{Mode: credential.ModeOAuth2,
		Credential: credential.Credential{AccessToken: tok.AccessToken}, RefreshToken: tok.RefreshToken, ExpiresAt: tok.ExpiresAt})
	if err != nil {
		return store.PendingConnection{}, err
	}
	if err := s.finish(ctx, p, store.Outcome{Status: store.PendingConnected, Connection: &row}); err != nil {
		return store.PendingConnection{}, err
	}
	return s.store.Pending(ctx, p.UserID, p.ID)
}
