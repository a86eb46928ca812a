package accounts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// LoginLinkTTL is how long a one-time sign-in link works.
const LoginLinkTTL = 15 * time.Minute

// LoginLinkPrefix starts every sign-in link token.
const LoginLinkPrefix = "wbl_"

// loginLinkBytes is the random part of a sign-in link token.
const loginLinkBytes = 32

// ErrLinkExpired: a sign-in link was used after LoginLinkTTL.
var ErrLinkExpired = errors.New("sign-in link expired")

// CreateLoginLink mints a one-time sign-in link token for a user, valid for
// LoginLinkTTL from now. The token exists in clear only in the result.
func CreateLoginLink(ctx context.Context, st Store, userID string, now time.Time) (token string, expiresAt time.Time, err error) {
	b := make([]byte, loginLinkBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	token = LoginLinkPrefix + base64.RawURLEncoding.EncodeToString(b)
	l, err := st.CreateLoginLink(ctx, store.NewLoginLink{UserID: userID, TokenHash: secrets.HashToken(token), ExpiresAt: now.Add(LoginLinkTTL)})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, l.ExpiresAt, nil
}

// UseLoginLink spends a sign-in link token and returns its user. An unknown
// or already used token wraps failure.ErrUnauthenticated; an expired one wraps both
// failure.ErrUnauthenticated and ErrLinkExpired.
func UseLoginLink(ctx context.Context, st Store, token string) (store.User, error) {
	rest, ok := strings.CutPrefix(token, LoginLinkPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(loginLinkBytes) {
		return store.User{}, fmt.Errorf("accounts: malformed sign-in link: %w", failure.ErrUnauthenticated)
	}
	l, err := st.ConsumeLoginLink(ctx, secrets.HashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.User{}, fmt.Errorf("accounts: unknown or already used sign-in link: %w", failure.ErrUnauthenticated)
	case errors.Is(err, store.ErrExpired):
		return store.User{}, fmt.Errorf("accounts: %w: %w", ErrLinkExpired, failure.ErrUnauthenticated)
	case err != nil:
		return store.User{}, err
	}
	return st.User(ctx, l.UserID)
}
