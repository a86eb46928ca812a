package metatools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
)

// FuzzTools_Invoke feeds arbitrary argument bytes to every meta-tool that
// does not wait: the result is always valid JSON, failures are isError with
// a code, and nothing panics.
func FuzzTools_Invoke(f *testing.F) {
	fx := newFixture(f, metatools.Options{})
	names := []string{"search_tools", "get_tool_schema", "execute_tools", "whoami", "list_integrations", "connect", "get_auth_url", "curl_session"}
	seeds := []string{
		`{}`, `null`, ``, `[]`, `{"query":"github","limit":3}`, `{"tool":"github_get_repo"}`,
		`{"executions":[{"tool":"github_get_repo","arguments":{"owner":"o","repo":"r"},"idempotencyKey":"k"}]}`,
		`{"executions":[{"tool":"echo_ping","arguments":{"a":[1,{"b":null}]}}]}`,
		`{"integration":"github","reconnect":true}`, `{"integrations":["github","github"]}`,
		`{"query":"\u0000\uffff","cursor":"eyJvIjoxLCJxIjoxfQ"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		name := names[int(which)%len(names)]
		r, err := fx.tools.Invoke(context.Background(), alice, name, args, metatools.Peer{})
		if err != nil {
			t.Fatalf("Invoke(%s): %v", name, err)
		}
		if !json.Valid(r.JSON) {
			t.Fatalf("Invoke(%s, %q) = invalid JSON %q", name, args, r.JSON)
		}
		if r.IsError && !r.Structured {
			var body struct{ Error *metatools.Error }
			if err := json.Unmarshal(r.JSON, &body); err != nil || body.Error == nil || body.Error.Code == "" {
				t.Fatalf("failure without an error code: %s", r.JSON)
			}
		}
	})
}
