package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// TokenPrefix starts every API token, so scanners and people recognise one.
const TokenPrefix = "wb_"

// tokenBytes is the random part of a token.
const tokenBytes = 32

// tokenDisplayLen is how much of a token is kept in clear to recognise it.
const tokenDisplayLen = len(TokenPrefix) + 6

// NewToken mints an API token: "wb_" and 32 random bytes in base64url. It
// returns the token (shown once, never stored), its hash (stored) and its
// display prefix (stored, shown in token lists).
func NewToken() (token, hash, prefix string) {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), token[:tokenDisplayLen]
}

// HashToken returns the hex SHA-256 under which a token (or any other
// high-entropy bearer secret, such as a session cookie) is stored. A fast
// hash is enough: the input has 256 bits of entropy.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// LooksLikeToken reports whether s has the shape of an API token, so a
// caller can reject garbage before a database lookup.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}
