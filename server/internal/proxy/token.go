package proxy

import (
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/workbench-dev/workbench/server/internal/secrets"
)

// TokenPrefix starts every curl-session token. It differs from API tokens'
// "wb_", so neither kind is mistaken for the other.
const TokenPrefix = "wbc_"

const (
	tokenBytes      = 32
	tokenDisplayLen = len(TokenPrefix) + 6
)

// newToken returns a token, its hash (stored) and its display prefix.
func newToken() (token, hash, prefix string) {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, secrets.HashToken(token), token[:tokenDisplayLen]
}

// looksLikeToken reports whether s has the shape of a curl token, so garbage
// is refused before a database lookup.
func looksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
