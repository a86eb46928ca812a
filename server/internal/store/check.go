package store

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// Limits on what the store accepts.
const (
	MaxEmailLen     = 254
	MaxNameLen      = 100 // tenant and token names
	MaxReasonLen    = 1024
	MaxSealedLen    = 1 << 20 // one sealed blob
	MaxIdentLen     = 64      // integration names, modes, key ids
	tokenHashHexLen = 64
)

// NormalizeEmail checks that email is a bare address (no display name) and
// returns it trimmed, with the lower-case key that uniqueness is judged by.
func NormalizeEmail(email string) (display, key string, err error) {
	display = strings.TrimSpace(email)
	if display == "" {
		return "", "", fmt.Errorf("%w: email is empty", ErrInvalid)
	}
	if len(display) > MaxEmailLen {
		return "", "", fmt.Errorf("%w: email is longer than %d bytes", ErrInvalid, MaxEmailLen)
	}
	addr, perr := mail.ParseAddress(display)
	if perr != nil || addr.Address != display || addr.Name != "" {
		return "", "", fmt.Errorf("%w: %q is not an email address", ErrInvalid, display)
	}
	return display, strings.ToLower(display), nil
}

// CheckNewUser validates u, fills its default tenant, and returns the email
// key the uniqueness rule uses.
func CheckNewUser(u *NewUser) (emailKey string, err error) {
	if u.TenantID == "" {
		u.TenantID = DefaultTenant
	}
	display, key, err := NormalizeEmail(u.Email)
	if err != nil {
		return "", err
	}
	u.Email = display
	return key, nil
}

// CheckName validates a tenant or token name.
func CheckName(what, name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: %s name is empty", ErrInvalid, what)
	}
	if len(name) > MaxNameLen || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %s name must be valid UTF-8 of at most %d bytes", ErrInvalid, what, MaxNameLen)
	}
	return nil
}

// CheckHash validates a hex SHA-256 (token and session hashes).
func CheckHash(what, h string) error {
	if len(h) != tokenHashHexLen || strings.Trim(h, "0123456789abcdef") != "" {
		return fmt.Errorf("%w: %s must be 64 lower-case hex characters", ErrInvalid, what)
	}
	return nil
}

// CheckNewToken validates t.
func CheckNewToken(t NewToken) error {
	if t.UserID == "" {
		return fmt.Errorf("%w: token has no user", ErrInvalid)
	}
	if err := CheckName("token", t.Name); err != nil {
		return err
	}
	if err := CheckHash("token hash", t.Hash); err != nil {
		return err
	}
	if t.Prefix == "" || len(t.Prefix) > 16 {
		return fmt.Errorf("%w: token prefix must be 1 to 16 characters", ErrInvalid)
	}
	return nil
}

// CheckSession validates s.
func CheckSession(s Session) error {
	if s.UserID == "" {
		return fmt.Errorf("%w: session has no user", ErrInvalid)
	}
	if err := CheckHash("session id hash", s.IDHash); err != nil {
		return err
	}
	if s.CSRFSecret == "" || len(s.CSRFSecret) > 128 {
		return fmt.Errorf("%w: session CSRF secret must be 1 to 128 characters", ErrInvalid)
	}
	if s.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: session has no expiry", ErrInvalid)
	}
	return nil
}

// CheckNewLoginLink validates l and rounds its expiry.
func CheckNewLoginLink(l *NewLoginLink) error {
	if l.UserID == "" {
		return fmt.Errorf("%w: login link has no user", ErrInvalid)
	}
	if err := CheckHash("login link hash", l.TokenHash); err != nil {
		return err
	}
	if l.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: login link has no expiry", ErrInvalid)
	}
	l.ExpiresAt = Round(l.ExpiresAt)
	return nil
}

// CheckIdent validates an integration name, auth mode or key id: 1 to 64
// characters of [a-z0-9_-].
func CheckIdent(what, s string) error {
	if s == "" || len(s) > MaxIdentLen {
		return fmt.Errorf("%w: %s must be 1 to %d characters", ErrInvalid, what, MaxIdentLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: %s %q may hold only a-z, 0-9, '-' and '_'", ErrInvalid, what, s)
		}
	}
	return nil
}

// CheckConnection validates c and fills its default status, trims its
// reason and rounds its expiry.
func CheckConnection(c *Connection) error {
	if c.UserID == "" {
		return fmt.Errorf("%w: connection has no user", ErrInvalid)
	}
	if err := CheckIdent("integration", c.Integration); err != nil {
		return err
	}
	if err := CheckIdent("auth mode", c.Mode); err != nil {
		return err
	}
	if err := CheckIdent("key id", c.KeyID); err != nil {
		return err
	}
	if len(c.Sealed) == 0 {
		return fmt.Errorf("%w: connection has no sealed credential", ErrInvalid)
	}
	if len(c.Sealed) > MaxSealedLen || len(c.SealedRefresh) > MaxSealedLen {
		return fmt.Errorf("%w: sealed credential is larger than %d bytes", ErrInvalid, MaxSealedLen)
	}
	if c.Status == "" {
		c.Status = ConnectionActive
	}
	if err := CheckConnectionStatus(c.Status); err != nil {
		return err
	}
	c.Reason = TrimReason(c.Reason)
	c.ExpiresAt = Round(c.ExpiresAt)
	return nil
}

// CheckConnectionStatus validates s.
func CheckConnectionStatus(s ConnectionStatus) error {
	if s != ConnectionActive && s != ConnectionFailed {
		return fmt.Errorf("%w: connection status %q", ErrInvalid, s)
	}
	return nil
}

// CheckNewPending validates p and rounds its expiry.
func CheckNewPending(p *NewPending) error {
	if p.UserID == "" {
		return fmt.Errorf("%w: pending connection has no user", ErrInvalid)
	}
	if err := CheckIdent("integration", p.Integration); err != nil {
		return err
	}
	if err := CheckIdent("auth mode", p.Mode); err != nil {
		return err
	}
	if len(p.SealedVerifier) > 0 {
		if err := CheckIdent("key id", p.KeyID); err != nil {
			return err
		}
	}
	if len(p.SealedVerifier) > MaxSealedLen {
		return fmt.Errorf("%w: sealed verifier is larger than %d bytes", ErrInvalid, MaxSealedLen)
	}
	if p.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: pending connection has no expiry", ErrInvalid)
	}
	p.ExpiresAt = Round(p.ExpiresAt)
	return nil
}

// CheckOutcome validates o for CompletePending of the user's record and
// trims its reason. A connection it carries must belong to the same user and
// integration.
func CheckOutcome(o *Outcome) error {
	if !o.Status.Terminal() {
		return fmt.Errorf("%w: outcome status %q is not terminal", ErrInvalid, o.Status)
	}
	if o.Connection != nil && o.Status != PendingConnected {
		return fmt.Errorf("%w: only a CONNECTED outcome can carry a connection", ErrInvalid)
	}
	o.Reason = TrimReason(o.Reason)
	return nil
}

// CheckOutcomeConnection validates the connection an outcome carries against
// the pending record it completes.
func CheckOutcomeConnection(c *Connection, p PendingConnection) error {
	if c.UserID != p.UserID || c.Integration != p.Integration {
		return fmt.Errorf("%w: the outcome's connection is for another user or integration", ErrInvalid)
	}
	return CheckConnection(c)
}

// TrimReason cuts a reason (often a provider's error text) to MaxReasonLen
// bytes on a rune boundary and drops invalid UTF-8.
func TrimReason(s string) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= MaxReasonLen {
		return s
	}
	cut := MaxReasonLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Limits of OAuth client registrations.
const (
	MaxRedirectURIs   = 10
	MaxRedirectURILen = 2048
)

// CheckNewOAuthClient validates c.
func CheckNewOAuthClient(c NewOAuthClient) error {
	if err := CheckName("OAuth client", c.Name); err != nil {
		return err
	}
	if len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > MaxRedirectURIs {
		return fmt.Errorf("%w: an OAuth client needs 1 to %d redirect URIs", ErrInvalid, MaxRedirectURIs)
	}
	for _, u := range c.RedirectURIs {
		if u == "" || len(u) > MaxRedirectURILen || strings.ContainsAny(u, "\r\n\x00") {
			return fmt.Errorf("%w: a redirect URI must be 1 to %d characters on one line", ErrInvalid, MaxRedirectURILen)
		}
	}
	return nil
}

// CheckNewOAuthToken validates t and rounds its expiry.
func CheckNewOAuthToken(t *NewOAuthToken) error {
	switch t.Kind {
	case OAuthCode, OAuthAccess, OAuthRefresh:
	default:
		return fmt.Errorf("%w: unknown OAuth token kind %q", ErrInvalid, t.Kind)
	}
	if t.UserID == "" || t.ClientID == "" {
		return fmt.Errorf("%w: OAuth %s has no user or client", ErrInvalid, t.Kind)
	}
	if err := CheckHash("OAuth "+string(t.Kind)+" hash", t.Hash); err != nil {
		return err
	}
	if t.Resource == "" || len(t.Resource) > MaxRedirectURILen {
		return fmt.Errorf("%w: OAuth %s needs a resource of at most %d characters", ErrInvalid, t.Kind, MaxRedirectURILen)
	}
	if t.Kind == OAuthCode && (t.RedirectURI == "" || t.CodeChallenge == "") {
		return fmt.Errorf("%w: an OAuth code needs a redirect URI and a code challenge", ErrInvalid)
	}
	if t.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: OAuth %s has no expiry", ErrInvalid, t.Kind)
	}
	t.ExpiresAt = Round(t.ExpiresAt)
	return nil
}
