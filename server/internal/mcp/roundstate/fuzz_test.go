package roundstate

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzSealer_Open feeds client-supplied request states to Open: it never
// panics, refuses everything it did not seal, and a state it sealed opens
// only for its own binding and only untampered.
func FuzzSealer_Open(f *testing.F) {
	s, err := New(bytes.Repeat([]byte{7}, 32), time.Minute)
	if err != nil {
		f.Fatal(err)
	}
	sealed, err := s.Seal("user|tool|args", map[string]Answer{"k": {Method: "elicitation/create", Result: json.RawMessage(`{"action":"accept"}`)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed, "user|tool|args", 0)
	f.Add(sealed, "user|tool|other", 0)
	f.Add(sealed, "user|tool|args", 12)
	f.Add("", "", 0)
	f.Add(prefix+".", "x", 0)
	f.Add(prefix+"e30."+string(bytes.Repeat([]byte("A"), 43)), "x", 0)
	f.Fuzz(func(t *testing.T, token, binding string, flip int) {
		if flip > 0 && flip < len(token) {
			b := []byte(token)
			b[flip] ^= 0x01
			token = string(b)
		}
		answers, err := s.Open(token, binding)
		if err != nil {
			return
		}
		// Only the sealed state, untampered, for its binding opens.
		if token != sealed || binding != "user|tool|args" || len(answers) != 1 {
			t.Fatalf("Open(%q, %q) = %v, nil; only the sealed state may open", token, binding, answers)
		}
	})
}
