package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// RefreshWindow is how close to its expiry an OAuth access token is renewed.
const RefreshWindow = 60 * time.Second

// resealBatch is how many rows Rotate reseals per query.
const resealBatch = 100

// lockStripes bounds the refresh locks: users and integrations hash onto them.
const lockStripes = 64

// aadLabel versions the AAD layout.
const aadLabel = "workbench/connection/v1"

// Purposes of sealed blobs, part of their AAD.
const (
	purposeCredential = "credential"
	purposeRefresh    = "refresh"
	purposeVerifier   = "pkce-verifier"
)

// ErrRefreshRejected is wrapped by a Refresher's error when the provider
// refused the refresh for good (invalid_grant, revoked consent): the user is
// then not connected until they connect again. Any other refresher error is
// treated as transient.
var ErrRefreshRejected = errors.New("refresh rejected by the provider")

// Token is an OAuth token as a provider returned it.
type Token struct {
	AccessToken  string
	RefreshToken string    // empty: keep the one already stored
	ExpiresAt    time.Time // zero: does not expire
}

// Refresher renews an OAuth access token with a refresh token (the
// refresh-token grant). Its error messages become the stored reason a
// connection failed, so they must carry the provider's reason and never a
// token.
type Refresher interface {
	Refresh(ctx context.Context, userID, integration, refreshToken string) (Token, error)
}

// Secret is what Save stores for a user and integration.
type Secret struct {
	Mode       string // the integration's auth mode (credential.ModeOAuth2, ...)
	Credential credential.Credential
	// RefreshToken renews an oauth2 AccessToken; sealed apart from it.
	RefreshToken string
	// ExpiresAt is when the oauth2 access token expires; zero if it does not.
	ExpiresAt time.Time
}

// State is whether a user counts as connected to an integration.
type State struct {
	Connected bool
	Reason    string    // why not, for people and agents; empty when connected
	ExpiresAt time.Time // the access token's expiry, when known
}

// Store is the part of the store connections work on.
type Store interface {
	User(ctx context.Context, userID string) (store.User, error)
	PutConnection(ctx context.Context, c store.Connection) (store.Connection, error)
	Connection(ctx context.Context, userID, integration string) (store.Connection, error)
	SetConnectionStatus(ctx context.Context, userID, integration string, status store.ConnectionStatus, reason string) error
	DeleteConnection(ctx context.Context, userID, integration string) error
	ResealConnections(ctx context.Context, keyID string, batch int, reseal func(store.Connection) (store.Connection, error)) (int, error)
}

// Catalog finds an integration's manifest by name; the registry is one.
type Catalog interface {
	Manifest(name string) (*manifest.Manifest, bool)
}

// Options configure a Service; the zero value is usable.
type Options struct {
	// Catalog tells an integration's auth mode for Connected; nil means
	// Connected knows no integration.
	Catalog Catalog
	// Refresher renews OAuth tokens; nil means expired tokens are not
	// renewed and the user must connect again.
	Refresher Refresher
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service reads and writes sealed connections. It is safe for concurrent
// use.
type Service struct {
	store     Store
	keys      *secrets.Keyring
	catalog   Catalog
	refresher Refresher
	now       func() time.Time
	locks     [lockStripes]chan struct{} // one refresh at a time per stripe
}

var _ credential.Source = (*Service)(nil)

// New returns a Service over st that seals with keys.
func New(st Store, keys *secrets.Keyring, opts Options) *Service {
	s := &Service{store: st, keys: keys, catalog: opts.Catalog, refresher: opts.Refresher, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	for i := range s.locks {
		s.locks[i] = make(chan struct{}, 1)
	}
	return s
}

// sealedCredential is the JSON inside a credential blob.
type sealedCredential struct {
	AccessToken string            `json:"access_token,omitempty"`
	Fields      map[string]string `json:"fields,omitempty"`
	Cookies     []*http.Cookie    `json:"cookies,omitempty"`
}

// sealedRefresh is the JSON inside a refresh blob.
type sealedRefresh struct {
	RefreshToken string `json:"refresh_token"`
}

func aad(purpose, tenantID, userID, integration string) []byte {
	return secrets.AAD(aadLabel, purpose, tenantID, userID, integration)
}

// Save seals sec and stores it as the user's connection to integration,
// replacing any earlier one and clearing a failed status.
func (s *Service) Save(ctx context.Context, userID, integration string, sec Secret) (store.Connection, error) {
	c, err := s.Seal(ctx, userID, integration, sec)
	if err != nil {
		return store.Connection{}, err
	}
	return s.store.PutConnection(ctx, c)
}

// Seal seals sec for the user's connection to integration and returns the
// row without storing it, for a caller that stores it together with other
// changes (store.Outcome.Connection completes a pending connection and stores
// its credential in one transaction).
func (s *Service) Seal(ctx context.Context, userID, integration string, sec Secret) (store.Connection, error) {
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return store.Connection{}, err
	}
	return s.seal(u.TenantID, userID, integration, sec)
}

// seal builds the connection row for sec. It seals both blobs under one key.
func (s *Service) seal(tenantID, userID, integration string, sec Secret) (store.Connection, error) {
	if err := checkSecret(sec); err != nil {
		return store.Connection{}, err
	}
	plain, err := json.Marshal(sealedCredential{AccessToken: sec.Credential.AccessToken, Fields: sec.Credential.Fields, Cookies: sec.Credential.Cookies})
	if err != nil {
		return store.Connection{}, fmt.Errorf("connections: encoding the %q credential: %w", integration, err)
	}
	defer clear(plain)
	sealed, keyID, err := s.keys.Seal(plain, aad(purposeCredential, tenantID, userID, integration))
	if err != nil {
		return store.Connection{}, err
	}
	c := store.Connection{UserID: userID, Integration: integration, Mode: sec.Mode, Sealed: sealed, KeyID: keyID, ExpiresAt: sec.ExpiresAt}
	if sec.RefreshToken != "" {
		rplain, _ := json.Marshal(sealedRefresh{RefreshToken: sec.RefreshToken})
		defer clear(rplain)
		rsealed, rkeyID, err := s.keys.Seal(rplain, aad(purposeRefresh, tenantID, userID, integration))
		if err != nil {
			return store.Connection{}, err
		}
		if rkeyID != keyID { // the key changed between the two seals
			return store.Connection{}, fmt.Errorf("connections: the encryption key changed while sealing; try again")
		}
		c.SealedRefresh = rsealed
	}
	return c, nil
}

// checkSecret rejects a secret that would not count as connected.
func checkSecret(sec Secret) error {
	switch sec.Mode {
	case credential.ModeOAuth2:
		if sec.Credential.AccessToken == "" {
			return fmt.Errorf("%w: an oauth2 connection needs an access token", store.ErrInvalid)
		}
	case credential.ModeAPIKey:
		if len(sec.Credential.Fields) == 0 {
			return fmt.Errorf("%w: an apikey connection needs at least one field", store.ErrInvalid)
		}
	case credential.ModeCookie:
		if len(sec.Credential.Cookies) == 0 {
			return fmt.Errorf("%w: a cookie connection needs at least one cookie", store.ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: auth mode %q stores no credential", store.ErrInvalid, sec.Mode)
	}
	if sec.RefreshToken != "" && sec.Mode != credential.ModeOAuth2 {
		return fmt.Errorf("%w: only oauth2 connections have a refresh token", store.ErrInvalid)
	}
	return nil
}

// open returns the credential and refresh token a row seals.
func (s *Service) open(c store.Connection) (*credential.Credential, string, error) {
	plain, err := s.keys.Open(c.Sealed, c.KeyID, aad(purposeCredential, c.TenantID, c.UserID, c.Integration))
	if err != nil {
		return nil, "", fmt.Errorf("connections: opening the %q credential of user %q: %w", c.Integration, c.UserID, err)
	}
	defer clear(plain)
	var sc sealedCredential
	if err := json.Unmarshal(plain, &sc); err != nil {
		return nil, "", fmt.Errorf("connections: the %q credential of user %q is not valid JSON", c.Integration, c.UserID)
	}
	cred := &credential.Credential{AccessToken: sc.AccessToken, Fields: sc.Fields, Cookies: sc.Cookies}
	if len(c.SealedRefresh) == 0 {
		return cred, "", nil
	}
	rplain, err := s.keys.Open(c.SealedRefresh, c.KeyID, aad(purposeRefresh, c.TenantID, c.UserID, c.Integration))
	if err != nil {
		return nil, "", fmt.Errorf("connections: opening the %q refresh token of user %q: %w", c.Integration, c.UserID, err)
	}
	defer clear(rplain)
	var sr sealedRefresh
	if err := json.Unmarshal(rplain, &sr); err != nil {
		return nil, "", fmt.Errorf("connections: the %q refresh token of user %q is not valid JSON", c.Integration, c.UserID)
	}
	return cred, sr.RefreshToken, nil
}

// notConnected builds the error for a user without a usable credential.
func notConnected(userID, integration, why string) error {
	return fmt.Errorf("connections: user %q is not connected to %q: %s: %w", userID, integration, why, failure.ErrNotConnected)
}

// Credential implements credential.Source: it returns the user's credential
// for integration, renewing an OAuth token that expires within RefreshWindow.
// A user without a usable credential gets an error wrapping
// failure.ErrNotConnected.
func (s *Service) Credential(ctx context.Context, userID, integration string) (*credential.Credential, error) {
	c, err := s.store.Connection(ctx, userID, integration)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notConnected(userID, integration, "no credential stored")
	}
	if err != nil {
		return nil, err
	}
	if c.Status == store.ConnectionFailed {
		return nil, notConnected(userID, integration, c.Reason)
	}
	cred, refreshToken, err := s.open(c)
	if err != nil {
		return nil, err
	}
	switch c.Mode {
	case credential.ModeCookie:
		if !hasLiveCookie(cred.Cookies, s.now()) {
			return nil, notConnected(userID, integration, "every stored cookie has expired")
		}
	case credential.ModeOAuth2:
		if !c.ExpiresAt.IsZero() && !s.now().Add(RefreshWindow).Before(c.ExpiresAt) {
			return s.renew(ctx, c, cred, refreshToken)
		}
	}
	return cred, nil
}

// UpdateCookies implements credential.Source: it merges cookies a response
// set into the user's stored cookie bundle (credential.MergeCookies) under
// the same per-user lock as token refreshes. When no live cookie is left the
// connection is marked failed (the service ended the session) and the user
// must connect again. A user without a usable cookie connection gets an error
// wrapping failure.ErrNotConnected.
func (s *Service) UpdateCookies(ctx context.Context, userID, integration string, received []*http.Cookie) error {
	unlock, err := s.lock(ctx, userID, integration)
	if err != nil {
		return err
	}
	defer unlock()
	c, err := s.store.Connection(ctx, userID, integration)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notConnected(userID, integration, "no credential stored")
	case err != nil:
		return err
	case c.Status == store.ConnectionFailed:
		return notConnected(userID, integration, c.Reason)
	case c.Mode != credential.ModeCookie:
		return notConnected(userID, integration, fmt.Sprintf("the stored credential is for auth mode %q, not cookie", c.Mode))
	}
	cred, _, err := s.open(c)
	if err != nil {
		return err
	}
	cookies := credential.MergeCookies(cred.Cookies, received, s.now())
	if !hasLiveCookie(cookies, s.now()) {
		return s.store.SetConnectionStatus(ctx, userID, integration, store.ConnectionFailed, "the service ended the session: it deleted or expired every stored cookie")
	}
	row, err := s.seal(c.TenantID, userID, integration, Secret{Mode: credential.ModeCookie, Credential: credential.Credential{Cookies: cookies}})
	if err != nil {
		return err
	}
	_, err = s.store.PutConnection(ctx, row)
	return err
}

// renew refreshes an OAuth token that is about to expire (or has).
func (s *Service) renew(ctx context.Context, c store.Connection, cred *credential.Credential, refreshToken string) (*credential.Credential, error) {
	expired := !s.now().Before(c.ExpiresAt)
	if s.refresher == nil || refreshToken == "" {
		if expired {
			return nil, notConnected(c.UserID, c.Integration, "the access token expired and cannot be refreshed")
		}
		return cred, nil
	}
	unlock, err := s.lock(ctx, c.UserID, c.Integration)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Another caller may have refreshed while this one waited.
	latest, err := s.store.Connection(ctx, c.UserID, c.Integration)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notConnected(c.UserID, c.Integration, "the connection was removed")
	}
	if err != nil {
		return nil, err
	}
	if latest.Status == store.ConnectionFailed {
		return nil, notConnected(c.UserID, c.Integration, latest.Reason)
	}
	if !latest.UpdatedAt.Equal(c.UpdatedAt) || latest.KeyID != c.KeyID {
		if latest.ExpiresAt.IsZero() || s.now().Add(RefreshWindow).Before(latest.ExpiresAt) {
			fresh, _, err := s.open(latest)
			return fresh, err
		}
		if cred, refreshToken, err = s.open(latest); err != nil {
			return nil, err
		}
	}

	tok, err := s.refresher.Refresh(ctx, c.UserID, c.Integration, refreshToken)
	switch {
	case errors.Is(err, ErrRefreshRejected):
		reason := "token refresh failed: " + err.Error()
		if serr := s.store.SetConnectionStatus(ctx, c.UserID, c.Integration, store.ConnectionFailed, reason); serr != nil {
			return nil, errors.Join(notConnected(c.UserID, c.Integration, reason), serr)
		}
		return nil, notConnected(c.UserID, c.Integration, reason)
	case err != nil && expired:
		return nil, fmt.Errorf("connections: refreshing the %q token of user %q: %w", c.Integration, c.UserID, err)
	case err != nil:
		return cred, nil // transient: the current token still works for now
	case tok.AccessToken == "":
		return nil, fmt.Errorf("connections: refreshing the %q token of user %q: the provider returned no access token", c.Integration, c.UserID)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = refreshToken
	}
	next := Secret{Mode: credential.ModeOAuth2, Credential: credential.Credential{AccessToken: tok.AccessToken}, RefreshToken: tok.RefreshToken, ExpiresAt: tok.ExpiresAt}
	row, err := s.seal(c.TenantID, c.UserID, c.Integration, next)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.PutConnection(ctx, row); err != nil {
		return nil, err
	}
	return &credential.Credential{AccessToken: tok.AccessToken}, nil
}

// lock takes the refresh lock for a user and integration, or gives up when
// ctx ends.
func (s *Service) lock(ctx context.Context, userID, integration string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(userID))
	h.Write([]byte{0})
	h.Write([]byte(integration))
	ch := s.locks[h.Sum32()%lockStripes]
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("connections: waiting for a token refresh: %w", ctx.Err())
	}
}

// hasLiveCookie reports whether any cookie is unexpired at now. A cookie
// without an expiry (a session cookie) counts as live.
func hasLiveCookie(cookies []*http.Cookie, now time.Time) bool {
	for _, c := range cookies {
		if c == nil || c.MaxAge < 0 {
			continue
		}
		if c.Expires.IsZero() || c.Expires.After(now) {
			return true
		}
	}
	return false
}

// Status reports whether the user counts as connected to an integration
// with the given auth mode: none always; cookie with at least one unexpired
// cookie; oauth2 and apikey with a stored token that works (an expiring
// oauth2 token counts if it can be refreshed).
func (s *Service) Status(ctx context.Context, userID, integration, mode string) (State, error) {
	if mode == credential.ModeNone {
		return State{Connected: true}, nil
	}
	c, err := s.store.Connection(ctx, userID, integration)
	if errors.Is(err, store.ErrNotFound) {
		return State{Reason: "not connected"}, nil
	}
	if err != nil {
		return State{}, err
	}
	if c.Status == store.ConnectionFailed {
		return State{Reason: c.Reason, ExpiresAt: c.ExpiresAt}, nil
	}
	if c.Mode != mode {
		return State{Reason: fmt.Sprintf("the stored credential is for auth mode %q, the integration now uses %q", c.Mode, mode)}, nil
	}
	cred, refreshToken, err := s.open(c)
	if err != nil {
		return State{}, err
	}
	st := State{Connected: true, ExpiresAt: c.ExpiresAt}
	switch mode {
	case credential.ModeCookie:
		if !hasLiveCookie(cred.Cookies, s.now()) {
			st = State{Reason: "every stored cookie has expired"}
		}
	case credential.ModeOAuth2:
		canRefresh := s.refresher != nil && refreshToken != ""
		if cred.AccessToken == "" || !c.ExpiresAt.IsZero() && !s.now().Before(c.ExpiresAt) && !canRefresh {
			st = State{Reason: "the access token expired and cannot be refreshed", ExpiresAt: c.ExpiresAt}
		}
	case credential.ModeAPIKey:
		if len(cred.Fields) == 0 {
			st = State{Reason: "no API key stored"}
		}
	}
	return st, nil
}

// Connected reports whether the user counts as connected to an
// integration of the catalog: Status under the integration's auth mode. An
// integration the catalog does not know wraps failure.ErrUnknownIntegration.
func (s *Service) Connected(ctx context.Context, userID, integration string) (bool, error) {
	var m *manifest.Manifest
	ok := false
	if s.catalog != nil {
		m, ok = s.catalog.Manifest(integration)
	}
	if !ok {
		return false, fmt.Errorf("connections: %q: %w", integration, failure.ErrUnknownIntegration)
	}
	st, err := s.Status(ctx, userID, integration, m.Auth.Mode)
	return st.Connected, err
}

// Disconnect removes the user's connection to an integration.
func (s *Service) Disconnect(ctx context.Context, userID, integration string) error {
	return s.store.DeleteConnection(ctx, userID, integration)
}

// Rotate re-seals every connection not under the keyring's current key and
// returns how many rows it rewrote. Rows refreshed meanwhile are already
// under the current key and are skipped.
func (s *Service) Rotate(ctx context.Context) (int, error) {
	keyID, err := s.keys.CurrentKeyID()
	if err != nil {
		return 0, err
	}
	return s.store.ResealConnections(ctx, keyID, resealBatch, func(c store.Connection) (store.Connection, error) {
		old := c.KeyID
		var err error
		if c.Sealed, c.KeyID, err = s.keys.Reseal(c.Sealed, old, aad(purposeCredential, c.TenantID, c.UserID, c.Integration)); err != nil {
			return c, err
		}
		if len(c.SealedRefresh) > 0 {
			if c.SealedRefresh, _, err = s.keys.Reseal(c.SealedRefresh, old, aad(purposeRefresh, c.TenantID, c.UserID, c.Integration)); err != nil {
				return c, err
			}
		}
		return c, nil
	})
}

// SealVerifier seals a PKCE verifier for a pending connection of user u.
func (s *Service) SealVerifier(u store.User, integration, verifier string) ([]byte, string, error) {
	return s.keys.Seal([]byte(verifier), aad(purposeVerifier, u.TenantID, u.ID, integration))
}

// OpenVerifier returns the PKCE verifier sealed in a pending connection.
func (s *Service) OpenVerifier(p store.PendingConnection) (string, error) {
	if len(p.SealedVerifier) == 0 {
		return "", fmt.Errorf("connections: pending connection %q has no PKCE verifier", p.ID)
	}
	plain, err := s.keys.Open(p.SealedVerifier, p.KeyID, aad(purposeVerifier, p.TenantID, p.UserID, p.Integration))
	if err != nil {
		return "", fmt.Errorf("connections: opening the verifier of pending connection %q: %w", p.ID, err)
	}
	return string(plain), nil
}
