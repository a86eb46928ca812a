package connect

import (
	"net/http"
	"strings"
	"testing"
	"unicode"
)

// FuzzParseTokenResponse feeds token endpoint answers (untrusted bytes from a
// provider) to the parser: it never panics, and any provider text it keeps
// is free of control characters.
func FuzzParseTokenResponse(f *testing.F) {
	f.Add("application/json", []byte(`{"access_token":"a","token_type":"bearer","expires_in":3600,"refresh_token":"r"}`))
	f.Add("application/json", []byte(`{"error":"invalid_grant","error_description":"bad\ncode"}`))
	f.Add("application/x-www-form-urlencoded", []byte(`access_token=a&expires_in=60`))
	f.Add("text/plain", []byte(`access_token=a%zz`))
	f.Add("application/json", []byte(`{"expires_in":"1e400"}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {contentType}}}
		tr, err := parseTokenResponse(resp, body)
		if err != nil {
			return
		}
		expiresIn(tr.ExpiresIn)
		pe := &ProviderError{Code: cleanText(tr.Error, 64), Description: cleanText(tr.ErrorDescription, maxProviderMessage)}
		if strings.IndexFunc(pe.Error(), unicode.IsControl) >= 0 {
			t.Fatalf("provider error text keeps control characters: %q", pe.Error())
		}
	})
}

// FuzzValidateFields feeds form values to the API-key validation: it never
// panics, and what it accepts is trimmed, bounded and free of control
// characters.
func FuzzValidateFields(f *testing.F) {
	f.Add("acme", "key")
	f.Add(" ", "")
	f.Add("a\x00b", "k\r\nX: y")
	f.Add(strings.Repeat("a", MaxFieldLen+1), "\xff")
	f.Fuzz(func(t *testing.T, site, token string) {
		got, err := ValidateFields(keyedFields, map[string]string{"site": site, "api_token": token})
		if err != nil {
			return
		}
		for k, v := range got {
			if v == "" || v != strings.TrimSpace(v) || len(v) > MaxFieldLen || strings.IndexFunc(v, unicode.IsControl) >= 0 {
				t.Fatalf("accepted %s = %q", k, v)
			}
		}
	})
}
