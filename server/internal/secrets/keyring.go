package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// KeySize is the AES-256 key size in bytes.
const KeySize = 32

// Files a generated key lives in, inside the data directory.
const (
	KeyFile     = "encryption.key"      // the current key, 64 hex characters
	OldKeysFile = "encryption.old-keys" // earlier keys, one per line
)

// maxKeyFileSize caps what is read from a key file.
const maxKeyFileSize = 64 << 10

// Sealed blob layout: version byte, nonce, ciphertext with GCM tag.
const (
	sealVersion = 1
	nonceSize   = 12
	tagSize     = 16
)

// Errors. They are wrapped with context that names a key id or a file, never
// key material or plaintext.
var (
	// ErrKey: the key is missing, malformed or stored insecurely.
	ErrKey = errors.New("encryption key")
	// ErrUnknownKey: a blob was sealed with a key the keyring does not have.
	ErrUnknownKey = errors.New("sealed with an unknown key")
	// ErrOpen: a blob failed authentication (wrong key, tampering, or sealed
	// for another row).
	ErrOpen = errors.New("sealed data failed authentication")
)

// Config says where a Keyring's keys come from.
type Config struct {
	// Key is the current 32-byte key (ENCRYPTION_KEY). Nil means the key in
	// DataDir/encryption.key, generated with mode 0600 on first use.
	Key []byte
	// OldKeys are earlier keys: Open still accepts blobs sealed with them.
	OldKeys [][]byte
	// DataDir holds the generated key and the old-keys file. Keys listed in
	// DataDir/encryption.old-keys, if it exists, join OldKeys.
	DataDir string
}

// Keyring seals and opens secrets. It loads its keys on first use; a failed
// load is reported by that call and retried by the next. It is safe for
// concurrent use.
type Keyring struct {
	cfg Config

	mu        sync.Mutex
	loaded    bool
	current   []byte // the current key, for DeriveKey
	currentID string
	aeads     map[string]cipher.AEAD // by key id
}

// NewKeyring returns a Keyring for cfg. It reads nothing yet.
func NewKeyring(cfg Config) *Keyring {
	return &Keyring{cfg: cfg}
}

// KeyID returns the id of a key: the first 8 hex characters of its SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// ParseKey decodes a key given as 64 hex characters (ENCRYPTION_KEY).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) != 2*KeySize {
		return nil, fmt.Errorf("%w: must be %d hex characters, got %d characters", ErrKey, 2*KeySize, len(s))
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: must be %d hex characters (0-9, a-f)", ErrKey, 2*KeySize)
	}
	return key, nil
}

// ParseKeyList decodes keys separated by commas, spaces or newlines.
func ParseKeyList(s string) ([][]byte, error) {
	var keys [][]byte
	for i, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		k, err := ParseKey(f)
		if err != nil {
			return nil, fmt.Errorf("key %d of the list: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// AAD encodes parts (a purpose label first, then the ids of the row a blob
// belongs to) unambiguously, for use as additional authenticated data.
func AAD(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// CurrentKeyID returns the id of the key Seal uses, loading the keys if needed.
func (k *Keyring) CurrentKeyID() (string, error) {
	if err := k.load(); err != nil {
		return "", err
	}
	return k.currentID, nil
}

// DeriveKey returns a 32-byte key for purpose, derived from the current key
// with HKDF-SHA256, loading the keys if needed: every server that shares the
// encryption key derives the same key, and rotating it changes the key.
func (k *Keyring) DeriveKey(purpose string) ([]byte, error) {
	if err := k.load(); err != nil {
		return nil, err
	}
	return hkdf.Key(sha256.New, k.current, nil, "workbench "+purpose, KeySize)
}

// Seal encrypts plaintext under the current key, bound to aad, and returns
// the blob with the id of the key that sealed it.
func (k *Keyring) Seal(plaintext, aad []byte) (sealed []byte, keyID string, err error) {
	if err := k.load(); err != nil {
		return nil, "", err
	}
	aead := k.aeads[k.currentID]
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(plaintext)+tagSize)
	out[0] = sealVersion
	if _, err := rand.Read(out[1 : 1+nonceSize]); err != nil {
		return nil, "", fmt.Errorf("secrets: reading a nonce: %w", err)
	}
	out = aead.Seal(out, out[1:1+nonceSize], plaintext, aad)
	return out, k.currentID, nil
}

// Open decrypts a blob sealed under keyID with the same aad.
func (k *Keyring) Open(sealed []byte, keyID string, aad []byte) ([]byte, error) {
	if err := k.load(); err != nil {
		return nil, err
	}
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("secrets: key %q: %w", keyID, ErrUnknownKey)
	}
	if len(sealed) < 1+nonceSize+tagSize || sealed[0] != sealVersion {
		return nil, fmt.Errorf("secrets: blob sealed with key %q is malformed: %w", keyID, ErrOpen)
	}
	plain, err := aead.Open(nil, sealed[1:1+nonceSize], sealed[1+nonceSize:], aad)
	if err != nil {
		return nil, fmt.Errorf("secrets: blob sealed with key %q: %w", keyID, ErrOpen)
	}
	return plain, nil
}

// Reseal opens a blob and seals it again under the current key. A blob
// already under the current key is returned unchanged.
func (k *Keyring) Reseal(sealed []byte, keyID string, aad []byte) ([]byte, string, error) {
	current, err := k.CurrentKeyID()
	if err != nil {
		return nil, "", err
	}
	if keyID == current {
		return sealed, keyID, nil
	}
	plain, err := k.Open(sealed, keyID, aad)
	if err != nil {
		return nil, "", err
	}
	defer clear(plain)
	return k.Seal(plain, aad)
}

// load reads the keys once.
func (k *Keyring) load() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loaded {
		return nil
	}
	current := k.cfg.Key
	if current == nil {
		if k.cfg.DataDir == "" {
			return fmt.Errorf("secrets: %w: no key given and no data directory to keep a generated one", ErrKey)
		}
		var err error
		if current, err = loadOrCreateKeyFile(k.cfg.DataDir); err != nil {
			return err
		}
	}
	old := append([][]byte(nil), k.cfg.OldKeys...)
	if k.cfg.DataDir != "" {
		fileKeys, err := readOldKeys(filepath.Join(k.cfg.DataDir, OldKeysFile))
		if err != nil {
			return err
		}
		old = append(old, fileKeys...)
	}
	aeads := make(map[string]cipher.AEAD, 1+len(old))
	for i, key := range append([][]byte{current}, old...) {
		if len(key) != KeySize {
			what := "the current key"
			if i > 0 {
				what = fmt.Sprintf("old key %d", i)
			}
			return fmt.Errorf("secrets: %w: %s is %d bytes, want %d", ErrKey, what, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return fmt.Errorf("secrets: %w: %v", ErrKey, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return fmt.Errorf("secrets: %w: %v", ErrKey, err)
		}
		aeads[KeyID(key)] = aead
	}
	k.current, k.currentID, k.aeads, k.loaded = current, KeyID(current), aeads, true
	return nil
}

// loadOrCreateKeyFile reads dir/encryption.key, generating it first if it
// does not exist.
func loadOrCreateKeyFile(dir string) ([]byte, error) {
	path := filepath.Join(dir, KeyFile)
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secrets: generating a key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secrets: creating data directory: %w", err)
	}
	// Write a temporary file, then link it into place: another process
	// starting at the same moment either wins the link or reads our key,
	// and nobody ever reads a half-written file.
	if err := writeKeyFile(path, key, false); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, err
	}
	return key, nil
}

// writeKeyFile writes key as hex to path with mode 0600. It replaces an
// existing file only if replace is set; otherwise it fails with fs.ErrExist.
func writeKeyFile(path string, key []byte, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	if _, err := tmp.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("secrets: writing %s: %w", path, err)
	}
	return nil
}

// readSecretFile reads a key file after checking that only its owner can
// read or write it.
func readSecretFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets: %w: %s is not a regular file", ErrKey, path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("secrets: %w: %s has mode %04o; refusing a key others can read or write (chmod 600 it)", ErrKey, path, perm)
	}
	if info.Size() > maxKeyFileSize {
		return nil, fmt.Errorf("secrets: %w: %s is larger than %d bytes", ErrKey, path, maxKeyFileSize)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("secrets: reading %s: %w", path, err)
	}
	return buf.Bytes(), nil
}

func readKeyFile(path string) ([]byte, error) {
	data, err := readSecretFile(path)
	if err != nil {
		return nil, err
	}
	key, err := ParseKey(string(data))
	if err != nil {
		return nil, fmt.Errorf("secrets: %s: %w", path, err)
	}
	return key, nil
}

// readOldKeys reads the old-keys file; a missing file holds no keys.
func readOldKeys(path string) ([][]byte, error) {
	data, err := readSecretFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeyList(string(data))
	if err != nil {
		return nil, fmt.Errorf("secrets: %s: %w", path, err)
	}
	return keys, nil
}

// RotateKeyFile starts a rotation of the generated key in dataDir: the
// current key is appended to the old-keys file and a new key replaces it.
// It returns the new key's id. Processes holding a loaded Keyring keep the
// old key until they restart; run the reseal (workbench keys rotate) after.
func RotateKeyFile(dataDir string) (string, error) {
	path := filepath.Join(dataDir, KeyFile)
	current, err := readKeyFile(path)
	if err != nil {
		return "", err
	}
	oldPath := filepath.Join(dataDir, OldKeysFile)
	if _, err := readOldKeys(oldPath); err != nil {
		return "", err
	}
	f, err := os.OpenFile(oldPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(current) + "\n")
	serr := f.Sync()
	if cerr := f.Close(); werr == nil && serr == nil {
		werr = cerr
	}
	if werr != nil || serr != nil {
		return "", fmt.Errorf("secrets: writing %s: %w", oldPath, errors.Join(werr, serr))
	}
	next := make([]byte, KeySize)
	if _, err := rand.Read(next); err != nil {
		return "", fmt.Errorf("secrets: generating a key: %w", err)
	}
	if err := writeKeyFile(path, next, true); err != nil {
		return "", err
	}
	return KeyID(next), nil
}
