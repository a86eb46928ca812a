package store

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// PrefixCustomApp starts a custom app's id.
const PrefixCustomApp = "app_"

// MaxCustomAppURLLen caps a custom app's URL in bytes.
const MaxCustomAppURLLen = 2048

// The auth modes of a custom app.
const (
	// AppAuthNone: the server needs no credential.
	AppAuthNone = "none"
	// AppAuthManual: a bearer token the user entered, sealed in the
	// connection keyed by the app's id.
	AppAuthManual = "manual"
)

// appNameRe is the form of a custom app's name.
var appNameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{1,30}$`)

// CustomApp is one of a user's own external MCP servers.
type CustomApp struct {
	ID        string // "app_" and random characters; also the key of its connection
	TenantID  string
	UserID    string
	Name      string // unique per user; its tools are <Name>__<tool>
	URL       string // the streamable-HTTP endpoint
	Auth      string // AppAuthNone or AppAuthManual
	CreatedAt time.Time
}

// NewCustomApp is what CreateCustomApp needs. The caller chooses the id
// (NewID(PrefixCustomApp)) so that it can seal the app's credential for it
// before storing both.
type NewCustomApp struct {
	ID     string
	UserID string
	Name   string
	URL    string
	Auth   string
}

// CustomAppStore keeps users' custom apps.
type CustomAppStore interface {
	// CreateCustomApp stores a new app and, when cred is not nil, its
	// credential (a connection whose Integration is the app's id) in the
	// same transaction. A name the user already has is ErrConflict; a
	// malformed app or credential is ErrInvalid; an unknown user
	// ErrNotFound.
	CreateCustomApp(ctx context.Context, a NewCustomApp, cred *Connection) (CustomApp, error)
	// CustomApps lists the user's apps by name.
	CustomApps(ctx context.Context, userID string) ([]CustomApp, error)
	// DeleteCustomApp removes the user's app with this name and its
	// credential, and returns what it removed. Another user's app or an
	// unknown name is ErrNotFound.
	DeleteCustomApp(ctx context.Context, userID, name string) (CustomApp, error)
}

// CheckCustomAppName reports a name that is not ^[a-z][a-z0-9-]{1,30}$ as
// ErrInvalid.
func CheckCustomAppName(name string) error {
	if !appNameRe.MatchString(name) {
		return fmt.Errorf("%w: app name %q must be 2 to 31 characters of a-z, 0-9 and '-', starting with a letter", ErrInvalid, name)
	}
	return nil
}

// CheckNewCustomApp validates a and its credential.
func CheckNewCustomApp(a NewCustomApp, cred *Connection) error {
	if len(a.ID) <= len(PrefixCustomApp) || a.ID[:len(PrefixCustomApp)] != PrefixCustomApp {
		return fmt.Errorf("%w: app id %q does not start with %q", ErrInvalid, a.ID, PrefixCustomApp)
	}
	if err := CheckIdent("app id", a.ID); err != nil {
		return err
	}
	if a.UserID == "" {
		return fmt.Errorf("%w: app has no user", ErrInvalid)
	}
	if err := CheckCustomAppName(a.Name); err != nil {
		return err
	}
	if err := CheckCustomAppURL(a.URL); err != nil {
		return err
	}
	switch a.Auth {
	case AppAuthNone:
		if cred != nil {
			return fmt.Errorf("%w: an app with auth %q has no credential", ErrInvalid, a.Auth)
		}
	case AppAuthManual:
		if cred == nil {
			return fmt.Errorf("%w: an app with auth %q needs a credential", ErrInvalid, a.Auth)
		}
		if cred.UserID != a.UserID || cred.Integration != a.ID {
			return fmt.Errorf("%w: the credential of app %q must belong to its user and be keyed by its id", ErrInvalid, a.Name)
		}
		return CheckConnection(cred)
	default:
		return fmt.Errorf("%w: app auth %q (want %q or %q)", ErrInvalid, a.Auth, AppAuthNone, AppAuthManual)
	}
	return nil
}

// CheckCustomAppURL reports a URL that is not an absolute http(s) URL
// without credentials or fragment, of at most MaxCustomAppURLLen bytes, as
// ErrInvalid. Where it may point is egress's decision, made at every dial.
func CheckCustomAppURL(raw string) error {
	if len(raw) > MaxCustomAppURLLen {
		return fmt.Errorf("%w: app URL is longer than %d bytes", ErrInvalid, MaxCustomAppURLLen)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%w: app URL does not parse", ErrInvalid)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: app URL scheme %q (want http or https)", ErrInvalid, u.Scheme)
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%w: app URL %q has no host", ErrInvalid, raw)
	case u.User != nil:
		return fmt.Errorf("%w: app URL must not embed credentials", ErrInvalid)
	case u.Fragment != "" || u.RawFragment != "":
		return fmt.Errorf("%w: app URL must not have a fragment", ErrInvalid)
	}
	return nil
}
