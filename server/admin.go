package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/backend"
)

// Errors of Admin.
var (
	// ErrNoUser: no user has the given email.
	ErrNoUser = errors.New("no such user")
	// ErrUserExists: a user with the email already exists.
	ErrUserExists = errors.New("a user with this email already exists")
	// ErrNoToken: the user has no token with the given id.
	ErrNoToken = errors.New("no such token")
	// ErrInvalid: an argument is malformed (an email, a token name).
	ErrInvalid = errors.New("invalid argument")
)

// UserInfo describes a user.
type UserInfo struct {
	ID      string
	Email   string
	IsAdmin bool
}

// TokenInfo describes an API token (never the token itself).
type TokenInfo struct {
	ID     string
	Name   string
	Prefix string // the token's first characters, for recognising it
}

// Migrate applies the database migrations to the store cfg selects and
// returns the schema version.
func Migrate(ctx context.Context, cfg Config) (int64, error) {
	cfg = cfg.withDefaults()
	v, err := backend.Migrate(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return 0, fmt.Errorf("store (%s): %w", backend.Describe(cfg.DatabaseURL, cfg.DataDir), err)
	}
	return v, nil
}

// DescribeStore names the store cfg selects, without a password.
func DescribeStore(cfg Config) string {
	cfg = cfg.withDefaults()
	return backend.Describe(cfg.DatabaseURL, cfg.DataDir)
}

// Admin is an operator's handle on a server's store, for the CLI: users,
// tokens, sign-in links and key rotation. It works whether or not a server
// runs on the same store.
type Admin struct {
	cfg   Config
	store store.Store
}

// OpenAdmin opens (and migrates) the store cfg selects.
func OpenAdmin(ctx context.Context, cfg Config) (*Admin, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := backend.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("store (%s): %w", backend.Describe(cfg.DatabaseURL, cfg.DataDir), err)
	}
	return &Admin{cfg: cfg, store: st}, nil
}

// Close closes the store.
func (a *Admin) Close() error { return a.store.Close() }

// adminError maps the store's sentinels to Admin's.
func adminError(err error, notFound error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w (%v)", notFound, err)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%w (%v)", ErrUserExists, err)
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return err
}

// user finds a user of the default tenant by email.
func (a *Admin) user(ctx context.Context, email string) (store.User, error) {
	u, err := a.store.UserByEmail(ctx, store.DefaultTenant, email)
	if err != nil {
		return store.User{}, adminError(err, fmt.Errorf("%w with email %q", ErrNoUser, email))
	}
	return u, nil
}

// AddUser creates a user with an API token and returns the token, shown
// only now. The user has no password until they set one in the portal (sign
// in first with LoginLink).
func (a *Admin) AddUser(ctx context.Context, email string, isAdmin bool) (UserInfo, string, error) {
	u, token, err := accounts.AddUser(ctx, a.store, nil, accounts.NewUser{Email: email, IsAdmin: isAdmin, TokenName: "cli"})
	if err != nil {
		return UserInfo{}, "", adminError(err, ErrNoUser)
	}
	return UserInfo{ID: u.ID, Email: u.Email, IsAdmin: u.IsAdmin}, token, nil
}

// CreateToken mints an API token for the user with the email and returns it,
// shown only now. An empty name means "cli".
func (a *Admin) CreateToken(ctx context.Context, email, name string) (TokenInfo, string, error) {
	u, err := a.user(ctx, email)
	if err != nil {
		return TokenInfo{}, "", err
	}
	if name == "" {
		name = "cli"
	}
	rec, token, err := accounts.CreateToken(ctx, a.store, u.ID, name)
	if err != nil {
		return TokenInfo{}, "", adminError(err, ErrNoUser)
	}
	return TokenInfo{ID: rec.ID, Name: rec.Name, Prefix: rec.Prefix}, token, nil
}

// RevokeToken revokes one of the tokens of the user with the email.
func (a *Admin) RevokeToken(ctx context.Context, email, tokenID string) error {
	u, err := a.user(ctx, email)
	if err != nil {
		return err
	}
	if err := a.store.RevokeToken(ctx, u.ID, tokenID); err != nil {
		return adminError(err, fmt.Errorf("%w: %s has no token %q", ErrNoToken, u.Email, tokenID))
	}
	return nil
}

// LoginLink mints a one-time portal sign-in link for the user with the
// email and returns it with its expiry.
func (a *Admin) LoginLink(ctx context.Context, email string) (string, time.Time, error) {
	u, err := a.user(ctx, email)
	if err != nil {
		return "", time.Time{}, err
	}
	token, expires, err := accounts.CreateLoginLink(ctx, a.store, u.ID, time.Now())
	if err != nil {
		return "", time.Time{}, err
	}
	return a.cfg.PublicURL + "/login/once/" + token, expires, nil
}

// KeyRotation is what RotateKeys did.
type KeyRotation struct {
	// KeyID names the key every connection is now sealed with.
	KeyID string
	// Generated is set when RotateKeys replaced the generated key in DATA_DIR
	// (no ENCRYPTION_KEY); the previous key moved to the old-keys file.
	Generated bool
	// Resealed counts the connections re-sealed under KeyID.
	Resealed int
}

// RotateKeys re-seals every stored connection under the current key. Without
// ENCRYPTION_KEY it first replaces the key generated in DATA_DIR with a new
// one, keeping the previous key in the old-keys file; with ENCRYPTION_KEY the
// operator rotates by setting the new key there and the previous ones in
// ENCRYPTION_KEYS_OLD. Servers running on the store keep sealing with the key
// they loaded until they restart; run RotateKeys again after restarting them
// to re-seal what they wrote meanwhile.
func (a *Admin) RotateKeys(ctx context.Context) (KeyRotation, error) {
	var out KeyRotation
	if a.cfg.EncryptionKey == nil {
		if _, err := secrets.RotateKeyFile(a.cfg.DataDir); errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("there is no generated key in DATA_DIR %s to rotate (the server has not started there yet, or ENCRYPTION_KEY is used elsewhere): %w", a.cfg.DataDir, err)
		} else if err != nil {
			return out, err
		}
		out.Generated = true
	}
	keys := newKeyring(a.cfg) // reads the keys as they are now
	id, err := keys.CurrentKeyID()
	if err != nil {
		return out, err
	}
	out.KeyID = id
	n, err := connections.New(a.store, keys, connections.Options{}).Rotate(ctx)
	out.Resealed = n
	if errors.Is(err, secrets.ErrUnknownKey) {
		return out, fmt.Errorf("%w; put the key it was sealed with in ENCRYPTION_KEYS_OLD", err)
	}
	return out, err
}

// ProxyCall is one audited call through the curl-session proxy.
type ProxyCall struct {
	ID          int64         `json:"id"`
	At          time.Time     `json:"at"`
	UserEmail   string        `json:"user"`
	Integration string        `json:"integration"`
	Method      string        `json:"method"`
	Path        string        `json:"path"` // query parameter names only, never values
	Status      int           `json:"status"`
	BytesIn     int64         `json:"bytesIn"`
	BytesOut    int64         `json:"bytesOut"`
	Duration    time.Duration `json:"durationNs"`
	Error       string        `json:"error,omitempty"` // the proxy's own error code, if it failed
}

// ProxyCalls lists the audited proxy calls of the default tenant, newest
// first: of the user with email when it is not empty, of integration when
// it is not empty, at most limit (0 means 100, at most 1000), older than
// the call with ID before when before is not 0.
func (a *Admin) ProxyCalls(ctx context.Context, email, integration string, limit int, before int64) ([]ProxyCall, error) {
	f := store.ProxyCallFilter{TenantID: store.DefaultTenant, Integration: integration, Limit: limit, BeforeID: before}
	emails := map[string]string{}
	if email != "" {
		u, err := a.user(ctx, email)
		if err != nil {
			return nil, err
		}
		f.UserID, emails[u.ID] = u.ID, u.Email
	}
	rows, err := a.store.ProxyCalls(ctx, f)
	if err != nil {
		return nil, adminError(err, ErrNoUser)
	}
	out := make([]ProxyCall, len(rows))
	for i, r := range rows {
		e, ok := emails[r.UserID]
		if !ok {
			u, err := a.store.User(ctx, r.UserID)
			if err != nil {
				return nil, fmt.Errorf("user %s of proxy call %d: %w", r.UserID, r.ID, err)
			}
			e, emails[r.UserID] = u.Email, u.Email
		}
		out[i] = ProxyCall{ID: r.ID, At: r.At, UserEmail: e, Integration: r.Integration, Method: r.Method, Path: r.Path,
			Status: r.Status, BytesIn: r.BytesIn, BytesOut: r.BytesOut, Duration: r.Duration, Error: r.Error}
	}
	return out, nil
}
