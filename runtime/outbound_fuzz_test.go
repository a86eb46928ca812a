package runtime

import (
	"encoding/json"
	"testing"
)

// FuzzOutboundRequest feeds guest-written http_request heads to the
// decoder: it never panics, and it accepts a head only when every header
// in it is a string or a list of strings, keeping each value.
func FuzzOutboundRequest(f *testing.F) {
	for _, seed := range []string{
		`{"method":"GET","url":"https://api.example.com/x","headers":{"Accept":"application/json"}}`,
		`{"method":"POST","url":"https://a/b","headers":{"X":["1","2"]},"timeoutMs":1000}`,
		`{"headers":{"X":1}}`, `{"headers":{"X":[1]}}`, `{"headers":null}`, `{"headers":[]}`, `[]`, `{`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		var req outboundRequest
		if err := json.Unmarshal(head, &req); err != nil {
			return
		}
		var raw struct {
			Headers map[string]json.RawMessage `json:"headers"`
		}
		if err := json.Unmarshal(head, &raw); err != nil {
			t.Fatalf("accepted a head whose headers are not an object: %s", head)
		}
		for k, v := range raw.Headers {
			var one string
			var many []string
			switch {
			case json.Unmarshal(v, &one) == nil:
				if len(req.Headers[k]) != 1 || req.Headers[k][0] != one {
					t.Fatalf("header %q = %q, want [%q]", k, req.Headers[k], one)
				}
			case json.Unmarshal(v, &many) == nil:
				if len(req.Headers[k]) != len(many) {
					t.Fatalf("header %q = %q, want %q", k, req.Headers[k], many)
				}
			default:
				t.Fatalf("accepted header %q = %s, neither a string nor a list of strings", k, v)
			}
		}
	})
}
