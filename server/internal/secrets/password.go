package secrets

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id output sizes.
const (
	argonKeyLen  = 32
	argonSaltLen = 16
)

// PasswordCost is the argon2id cost of new hashes. Verification reads the
// cost from the hash, so it can change without invalidating stored
// passwords.
type PasswordCost struct {
	Time      uint32 // passes
	MemoryKiB uint32
	Threads   uint8 // lanes
}

// DefaultPasswordCost is 2 passes over 64 MiB with 2 lanes, measured at
// 70-90 ms per hash on a 2-core development machine (see
// BenchmarkPasswords_Hash).
var DefaultPasswordCost = PasswordCost{Time: 2, MemoryKiB: 64 * 1024, Threads: 2}

// Bounds on parameters accepted from a stored hash, so a corrupted or
// hostile row cannot make a login allocate gigabytes or spin for minutes.
const (
	maxArgonTime    = 10
	maxArgonMemory  = 256 * 1024
	maxArgonThreads = 16
)

// MaxPasswordLen caps a password in bytes.
const MaxPasswordLen = 1024

// Errors about passwords.
var (
	// ErrPassword: the password is empty or too long.
	ErrPassword = errors.New("unacceptable password")
	// ErrPasswordHash: a stored hash is not an argon2id hash this package
	// can verify.
	ErrPasswordHash = errors.New("malformed password hash")
)

// hashPassword returns the argon2id hash of password in the PHC string format
// "$argon2id$v=19$m=65536,t=2,p=2$<salt>$<hash>", with cost c.
func hashPassword(password string, c PasswordCost) (string, error) {
	if password == "" || len(password) > MaxPasswordLen {
		return "", fmt.Errorf("%w: must be 1 to %d bytes", ErrPassword, MaxPasswordLen)
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("secrets: reading a salt: %w", err)
	}
	sum := argon2.IDKey([]byte(password), salt, c.Time, c.MemoryKiB, c.Threads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, c.MemoryKiB, c.Time, c.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum)), nil
}

// verifyPassword reports whether password matches the encoded hash, comparing
// in constant time. A malformed hash is an error wrapping ErrPasswordHash.
func verifyPassword(password, encoded string) (bool, error) {
	p, err := parseArgonHash(encoded)
	if err != nil {
		return false, err
	}
	if len(password) > MaxPasswordLen {
		return false, nil
	}
	sum := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.sum)))
	return subtle.ConstantTimeCompare(sum, p.sum) == 1, nil
}

type argonHash struct {
	time, memory uint32
	threads      uint8
	salt, sum    []byte
}

func parseArgonHash(encoded string) (argonHash, error) {
	bad := func(why string) (argonHash, error) {
		return argonHash{}, fmt.Errorf("secrets: %w: %s", ErrPasswordHash, why)
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" {
		return bad("not a PHC string")
	}
	if parts[1] != "argon2id" {
		return bad("algorithm is not argon2id")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return bad("unsupported argon2 version")
	}
	var h argonHash
	seen := map[string]bool{}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || seen[k] {
			return bad("malformed parameters")
		}
		seen[k] = true
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return bad("malformed parameters")
		}
		switch k {
		case "m":
			if n > maxArgonMemory {
				return bad("memory parameter out of range")
			}
			h.memory = uint32(n)
		case "t":
			if n > maxArgonTime {
				return bad("time parameter out of range")
			}
			h.time = uint32(n)
		case "p":
			if n > maxArgonThreads {
				return bad("parallelism parameter out of range")
			}
			h.threads = uint8(n)
		default:
			return bad("unknown parameter")
		}
	}
	if h.memory == 0 || h.time == 0 || h.threads == 0 {
		return bad("missing parameters")
	}
	if h.memory < 8*uint32(h.threads) {
		return bad("memory parameter below 8 KiB per lane")
	}
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 || len(h.salt) > 64 {
		return bad("malformed salt")
	}
	if h.sum, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.sum) < 16 || len(h.sum) > 64 {
		return bad("malformed hash")
	}
	return h, nil
}
