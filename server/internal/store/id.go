package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
)

// Prefixes of the ids the store generates.
const (
	PrefixTenant      = "ten_"
	PrefixUser        = "usr_"
	PrefixToken       = "tok_"
	PrefixConnection  = "con_"
	PrefixPending     = "pc_"
	PrefixOAuthClient = "oac_"
)

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns prefix followed by 26 random lower-case characters (128 bits).
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + idEncoding.EncodeToString(b[:])
}

// NewState returns a random OAuth state: 32 bytes, base64url without padding.
func NewState() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashState returns the hex SHA-256 the store keeps instead of a state.
func HashState(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}
