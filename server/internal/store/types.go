package store

import (
	"errors"
	"time"
)

// DefaultTenant is the id of the tenant the first migration creates; every
// user belongs to it until Workbench serves several organisations.
const DefaultTenant = "default"

// Tenant is an organisation; users and everything they own belong to one.
type Tenant struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// User is a person who signs in to the portal and owns tokens and
// connections. The password hash is kept apart (see Store.PasswordHash).
type User struct {
	ID        string // "usr_" and random characters
	TenantID  string
	Email     string // as entered; unique per tenant ignoring case
	IsAdmin   bool
	CreatedAt time.Time
}

// NewUser is what CreateUser needs.
type NewUser struct {
	TenantID     string // empty means DefaultTenant
	Email        string
	PasswordHash string // encoded argon2id hash, or empty: no password login
	IsAdmin      bool
}

// Token is an API token's record. The token itself is never stored: only its
// SHA-256 and a short prefix that lets a person recognise it.
type Token struct {
	ID         string // "tok_" and random characters
	TenantID   string
	UserID     string
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero if never used; updated at most once a minute
	RevokedAt  time.Time // zero unless revoked
}

// NewToken is what CreateToken needs.
type NewToken struct {
	UserID string
	Name   string
	Hash   string // hex SHA-256 of the token
	Prefix string // the first characters of the token, for display
}

// Session is a signed-in portal browser. The session cookie is never stored:
// only its SHA-256.
type Session struct {
	IDHash     string
	TenantID   string
	UserID     string
	CSRFSecret string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// LoginLink is a one-time portal sign-in link. The link's token is never
// stored: only its SHA-256.
type LoginLink struct {
	TokenHash string
	TenantID  string
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero until the link is used
}

// NewLoginLink is what CreateLoginLink needs.
type NewLoginLink struct {
	UserID    string
	TokenHash string // hex SHA-256 of the link's token
	ExpiresAt time.Time
}

// ConnectionStatus says whether a stored credential is usable.
type ConnectionStatus string

// The connection statuses.
const (
	// ConnectionActive: the credential is usable.
	ConnectionActive ConnectionStatus = "active"
	// ConnectionFailed: the credential stopped working (a refresh failed);
	// Reason says why. The user is not connected until they connect again.
	ConnectionFailed ConnectionStatus = "failed"
)

// Connection is one user's stored credential for one integration. The
// credential and the refresh material are sealed by the caller (see package
// secrets); KeyID names the key that sealed both.
type Connection struct {
	ID            string // "con_" and random characters
	TenantID      string
	UserID        string
	Integration   string
	Mode          string // the integration's auth mode when it was stored
	Sealed        []byte // the sealed credential
	SealedRefresh []byte // the sealed refresh material, or nil
	KeyID         string
	ExpiresAt     time.Time // when the access token expires; zero if it does not
	Status        ConnectionStatus
	Reason        string // why Status is failed; empty when active
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// PendingStatus is where a pending connection is in its lifecycle.
type PendingStatus string

// The pending connection statuses. PENDING is the only non-terminal one.
const (
	PendingWaiting   PendingStatus = "PENDING"
	PendingConnected PendingStatus = "CONNECTED"
	PendingExpired   PendingStatus = "EXPIRED"
	PendingFailed    PendingStatus = "FAILED"
)

// Terminal reports whether s is a final status.
func (s PendingStatus) Terminal() bool {
	return s == PendingConnected || s == PendingExpired || s == PendingFailed
}

// PendingConnection is a connect handshake in flight, created by `connect`
// and polled by `wait_for_connection`.
type PendingConnection struct {
	ID             string // "pc_" and random characters
	TenantID       string
	UserID         string
	Integration    string
	Mode           string
	State          string // the OAuth state; set only in CreatePending's result
	SealedVerifier []byte // the sealed PKCE verifier, or nil
	KeyID          string // the key that sealed SealedVerifier
	Status         PendingStatus
	Reason         string // why the record is FAILED or EXPIRED
	CreatedAt      time.Time
	ExpiresAt      time.Time // end of the handshake window
	TerminalAt     time.Time // when the status became terminal; zero while PENDING
}

// NewPending is what CreatePending needs.
type NewPending struct {
	UserID         string
	Integration    string
	Mode           string
	SealedVerifier []byte
	KeyID          string
	ExpiresAt      time.Time
}

// Outcome ends a pending connection. A CONNECTED outcome may carry the
// connection to store in the same transaction.
type Outcome struct {
	Status     PendingStatus // CONNECTED, FAILED or EXPIRED
	Reason     string
	Connection *Connection // stored (as PutConnection would) when Status is CONNECTED
}

// OAuthClient is an MCP client known to Workbench's authorization server:
// registered dynamically (RFC 7591) or described by a client ID metadata
// document. Only public clients exist: there is no secret.
type OAuthClient struct {
	// ID is "oac_" and random characters for a registered client, or the
	// https URL of the client's metadata document.
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
	GrantedAt    time.Time // when it was first issued an access token; zero until then
}

// NewOAuthClient is what CreateOAuthClient needs.
type NewOAuthClient struct {
	Name         string
	RedirectURIs []string // 1 to 10, each without a newline
}

// PrefixOAuthGrant starts the id of an OAuth grant family.
const PrefixOAuthGrant = "ogr_"

// ErrOAuthReplay is wrapped (together with ErrNotFound) by
// ConsumeOAuthToken for a code or refresh token that was already used: its
// whole family has been revoked.
var ErrOAuthReplay = errors.New("OAuth credential replayed: its grant was revoked")

// OAuthTokenKind says what an issued OAuth credential is.
type OAuthTokenKind string

// The OAuth credential kinds.
const (
	OAuthCode    OAuthTokenKind = "code"    // an authorization code, used once
	OAuthAccess  OAuthTokenKind = "access"  // a bearer token for the resource
	OAuthRefresh OAuthTokenKind = "refresh" // a refresh token, used once
)

// OAuthToken is an authorization code, access token or refresh token
// issued to an OAuth client for a user. The credential itself is never
// stored: only its SHA-256.
type OAuthToken struct {
	Hash          string
	Kind          OAuthTokenKind
	TenantID      string
	UserID        string
	ClientID      string
	Resource      string // the RFC 8707 resource (audience) it is bound to
	Family        string // the grant id ("ogr_...") shared by a code and every token descended from it
	Scope         string // the granted scopes, space-separated
	RedirectURI   string // codes only
	CodeChallenge string // codes only: the PKCE S256 challenge
	CreatedAt     time.Time
	ExpiresAt     time.Time
	UsedAt        time.Time // zero until a code or refresh token is used
	RevokedAt     time.Time // zero unless its family was revoked
}

// NewOAuthToken is what CreateOAuthToken needs.
type NewOAuthToken struct {
	Kind          OAuthTokenKind
	Hash          string // hex SHA-256 of the credential
	UserID        string
	ClientID      string
	Resource      string
	Family        string // the grant id, 1 to 64 characters
	Scope         string // space-separated, at most MaxOAuthScopeLen bytes
	RedirectURI   string
	CodeChallenge string
	ExpiresAt     time.Time
}

// MaxOAuthScopeLen caps the scope string of an OAuth credential.
const MaxOAuthScopeLen = 1024
