package metatools

import (
	"context"
	"time"
)

// Principal is the authenticated caller of a meta-tool.
type Principal struct {
	UserID   string   `json:"userId"`
	TenantID string   `json:"tenantId,omitempty"`
	Email    string   `json:"email,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
}

// Connection statuses reported by Connections.Wait.
const (
	StatusPending   = "PENDING"
	StatusConnected = "CONNECTED"
	StatusExpired   = "EXPIRED"
	StatusFailed    = "FAILED"
)

// Connections is the per-user connection service.
type Connections interface {
	// Connected reports whether userID has a usable credential for integration.
	Connected(ctx context.Context, userID, integration string) (bool, error)
	// Connect starts a connection: it returns the URL the user opens to
	// authorize and the id of the pending connection. It wraps
	// failure.ErrUnknownIntegration for an integration it cannot connect.
	Connect(ctx context.Context, userID, integration string) (url, connectionID string, err error)
	// Wait blocks until the pending connection leaves PENDING or timeout
	// passes, and returns its status (StatusPending when it timed out) with a
	// reason for EXPIRED and FAILED. It wraps failure.ErrUnknownConnection for an id
	// the user does not own.
	Wait(ctx context.Context, userID, connectionID string, timeout time.Duration) (status, reason string, err error)
}

// CurlSession is a minted curl session.
type CurlSession struct {
	// Token authenticates requests to the proxy.
	Token string
	// ExpiresAt is when the token stops working.
	ExpiresAt time.Time
	// Endpoints maps each integration to the proxy URL its requests start
	// from, such as https://wb.example.com/c/github/.
	Endpoints map[string]string
}

// CurlSessions mints curl sessions. Minting is all-or-nothing.
type CurlSessions interface {
	Mint(ctx context.Context, userID string, integrations []string) (CurlSession, error)
}
