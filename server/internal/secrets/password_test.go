package secrets

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"
)

func TestHashPassword(t *testing.T) {
	h, err := hashPassword("correct horse", DefaultPasswordCost)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=2,p=2$") || strings.Contains(h, "correct horse") {
		t.Fatalf("hash = %q", h)
	}
	h2, _ := hashPassword("correct horse", DefaultPasswordCost)
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxPasswordLen+1)} {
		if _, err := hashPassword(bad, DefaultPasswordCost); !errors.Is(err, ErrPassword) {
			t.Errorf("hashPassword(len %d) err = %v, want ErrPassword", len(bad), err)
		}
	}
}

func TestVerifyPassword(t *testing.T) {
	h, err := hashPassword("correct horse", DefaultPasswordCost)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		password string
		want     bool
	}{
		{"correct horse", true},
		{"correct horse ", false},
		{"Correct horse", false},
		{"", false},
		{strings.Repeat("x", MaxPasswordLen+1), false},
	}
	for _, tt := range tests {
		got, err := verifyPassword(tt.password, h)
		if err != nil || got != tt.want {
			t.Errorf("verifyPassword(%q) = %v, %v; want %v", tt.password, got, err, tt.want)
		}
	}
}

func TestVerifyPassword_malformed(t *testing.T) {
	good, err := hashPassword("pw", DefaultPasswordCost)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Split(good, "$")
	join := func(params, salt, sum string) string {
		return strings.Join([]string{"", "argon2id", "v=19", params, salt, sum}, "$")
	}
	tests := []struct{ name, hash string }{
		{"empty", ""},
		{"bcrypt", "$2a$10$abcdefghijklmnopqrstuv"},
		{"argon2i", strings.Replace(good, "argon2id", "argon2i", 1)},
		{"old version", strings.Replace(good, "v=19", "v=16", 1)},
		{"huge memory", join("m=4194304,t=2,p=2", p[4], p[5])},
		{"huge time", join("m=65536,t=1000,p=2", p[4], p[5])},
		{"huge threads", join("m=65536,t=2,p=255", p[4], p[5])},
		{"zero time", join("m=65536,t=0,p=2", p[4], p[5])},
		{"missing param", join("m=65536,t=2", p[4], p[5])},
		{"duplicate param", join("m=65536,m=65536,t=2,p=2", p[4], p[5])},
		{"unknown param", join("m=65536,t=2,p=2,x=1", p[4], p[5])},
		{"bad salt", join(p[3], "!!!", p[5])},
		{"short hash", join(p[3], p[4], "AAAA")},
		{"extra field", good + "$x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := verifyPassword("pw", tt.hash)
			if ok || !errors.Is(err, ErrPasswordHash) {
				t.Fatalf("VerifyPassword = %v, %v; want ErrPasswordHash", ok, err)
			}
		})
	}
	// The parameters are read from the hash: a hash made with other costs
	// verifies, and the same sum under other parameters does not.
	salt := []byte("0123456789abcdef")
	sum := argon2.IDKey([]byte("pw"), salt, 1, 1024, 1, 32)
	cheap := join("m=1024,t=1,p=1", base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum))
	if ok, err := verifyPassword("pw", cheap); err != nil || !ok {
		t.Fatalf("verifyPassword(cheap params) = %v, %v; want true", ok, err)
	}
	if ok, err := verifyPassword("pw", strings.Replace(cheap, "t=1", "t=2", 1)); err != nil || ok {
		t.Fatalf("verifyPassword(changed params) = %v, %v; want false", ok, err)
	}
}

func TestHashPassword_cost(t *testing.T) {
	start := time.Now()
	h, err := hashPassword("measure me", DefaultPasswordCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyPassword("measure me", h); err != nil {
		t.Fatal(err)
	}
	t.Logf("hash + verify took %v", time.Since(start))
}

func BenchmarkPasswords_Hash(b *testing.B) {
	for b.Loop() {
		if _, err := hashPassword("benchmark password", DefaultPasswordCost); err != nil {
			b.Fatal(err)
		}
	}
}
