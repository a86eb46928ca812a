package store

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNormalizeEmail(t *testing.T) {
	tests := []struct {
		in, display, key string
		ok               bool
	}{
		{"a@example.com", "a@example.com", "a@example.com", true},
		{"  Alice@Example.COM\t", "Alice@Example.COM", "alice@example.com", true},
		{"", "", "", false},
		{"alice", "", "", false},
		{"Alice <a@example.com>", "", "", false},
		{"a@example.com, b@example.com", "", "", false},
		{strings.Repeat("a", 250) + "@x.io", "", "", false},
	}
	for _, tt := range tests {
		display, key, err := NormalizeEmail(tt.in)
		if tt.ok != (err == nil) || display != tt.display || key != tt.key {
			t.Errorf("NormalizeEmail(%q) = %q, %q, %v", tt.in, display, key, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("NormalizeEmail(%q) err = %v, want ErrInvalid", tt.in, err)
		}
	}
}

func TestCheckIdent(t *testing.T) {
	for _, good := range []string{"github", "atlassian-jira", "a_b", "0123abcd"} {
		if err := CheckIdent("integration", good); err != nil {
			t.Errorf("CheckIdent(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"", "GitHub", "a b", "../x", "a/b", strings.Repeat("a", 65), "é"} {
		if err := CheckIdent("integration", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckIdent(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestTrimReason(t *testing.T) {
	tests := []struct {
		in      string
		wantLen int
	}{
		{"short", 5},
		{strings.Repeat("x", MaxReasonLen+10), MaxReasonLen},
		{strings.Repeat("é", MaxReasonLen), MaxReasonLen}, // 2-byte runes: cut on a boundary
		{"bad\xffutf8", 7},
	}
	for _, tt := range tests {
		got := TrimReason(tt.in)
		if len(got) != tt.wantLen || !utf8.ValidString(got) {
			t.Errorf("TrimReason(len %d) = len %d valid %v, want len %d", len(tt.in), len(got), utf8.ValidString(got), tt.wantLen)
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID(PrefixUser)
		if !strings.HasPrefix(id, PrefixUser) || len(id) != len(PrefixUser)+26 || strings.Trim(id[len(PrefixUser):], "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("NewID = %q", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	s := NewState()
	if len(s) != 43 || HashState(s) == HashState(NewState()) || len(HashState(s)) != 64 {
		t.Fatalf("NewState = %q", s)
	}
}

func TestRound(t *testing.T) {
	in := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	got := Round(in)
	if got.Location() != time.UTC || got.Nanosecond() != 123456000 || !got.Equal(in.Truncate(time.Microsecond)) {
		t.Fatalf("Round = %v", got)
	}
	if !Round(time.Time{}).IsZero() {
		t.Fatal("Round(zero) is not zero")
	}
}

func TestPendingStatus_Terminal(t *testing.T) {
	for s, want := range map[PendingStatus]bool{PendingWaiting: false, PendingConnected: true, PendingExpired: true, PendingFailed: true, "OTHER": false} {
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, !want)
		}
	}
}
