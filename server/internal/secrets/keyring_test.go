package secrets

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestKeyring_SealOpen(t *testing.T) {
	k := NewKeyring(Config{Key: testKey(1)})
	aad := AAD("connection", "default", "usr_a", "github")
	plain := []byte("gho_secret-token")
	sealed, id, err := k.Seal(plain, aad)
	if err != nil {
		t.Fatal(err)
	}
	if id != KeyID(testKey(1)) || len(id) != 8 {
		t.Fatalf("key id = %q, want %q", id, KeyID(testKey(1)))
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed blob contains the plaintext")
	}
	again, _, _ := k.Seal(plain, aad)
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of the same plaintext are identical: nonce reused")
	}
	got, err := k.Open(sealed, id, aad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}

	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	tests := []struct {
		name    string
		ring    *Keyring
		sealed  []byte
		keyID   string
		aad     []byte
		wantErr error
	}{
		{"wrong key", NewKeyring(Config{Key: testKey(2)}), sealed, KeyID(testKey(2)), aad, ErrOpen},
		{"unknown key id", k, sealed, "00000000", aad, ErrUnknownKey},
		{"tampered ciphertext", k, flip(len(sealed) - tagSize - 1), id, aad, ErrOpen},
		{"tampered tag", k, flip(len(sealed) - 1), id, aad, ErrOpen},
		{"tampered nonce", k, flip(1), id, aad, ErrOpen},
		{"wrong version", k, flip(0), id, aad, ErrOpen},
		{"truncated", k, sealed[:10], id, aad, ErrOpen},
		{"empty", k, nil, id, aad, ErrOpen},
		{"another user's row", k, sealed, id, AAD("connection", "default", "usr_b", "github"), ErrOpen},
		{"another integration", k, sealed, id, AAD("connection", "default", "usr_a", "slack"), ErrOpen},
		{"another purpose", k, sealed, id, AAD("refresh", "default", "usr_a", "github"), ErrOpen},
		{"no aad", k, sealed, id, nil, ErrOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ring.Open(tt.sealed, tt.keyID, tt.aad)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Open err = %v, want %v", err, tt.wantErr)
			}
			if got != nil {
				t.Fatalf("Open returned data with an error: %q", got)
			}
			if strings.Contains(err.Error(), string(plain)) || strings.Contains(err.Error(), hex.EncodeToString(testKey(1))) {
				t.Fatalf("error reveals a secret: %v", err)
			}
		})
	}
}

func TestAAD(t *testing.T) {
	// Parts are length-prefixed, so moving a boundary changes the encoding.
	if bytes.Equal(AAD("ab", "c"), AAD("a", "bc")) {
		t.Fatal(`AAD("ab","c") == AAD("a","bc")`)
	}
	if bytes.Equal(AAD("a", ""), AAD("a")) {
		t.Fatal(`AAD("a","") == AAD("a")`)
	}
	if !bytes.Equal(AAD("x", "y"), AAD("x", "y")) {
		t.Fatal("AAD is not deterministic")
	}
}

func TestParseKey(t *testing.T) {
	good := strings.Repeat("ab", KeySize)
	tests := []struct {
		in      string
		wantErr bool
	}{
		{good, false},
		{"  " + good + "\n", false},
		{strings.ToUpper(good), false},
		{"", true},
		{good[:62], true},
		{good + "00", true},
		{strings.Repeat("zz", KeySize), true},
	}
	for _, tt := range tests {
		key, err := ParseKey(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrKey) {
				t.Errorf("ParseKey(%q) err = %v, want ErrKey", tt.in, err)
			}
			if err != nil && tt.in != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Errorf("ParseKey error repeats the key: %v", err)
			}
			continue
		}
		if err != nil || len(key) != KeySize {
			t.Errorf("ParseKey(%q) = %x, %v", tt.in, key, err)
		}
	}
	keys, err := ParseKeyList(good + ", " + strings.Repeat("01", KeySize) + "\n")
	if err != nil || len(keys) != 2 {
		t.Fatalf("ParseKeyList = %d keys, %v", len(keys), err)
	}
	if _, err := ParseKeyList(good + ",nope"); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "key 2") {
		t.Fatalf("ParseKeyList bad entry err = %v", err)
	}
}

func TestKeyring_generatedKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k := NewKeyring(Config{DataDir: dir})
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file exists before first use: %v", err)
	}
	sealed, id, err := k.Seal([]byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %04o, want 0600", info.Mode().Perm())
	}
	// A second keyring (a restart) reads the same key.
	got, err := NewKeyring(Config{DataDir: dir}).Open(sealed, id, nil)
	if err != nil || string(got) != "x" {
		t.Fatalf("reopen = %q, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data dir holds %d entries, want only the key file", len(entries))
	}
}

func TestKeyring_generatedKeyConcurrent(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := NewKeyring(Config{DataDir: dir}).CurrentKeyID()
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("keyrings racing to generate a key disagree: %v", ids)
		}
	}
}

func TestKeyring_keyFileChecks(t *testing.T) {
	good := strings.Repeat("cd", KeySize) + "\n"
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		wantErr string
	}{
		{"group readable", good, 0o640, "mode 0640"},
		{"world readable", good, 0o644, "mode 0644"},
		{"group writable", good, 0o620, "mode 0620"},
		{"not hex", strings.Repeat("zz", KeySize), 0o600, "hex"},
		{"short", "abcd", 0o600, "64 hex"},
		{"owner only", good, 0o600, ""},
		{"owner read only", good, 0o400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, KeyFile)
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := NewKeyring(Config{DataDir: dir}).CurrentKeyID()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrKey mentioning %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), strings.TrimSpace(tt.content)) {
				t.Fatalf("error reveals the key: %v", err)
			}
		})
	}
	t.Run("directory instead of file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, KeyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := NewKeyring(Config{DataDir: dir}).CurrentKeyID(); !errors.Is(err, ErrKey) {
			t.Fatalf("err = %v, want ErrKey", err)
		}
	})
	t.Run("no key and no data dir", func(t *testing.T) {
		if _, _, err := NewKeyring(Config{}).Seal([]byte("x"), nil); !errors.Is(err, ErrKey) {
			t.Fatalf("err = %v, want ErrKey", err)
		}
	})
	t.Run("wrong key size", func(t *testing.T) {
		if _, _, err := NewKeyring(Config{Key: make([]byte, 16)}).Seal([]byte("x"), nil); !errors.Is(err, ErrKey) {
			t.Fatalf("err = %v, want ErrKey", err)
		}
	})
	t.Run("failed load is retried", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, KeyFile)
		if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		k := NewKeyring(Config{DataDir: dir})
		if _, err := k.CurrentKeyID(); err == nil {
			t.Fatal("loose permissions accepted")
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := k.CurrentKeyID(); err != nil {
			t.Fatalf("after chmod: %v", err)
		}
	})
}

func TestKeyring_Reseal(t *testing.T) {
	oldKey, newKey := testKey(1), testKey(2)
	aad := AAD("connection", "t", "u", "i")
	sealed, oldID, err := NewKeyring(Config{Key: oldKey}).Seal([]byte("secret"), aad)
	if err != nil {
		t.Fatal(err)
	}

	// Without the old key the blob cannot be read.
	if _, err := NewKeyring(Config{Key: newKey}).Open(sealed, oldID, aad); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Open without old key err = %v", err)
	}

	k := NewKeyring(Config{Key: newKey, OldKeys: [][]byte{oldKey}})
	if got, err := k.Open(sealed, oldID, aad); err != nil || string(got) != "secret" {
		t.Fatalf("Open with old key = %q, %v", got, err)
	}
	resealed, newID, err := k.Reseal(sealed, oldID, aad)
	if err != nil {
		t.Fatal(err)
	}
	if newID != KeyID(newKey) || newID == oldID {
		t.Fatalf("Reseal key id = %q, want %q", newID, KeyID(newKey))
	}
	// The resealed blob opens with the new key alone.
	if got, err := NewKeyring(Config{Key: newKey}).Open(resealed, newID, aad); err != nil || string(got) != "secret" {
		t.Fatalf("Open resealed = %q, %v", got, err)
	}
	// Resealing under the current key is a no-op.
	same, sameID, err := k.Reseal(resealed, newID, aad)
	if err != nil || sameID != newID || !bytes.Equal(same, resealed) {
		t.Fatalf("Reseal current = %v %q", err, sameID)
	}
	// A wrong AAD is not laundered by a reseal.
	if _, _, err := k.Reseal(sealed, oldID, AAD("connection", "t", "other", "i")); !errors.Is(err, ErrOpen) {
		t.Fatalf("Reseal with wrong aad err = %v", err)
	}
}

func TestRotateKeyFile(t *testing.T) {
	dir := t.TempDir()
	k1 := NewKeyring(Config{DataDir: dir})
	sealed, oldID, err := k1.Seal([]byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	newID, err := RotateKeyFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if newID == oldID {
		t.Fatal("rotation kept the key")
	}
	for _, name := range []string{KeyFile, OldKeysFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v mode %v", name, err, info.Mode())
		}
	}
	k2 := NewKeyring(Config{DataDir: dir})
	if id, _ := k2.CurrentKeyID(); id != newID {
		t.Fatalf("current key id after rotation = %q, want %q", id, newID)
	}
	if got, err := k2.Open(sealed, oldID, nil); err != nil || string(got) != "secret" {
		t.Fatalf("old blob after rotation = %q, %v", got, err)
	}
	// A second rotation keeps both earlier keys.
	if _, err := RotateKeyFile(dir); err != nil {
		t.Fatal(err)
	}
	if got, err := NewKeyring(Config{DataDir: dir}).Open(sealed, oldID, nil); err != nil || string(got) != "secret" {
		t.Fatalf("first blob after two rotations = %q, %v", got, err)
	}
	if _, err := RotateKeyFile(t.TempDir()); err == nil {
		t.Fatal("rotating a missing key file succeeded")
	}
}

func TestKeyring_DeriveKey(t *testing.T) {
	a := NewKeyring(Config{Key: bytes.Repeat([]byte{1}, KeySize)})
	b := NewKeyring(Config{Key: bytes.Repeat([]byte{1}, KeySize)})
	other := NewKeyring(Config{Key: bytes.Repeat([]byte{2}, KeySize)})
	derive := func(k *Keyring, purpose string) []byte {
		t.Helper()
		key, err := k.DeriveKey(purpose)
		if err != nil || len(key) != KeySize {
			t.Fatalf("DeriveKey(%q) = %d bytes, %v", purpose, len(key), err)
		}
		return key
	}
	state := derive(a, "mcp request state")
	if !bytes.Equal(state, derive(b, "mcp request state")) {
		t.Error("two keyrings with one key derive different keys")
	}
	if bytes.Equal(state, derive(a, "something else")) {
		t.Error("two purposes derive the same key")
	}
	if bytes.Equal(state, derive(other, "mcp request state")) {
		t.Error("two encryption keys derive the same key")
	}
	if bytes.Equal(state, bytes.Repeat([]byte{1}, KeySize)) {
		t.Error("the derived key is the encryption key")
	}
	if _, err := NewKeyring(Config{}).DeriveKey("x"); !errors.Is(err, ErrKey) {
		t.Errorf("DeriveKey without a key = %v, want ErrKey", err)
	}
}
