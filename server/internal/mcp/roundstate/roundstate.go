package roundstate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults and limits.
const (
	// DefaultTTL is how long a sealed state may be used: long enough for a
	// person to answer an elicitation.
	DefaultTTL = 15 * time.Minute
	// MaxBytes caps a sealed state, both when sealing and before opening.
	MaxBytes = 1 << 20
	// MinKeyBytes is the shortest key accepted.
	MinKeyBytes = 32
)

// prefix marks the format version of a sealed state.
const prefix = "wb1."

// Errors of Open and Seal. Every error of Open wraps ErrInvalid.
var (
	ErrInvalid  = errors.New("requestState is not valid")
	ErrTooLarge = errors.New("requestState is over the size limit")
	ErrShortKey = errors.New("requestState key is too short")
)

// Answer is one answer a client gave: the method of the request it answers
// and its result object.
type Answer struct {
	Method string          `json:"m"`
	Result json.RawMessage `json:"r"`
}

// Sealer seals and opens states with one key. It is safe for concurrent use.
type Sealer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// New returns a Sealer with key, at least MinKeyBytes long; a nil key means
// a random key for this process (states then do not survive a restart or
// travel to another replica). ttl 0 means DefaultTTL.
func New(key []byte, ttl time.Duration) (*Sealer, error) {
	if key == nil {
		key = make([]byte, MinKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("roundstate: generating a key: %w", err)
		}
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("roundstate: %w: %d bytes, want at least %d", ErrShortKey, len(key), MinKeyBytes)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Sealer{key: append([]byte(nil), key...), ttl: ttl, now: time.Now}, nil
}

// payload is what a sealed state carries.
type payload struct {
	Expires int64             `json:"exp"` // unix seconds
	Binding string            `json:"b"`
	Answers map[string]Answer `json:"a"`
}

// Seal returns the state holding answers for the request named by binding
// (any string that identifies the user, the request and its arguments).
func (s *Sealer) Seal(binding string, answers map[string]Answer) (string, error) {
	b, err := json.Marshal(payload{Expires: s.now().Add(s.ttl).Unix(), Binding: bindingHash(binding), Answers: answers})
	if err != nil {
		return "", fmt.Errorf("roundstate: %w", err)
	}
	body := prefix + base64.RawURLEncoding.EncodeToString(b)
	token := body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body))
	if len(token) > MaxBytes {
		return "", fmt.Errorf("roundstate: %w: %d bytes, the limit is %d", ErrTooLarge, len(token), MaxBytes)
	}
	return token, nil
}

// Open checks a state's integrity, expiry and binding and returns its
// answers. Decoding is strict, so that exactly one string opens for each
// sealed state (base64's unused trailing bits cannot vary).
func (s *Sealer) Open(token, binding string) (map[string]Answer, error) {
	if len(token) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalid, len(token), MaxBytes)
	}
	i := strings.LastIndexByte(token, '.')
	if !strings.HasPrefix(token, prefix) || i < len(prefix) {
		return nil, fmt.Errorf("%w: not a state this server issued", ErrInvalid)
	}
	body, sig := token[:i], token[i+1:]
	mac, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(mac, s.mac(body)) {
		return nil, fmt.Errorf("%w: the integrity check failed", ErrInvalid)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body[len(prefix):])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch {
	case s.now().Unix() > p.Expires:
		return nil, fmt.Errorf("%w: it expired; call again without it", ErrInvalid)
	case !hmac.Equal([]byte(p.Binding), []byte(bindingHash(binding))):
		return nil, fmt.Errorf("%w: it belongs to another request, user or arguments", ErrInvalid)
	}
	return p.Answers, nil
}

func (s *Sealer) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

func bindingHash(binding string) string {
	h := sha256.Sum256([]byte(binding))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
