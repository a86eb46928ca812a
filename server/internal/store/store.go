package store

import (
	"context"
	"time"
)

// Store is Workbench's persistent state. Implementations are safe for
// concurrent use and return errors wrapping the package's sentinels.
type Store interface {
	// CreateTenant creates a tenant with a new id ("ten_...").
	CreateTenant(ctx context.Context, name string) (Tenant, error)
	// Tenant returns a tenant by id.
	Tenant(ctx context.Context, id string) (Tenant, error)

	// CreateUser creates a user with a new id. An email already used in the
	// tenant (ignoring case) is ErrConflict; a malformed one is ErrInvalid.
	CreateUser(ctx context.Context, u NewUser) (User, error)
	// User returns a user by id.
	User(ctx context.Context, userID string) (User, error)
	// UserByEmail returns the tenant's user with this email, ignoring case.
	UserByEmail(ctx context.Context, tenantID, email string) (User, error)
	// Users lists a tenant's users, oldest first.
	Users(ctx context.Context, tenantID string) ([]User, error)
	// CountUsers counts every user of every tenant; the server creates the
	// first admin when it is zero.
	CountUsers(ctx context.Context) (int, error)
	// PasswordHash returns the user's encoded password hash, empty when the
	// user has no password.
	PasswordHash(ctx context.Context, userID string) (string, error)
	// SetPasswordHash replaces the user's password hash.
	SetPasswordHash(ctx context.Context, userID, hash string) error

	// CreateToken records an API token for a user.
	CreateToken(ctx context.Context, t NewToken) (Token, error)
	// TokenByHash returns the unrevoked token with this hash and records its
	// use (at most once a minute). Unknown and revoked tokens are ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (Token, error)
	// Tokens lists the user's tokens, revoked ones included, oldest first.
	Tokens(ctx context.Context, userID string) ([]Token, error)
	// RevokeToken revokes one of the user's tokens. Another user's token or an
	// unknown id is ErrNotFound; revoking twice is not an error.
	RevokeToken(ctx context.Context, userID, tokenID string) error

	// CreateSession records a portal session.
	CreateSession(ctx context.Context, s Session) (Session, error)
	// SessionByHash returns an unexpired session; expired ones are ErrNotFound.
	SessionByHash(ctx context.Context, idHash string) (Session, error)
	// DeleteSession ends a session; an unknown one is not an error.
	DeleteSession(ctx context.Context, idHash string) error
	// PruneSessions deletes expired sessions and returns how many.
	PruneSessions(ctx context.Context) (int, error)

	// CreateLoginLink records a one-time sign-in link for a user.
	CreateLoginLink(ctx context.Context, l NewLoginLink) (LoginLink, error)
	// ConsumeLoginLink returns the link with this hash and marks it used, so
	// a second use finds nothing (ErrNotFound). A link past its ExpiresAt is
	// ErrExpired (and is used up all the same).
	ConsumeLoginLink(ctx context.Context, tokenHash string) (LoginLink, error)
	// PruneLoginLinks deletes used and expired links and returns how many.
	PruneLoginLinks(ctx context.Context) (int, error)

	// CreateOAuthClient registers an OAuth client with a new id ("oac_...").
	CreateOAuthClient(ctx context.Context, c NewOAuthClient) (OAuthClient, error)
	// OAuthClient returns a registered OAuth client by id.
	OAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// PutOAuthClientDocument stores a client described by a client ID
	// metadata document: c.ID is the document's http(s) URL. An earlier copy
	// gets the new name and redirect URIs and keeps its CreatedAt.
	PutOAuthClientDocument(ctx context.Context, c OAuthClient) (OAuthClient, error)
	// CountOAuthClients counts every OAuth client, registered or described
	// by a metadata document.
	CountOAuthClients(ctx context.Context) (int, error)
	// DeleteUngrantedOAuthClients deletes the OAuth clients created before
	// createdBefore that were never issued an access token and hold no
	// credential (an unexchanged code), and returns how many.
	DeleteUngrantedOAuthClients(ctx context.Context, createdBefore time.Time) (int, error)
	// CreateOAuthToken records an authorization code, access token or
	// refresh token; the first access token sets its client's GrantedAt.
	// An unknown user or client is ErrNotFound; a family already revoked is
	// ErrConflict.
	CreateOAuthToken(ctx context.Context, t NewOAuthToken) (OAuthToken, error)
	// OAuthToken returns the unused, unrevoked, unexpired credential of this
	// kind with this hash; any other is ErrNotFound.
	OAuthToken(ctx context.Context, kind OAuthTokenKind, hash string) (OAuthToken, error)
	// ConsumeOAuthToken returns the credential of this kind with this hash
	// and marks it used. One past its ExpiresAt is ErrExpired (and is used up
	// all the same). A second use revokes every credential of its family and
	// is ErrOAuthReplay (which also matches ErrNotFound); a revoked or
	// unknown one is ErrNotFound.
	ConsumeOAuthToken(ctx context.Context, kind OAuthTokenKind, hash string) (OAuthToken, error)
	// PruneOAuthTokens deletes expired OAuth credentials and returns how
	// many. Used and revoked ones are kept until they expire, so that a
	// replay is still recognised.
	PruneOAuthTokens(ctx context.Context) (int, error)

	// PutConnection stores the user's connection to c.Integration, replacing
	// any earlier one (its id and CreatedAt are kept). Status defaults to
	// active.
	PutConnection(ctx context.Context, c Connection) (Connection, error)
	// Connection returns the user's connection to an integration.
	Connection(ctx context.Context, userID, integration string) (Connection, error)
	// Connections lists the user's connections by integration name.
	Connections(ctx context.Context, userID string) ([]Connection, error)
	// SetConnectionStatus records whether the user's connection works and why
	// not.
	SetConnectionStatus(ctx context.Context, userID, integration string, status ConnectionStatus, reason string) error
	// DeleteConnection removes the user's connection to an integration.
	DeleteConnection(ctx context.Context, userID, integration string) error
	// ResealConnections calls reseal for every connection (of every user)
	// whose KeyID is not keyID, batch rows at a time, and writes back the
	// Sealed, SealedRefresh and KeyID it returns. A row changed since it was
	// read (a concurrent refresh) is left alone. It returns how many rows it
	// rewrote.
	ResealConnections(ctx context.Context, keyID string, batch int, reseal func(Connection) (Connection, error)) (int, error)

	// CreatePending creates a PENDING record with a new id and a new random
	// state; the result's State is the only copy of the state.
	CreatePending(ctx context.Context, p NewPending) (PendingConnection, error)
	// Pending returns one of the user's pending connections.
	Pending(ctx context.Context, userID, id string) (PendingConnection, error)
	// ConsumePendingState returns the PENDING record the state belongs to and
	// marks the state used, so a replay finds nothing (ErrNotFound). A record
	// that is no longer PENDING is ErrNotPending; one past its ExpiresAt is
	// ErrExpired (its state is still used up).
	ConsumePendingState(ctx context.Context, state string) (PendingConnection, error)
	// CompletePending moves one of the user's records from PENDING to the
	// outcome's terminal status (compare-and-set). A record already terminal
	// is ErrNotPending, one past its ExpiresAt ErrExpired. A CONNECTED outcome
	// with a Connection stores it in the same transaction.
	CompletePending(ctx context.Context, userID, id string, o Outcome) (PendingConnection, error)
	// DeletePending removes one of the user's pending connections.
	DeletePending(ctx context.Context, userID, id string) error
	// ExpirePending turns every overdue PENDING record EXPIRED and returns
	// how many.
	ExpirePending(ctx context.Context) (int, error)
	// PrunePending deletes terminal records that became terminal more than
	// keep ago and returns how many.
	PrunePending(ctx context.Context, keep time.Duration) (int, error)

	CurlStore
	AttemptStore
	JotStore
	CustomAppStore

	// Close releases the store's connections. It is safe to call twice.
	Close() error
}
