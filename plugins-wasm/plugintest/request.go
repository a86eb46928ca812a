package plugintest

import (
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"testing"
)

// WantRequest is what a tool call must have sent to a fake API.
type WantRequest struct {
	Method, Path string
	Query        map[string]string // every parameter, exactly; repeated values joined with "|"
	Body         string            // JSON, compared semantically; "" for none
}

// CheckRequest reports every way the request a fake recorded differs from
// want: method and path, the exact query parameters, and the body as JSON.
func CheckRequest(t testing.TB, method, path string, query url.Values, body []byte, want WantRequest) {
	t.Helper()
	if method != want.Method || path != want.Path {
		t.Errorf("request = %s %s, want %s %s", method, path, want.Method, want.Path)
	}
	got := map[string]string{}
	for k, v := range query {
		got[k] = strings.Join(v, "|")
	}
	if want.Query == nil {
		want.Query = map[string]string{}
	}
	if !maps.Equal(got, want.Query) {
		t.Errorf("%s %s query = %v, want %v", method, path, got, want.Query)
	}
	switch {
	case want.Body == "" && len(body) != 0:
		t.Errorf("%s %s sent body %s, want none", method, path, body)
	case want.Body != "":
		if g, w := CanonicalJSON(t, string(body)), CanonicalJSON(t, want.Body); g != w {
			t.Errorf("%s %s body = %s\nwant %s", method, path, g, w)
		}
	}
}

// CanonicalJSON re-encodes JSON text with sorted keys, failing the test when
// it is not JSON.
func CanonicalJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %s: %v", s, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
