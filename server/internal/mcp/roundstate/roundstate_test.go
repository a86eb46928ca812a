package roundstate

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSealer_Open(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s, err := New(key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }
	answers := map[string]Answer{"user_name": {Method: "elicitation/create", Result: json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}}
	token, err := s.Seal("u1 tools/call x {}", answers)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New([]byte(strings.Repeat("o", 32)), time.Minute)
	other.now = s.now
	flipped := []byte(token)
	flipped[len(prefix)+3] ^= 1

	tests := []struct {
		name    string
		sealer  *Sealer
		token   string
		binding string
		later   time.Duration
		want    string // error text; "" means success
	}{
		{"round trip", s, token, "u1 tools/call x {}", 0, ""},
		{"still valid before expiry", s, token, "u1 tools/call x {}", 59 * time.Second, ""},
		{"tampered suffix", s, token + "-TAMPERED", "u1 tools/call x {}", 0, "integrity"},
		{"tampered body", s, string(flipped), "u1 tools/call x {}", 0, "integrity"},
		{"another key", other, token, "u1 tools/call x {}", 0, "integrity"},
		{"another user", s, token, "u2 tools/call x {}", 0, "another request"},
		{"expired", s, token, "u1 tools/call x {}", 2 * time.Minute, "expired"},
		{"not ours", s, "hello", "u1 tools/call x {}", 0, "not a state"},
		{"too large", s, prefix + strings.Repeat("a", MaxBytes), "u1 tools/call x {}", 0, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.sealer.now = func() time.Time { return now.Add(tt.later) }
			defer func() { tt.sealer.now = func() time.Time { return now } }()
			got, err := tt.sealer.Open(tt.token, tt.binding)
			if tt.want == "" {
				if err != nil || string(got["user_name"].Result) != string(answers["user_name"].Result) || got["user_name"].Method != "elicitation/create" {
					t.Fatalf("Open = %v, %v", got, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}

func TestSealer_Seal(t *testing.T) {
	s, err := New(nil, 0)
	if err != nil || len(s.key) != MinKeyBytes || s.ttl != DefaultTTL {
		t.Fatalf("New(nil, 0) = %+v, %v", s, err)
	}
	if _, err := New([]byte("short"), 0); !errors.Is(err, ErrShortKey) {
		t.Fatalf("short key: %v", err)
	}
	big := map[string]Answer{"k": {Method: "sampling/createMessage", Result: json.RawMessage(`"` + strings.Repeat("x", MaxBytes) + `"`)}}
	if _, err := s.Seal("b", big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized state: %v", err)
	}
	token, err := s.Seal("b", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(token[:strings.LastIndexByte(token, '.')], prefix)
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || strings.Contains(string(raw), `"b":"b"`) {
		t.Fatalf("the binding must be stored hashed: %s %v", raw, err)
	}
}
