package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Store is the part of the store accounts works on: users, passwords, API
// tokens and sign-in links (SignIn adds the attempt counter).
type Store interface {
	CreateUser(ctx context.Context, u store.NewUser) (store.User, error)
	User(ctx context.Context, userID string) (store.User, error)
	UserByEmail(ctx context.Context, tenantID, email string) (store.User, error)
	CountUsers(ctx context.Context) (int, error)
	PasswordHash(ctx context.Context, userID string) (string, error)
	SetPasswordHash(ctx context.Context, userID, hash string) error
	CreateToken(ctx context.Context, t store.NewToken) (store.Token, error)
	TokenByHash(ctx context.Context, hash string) (store.Token, error)
	CreateLoginLink(ctx context.Context, l store.NewLoginLink) (store.LoginLink, error)
	ConsumeLoginLink(ctx context.Context, tokenHash string) (store.LoginLink, error)
}

// FirstAdminEmail is the email of the admin created on an empty store.
const FirstAdminEmail = "admin@workbench.local"

// NewUser describes a user to add.
type NewUser struct {
	TenantID  string // empty: store.DefaultTenant
	Email     string
	Password  string // empty: no password login until one is set
	IsAdmin   bool
	TokenName string // name of the first API token; empty: "default"
}

// AddUser creates a user and its first API token, and returns the token:
// the only time it exists in clear. pw hashes the password; it may be nil
// when nu has none.
func AddUser(ctx context.Context, st Store, pw *secrets.Passwords, nu NewUser) (store.User, string, error) {
	var hash string
	if nu.Password != "" {
		var err error
		if hash, err = pw.Hash(ctx, nu.Password); err != nil {
			return store.User{}, "", err
		}
	}
	u, err := st.CreateUser(ctx, store.NewUser{TenantID: nu.TenantID, Email: nu.Email, PasswordHash: hash, IsAdmin: nu.IsAdmin})
	if err != nil {
		return store.User{}, "", err
	}
	name := nu.TokenName
	if name == "" {
		name = "default"
	}
	_, token, err := CreateToken(ctx, st, u.ID, name)
	if err != nil {
		return store.User{}, "", fmt.Errorf("accounts: user %s was created but its token was not: %w", u.Email, err)
	}
	return u, token, nil
}

// EnsureAdmin creates an admin (FirstAdminEmail, no password) with an API
// token when the store has no user at all. created is false, and the token
// empty, when users already exist. Two servers starting at once on one
// database create one admin: the loser sees store.ErrConflict and reports
// created false.
func EnsureAdmin(ctx context.Context, st Store) (u store.User, token string, created bool, err error) {
	n, err := st.CountUsers(ctx)
	if err != nil || n > 0 {
		return store.User{}, "", false, err
	}
	u, token, err = AddUser(ctx, st, nil, NewUser{Email: FirstAdminEmail, IsAdmin: true, TokenName: "first start"})
	if errors.Is(err, store.ErrConflict) {
		return store.User{}, "", false, nil
	}
	if err != nil {
		return store.User{}, "", false, err
	}
	return u, token, true, nil
}

// CreateToken mints an API token for a user and returns its record and the
// token itself (shown once).
func CreateToken(ctx context.Context, st Store, userID, name string) (store.Token, string, error) {
	token, hash, prefix := secrets.NewToken()
	rec, err := st.CreateToken(ctx, store.NewToken{UserID: userID, Name: name, Hash: hash, Prefix: prefix})
	if err != nil {
		return store.Token{}, "", err
	}
	return rec, token, nil
}

// Authenticate returns the unrevoked token record a bearer token belongs to,
// or an error wrapping failure.ErrUnauthenticated.
func Authenticate(ctx context.Context, st Store, bearer string) (store.Token, error) {
	if !secrets.LooksLikeToken(bearer) {
		return store.Token{}, fmt.Errorf("accounts: malformed API token: %w", failure.ErrUnauthenticated)
	}
	t, err := st.TokenByHash(ctx, secrets.HashToken(bearer))
	if errors.Is(err, store.ErrNotFound) {
		return store.Token{}, fmt.Errorf("accounts: unknown or revoked API token: %w", failure.ErrUnauthenticated)
	}
	return t, err
}

// IdentityOf returns the user an API token belongs to (with every scope),
// or an error wrapping failure.ErrUnauthenticated.
func IdentityOf(ctx context.Context, st Store, bearer string) (Identity, error) {
	tok, err := Authenticate(ctx, st, bearer)
	if err != nil {
		return Identity{}, err
	}
	u, err := st.User(ctx, tok.UserID)
	if err != nil {
		return Identity{}, fmt.Errorf("accounts: token of user %s: %w", tok.UserID, err)
	}
	return Identity{User: u}, nil
}

// SetPassword hashes and stores a user's new password.
func SetPassword(ctx context.Context, st Store, pw *secrets.Passwords, userID, password string) error {
	hash, err := pw.Hash(ctx, password)
	if err != nil {
		return err
	}
	return st.SetPasswordHash(ctx, userID, hash)
}
