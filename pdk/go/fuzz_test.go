//go:build !wasip1

package pdk

import (
	"encoding/json"
	"testing"
)

// FuzzToolDef_Run feeds arbitrary input to a tool with nested, defaulted
// and constrained fields: every input must end in success or a clean
// INVALID_ARGUMENTS, never in a recovered panic or invalid output.
func FuzzToolDef_Run(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"inner":{"owner":"a"}}`,
		`{"inner":{"owner":"a","per_page":5},"list":[{"owner":"b"}],"map":{"k":{"owner":"c"}},"ptr":{"owner":"d"},"flag":true}`,
		`{"inner":{"owner":"a"},"big":1e300}`, `{"inner":{"owner":"a"},"list":[null]}`, `{"inner":{"owner":"a"},"map":{"k":null}}`,
		`{"inner":{"owner":"\u00e9"}}`, `{"inner":{"owner":"a","labels":["x",1]}}`, `{"inner":null}`,
	} {
		f.Add([]byte(seed))
	}
	host := &TestHost{}
	f.Fuzz(func(t *testing.T, input []byte) {
		status, out := host.Call(nestedTool, input)
		if !json.Valid(out) {
			t.Fatalf("output %q is not JSON", out)
		}
		switch status {
		case statusOK:
			var echoed nestedInput
			if err := json.Unmarshal(out, &echoed); err != nil {
				t.Fatalf("success output %s does not decode: %v", out, err)
			}
		case statusError:
			var e Error
			if err := json.Unmarshal(out, &e); err != nil || e.Code != CodeInvalidArguments || e.Message == "" {
				t.Fatalf("input %q: error %s, want INVALID_ARGUMENTS", input, out)
			}
		default:
			t.Fatalf("status %d", status)
		}
	})
}
