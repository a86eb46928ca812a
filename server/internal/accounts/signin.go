package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Default sign-in limits. An address gets 20 attempts in a row, then waits
// 1 s, doubling per attempt up to 5 minutes; an account (attempts from
// every address together) gets 5, then waits 5 s, doubling up to 15
// minutes. A success clears the account's count; a quiet key starts over.
var (
	DefaultPerAddress = store.AttemptPolicy{Free: 20, Wait: time.Second, MaxWait: 5 * time.Minute, Forget: 15 * time.Minute}
	DefaultPerAccount = store.AttemptPolicy{Free: 5, Wait: 5 * time.Second, MaxWait: 15 * time.Minute, Forget: time.Hour}
)

// ErrThrottled: too many sign-in attempts; the *ThrottledError says from
// where and for how long.
var ErrThrottled = errors.New("too many sign-in attempts")

// ThrottledError is a sign-in refused before its password was checked.
type ThrottledError struct {
	Scope string        // "address" or "account"
	Wait  time.Duration // until the next attempt may go ahead
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("accounts: %s from this %s; try again in %v", ErrThrottled, e.Scope, e.Wait.Round(time.Second))
}

func (e *ThrottledError) Unwrap() error { return ErrThrottled }

// SignInStore is what SignIn reads and counts in.
type SignInStore interface {
	Store
	store.AttemptStore
}

// SignInOptions configure a SignIn; zero policies mean the defaults.
type SignInOptions struct {
	PerAddress, PerAccount store.AttemptPolicy
}

// SignIn checks emails and passwords. Every attempt is counted against the
// client's address and the account before its password is checked, in the
// store (so every replica shares the limits and a burst is counted before
// any of it runs), and the check runs under the process's bound on password
// hashing.
type SignIn struct {
	store                  SignInStore
	passwords              *secrets.Passwords
	perAddress, perAccount store.AttemptPolicy
}

// NewSignIn returns a SignIn over st and pw.
func NewSignIn(st SignInStore, pw *secrets.Passwords, o SignInOptions) *SignIn {
	s := &SignIn{store: st, passwords: pw, perAddress: o.PerAddress, perAccount: o.PerAccount}
	if s.perAddress == (store.AttemptPolicy{}) {
		s.perAddress = DefaultPerAddress
	}
	if s.perAccount == (store.AttemptPolicy{}) {
		s.perAccount = DefaultPerAccount
	}
	return s
}

// Login checks an email and password sent from the client address from
// (its rate-limit form: see clientaddr) and returns the user. It fails with
// a *ThrottledError, an error wrapping secrets.ErrBusy, or an error wrapping
// failure.ErrUnauthenticated that does not say which part was wrong; an unknown
// email costs what a wrong password costs.
func (s *SignIn) Login(ctx context.Context, from, tenantID, email, password string) (store.User, error) {
	if tenantID == "" {
		tenantID = store.DefaultTenant
	}
	if err := s.take(ctx, "address", "signin:address:"+from, s.perAddress); err != nil {
		return store.User{}, err
	}
	return s.check(ctx, tenantID, email, password)
}

// Recheck checks a signed-in user's password (before changing it), counted
// against the account only.
func (s *SignIn) Recheck(ctx context.Context, u store.User, password string) error {
	_, err := s.check(ctx, u.TenantID, u.Email, password)
	return err
}

func (s *SignIn) check(ctx context.Context, tenantID, email, password string) (store.User, error) {
	account := accountKey(tenantID, email)
	if err := s.take(ctx, "account", account, s.perAccount); err != nil {
		return store.User{}, err
	}
	fail := fmt.Errorf("accounts: wrong email or password: %w", failure.ErrUnauthenticated)
	// Without an account or a password, the check costs the same.
	nothing := func() (store.User, error) {
		if err := s.passwords.VerifyNothing(ctx, password); err != nil {
			return store.User{}, err
		}
		return store.User{}, fail
	}
	u, err := s.store.UserByEmail(ctx, tenantID, email)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return nothing()
	}
	if err != nil {
		return store.User{}, err
	}
	hash, err := s.store.PasswordHash(ctx, u.ID)
	if err != nil {
		return store.User{}, err
	}
	if hash == "" {
		return nothing()
	}
	ok, err := s.passwords.Verify(ctx, password, hash)
	if err != nil {
		return store.User{}, err
	}
	if !ok {
		return store.User{}, fail
	}
	if err := s.store.ClearAttempts(ctx, account); err != nil {
		return store.User{}, err
	}
	return u, nil
}

// take counts an attempt against key.
func (s *SignIn) take(ctx context.Context, scope, key string, p store.AttemptPolicy) error {
	wait, err := s.store.TakeAttempt(ctx, key, p)
	if err != nil {
		return err
	}
	if wait > 0 {
		return &ThrottledError{Scope: scope, Wait: wait}
	}
	return nil
}

// accountKey is the attempt key of an email in a tenant: hashed, so that any
// input fits the key's bound and no email is kept in the table.
func accountKey(tenantID, email string) string {
	sum := sha256.Sum256([]byte(tenantID + "\x00" + strings.ToLower(strings.TrimSpace(email))))
	return "signin:account:" + hex.EncodeToString(sum[:])
}
