package secrets

import (
	"strings"
	"testing"
)

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, hash, prefix := NewToken()
		if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+43 {
			t.Fatalf("token %q has the wrong shape", tok)
		}
		if hash != HashToken(tok) || len(hash) != 64 {
			t.Fatalf("hash %q is not HashToken(token)", hash)
		}
		if prefix != tok[:9] {
			t.Fatalf("prefix %q, want %q", prefix, tok[:9])
		}
		if !LooksLikeToken(tok) {
			t.Fatalf("LooksLikeToken(%q) = false", tok)
		}
		if seen[tok] {
			t.Fatal("token repeated")
		}
		seen[tok] = true
	}
}

func TestLooksLikeToken(t *testing.T) {
	tok, _, _ := NewToken()
	tests := []struct {
		in   string
		want bool
	}{
		{tok, true},
		{"", false},
		{"wb_", false},
		{tok[:len(tok)-1], false},
		{tok + "A", false},
		{"xx_" + tok[3:], false},
		{tok[:10] + "+" + tok[11:], false},
	}
	for _, tt := range tests {
		if got := LooksLikeToken(tt.in); got != tt.want {
			t.Errorf("LooksLikeToken(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
