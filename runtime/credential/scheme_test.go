package credential

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

func newRequest(t *testing.T, rawURL string, header http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...) // keep non-canonical keys as a hostile plugin would
	}
	return req
}

func TestScheme_Validate(t *testing.T) {
	tests := []struct {
		name    string
		scheme  Scheme
		wantErr string // substring; "" means valid
	}{
		{"oauth2", Scheme{Mode: ModeOAuth2}, ""},
		{"none", Scheme{Mode: ModeNone}, ""},
		{"header", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X-Api-Key", Value: "{api_key}"}}, ""},
		{"header prefix", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "Authorization", Value: "Token {api_key}"}}, ""},
		{"query", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Name: "api_key", Value: "{api_key}"}}, ""},
		{"basic", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{email}", Password: "{api_token}"}}, ""},
		{"basic key as username", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{api_key}"}}, ""},
		{"cookie", Scheme{Mode: ModeCookie, CookieDomains: []string{".example.com", "app.example.org"}}, ""},

		{"unknown mode", Scheme{Mode: "bearer"}, `unknown auth mode "bearer"`},
		{"empty mode", Scheme{}, `unknown auth mode ""`},
		{"unknown in", Scheme{Mode: ModeAPIKey, Placement: Placement{In: "body", Name: "k", Value: "{k}"}}, `unknown placement "body"`},
		{"empty in", Scheme{Mode: ModeAPIKey}, `unknown placement ""`},
		{"header no name", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Value: "{k}"}}, "not a valid header name"},
		{"header bad name", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X Key", Value: "{k}"}}, "not a valid header name"},
		{"header host", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "host", Value: "{k}"}}, "reserved"},
		{"header empty value", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X-Key"}}, "value template is empty"},
		{"query no name", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Value: "{k}"}}, "query parameter name is empty"},
		{"basic no username", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Password: "{k}"}}, "username template is empty"},
		{"basic with name", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{k}", Name: "x"}}, "not name and value"},
		{"header with username", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "{k}", Username: "{u}"}}, "not username and password"},
		{"no field", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "static"}}, "references no {field}"},
		{"unbalanced open", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "{api_key"}}, "unbalanced '{'"},
		{"unbalanced close", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "api_key}"}}, "unbalanced '}'"},
		{"nested", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "{a{b}}"}}, "unbalanced '{'"},
		{"upper field", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "{API_KEY}"}}, "must match [a-z0-9_]+"},
		{"empty field", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X", Value: "a {} b"}}, "must match"},
		{"dash field", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{e-mail}"}}, "must match"},
		{"bad password template", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{u}", Password: "{p"}}, "unbalanced"},
		{"placement outside apikey", Scheme{Mode: ModeOAuth2, Placement: Placement{In: InHeader, Name: "X", Value: "{k}"}}, "only valid in apikey"},
		{"cookie no domains", Scheme{Mode: ModeCookie}, "at least one cookie domain"},
		{"cookie bad domain", Scheme{Mode: ModeCookie, CookieDomains: []string{"https://example.com"}}, "not a host name"},
		{"cookie wildcard", Scheme{Mode: ModeCookie, CookieDomains: []string{"*.example.com"}}, "not a host name"},
		{"cookie empty domain", Scheme{Mode: ModeCookie, CookieDomains: []string{"."}}, "not a host name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scheme.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestScheme_TemplateFields(t *testing.T) {
	tests := []struct {
		p    Placement
		want []string
	}{
		{Placement{In: InHeader, Name: "X", Value: "{api_key}"}, []string{"api_key"}},
		{Placement{In: InHeader, Name: "X", Value: "Token {b}:{a}:{b}"}, []string{"a", "b"}},
		{Placement{In: InBasic, Username: "{email}", Password: "{api_token}"}, []string{"api_token", "email"}},
		{Placement{In: InHeader, Name: "X", Value: "{broken"}, nil},
		{Placement{}, nil},
	}
	for _, tt := range tests {
		got := Scheme{Mode: ModeAPIKey, Placement: tt.p}.TemplateFields()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("TemplateFields(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestScheme_Strip(t *testing.T) {
	header := http.Header{
		"Authorization":       {"Bearer plugin"},
		"authorization":       {"Bearer lowercase"},
		"PROXY-AUTHORIZATION": {"Basic x"},
		"Cookie":              {"a=b"},
		"cookie":              {"c=d"},
		"X-Api-Key":           {"plugin-key"},
		"x-api-key":           {"plugin-key-2"},
		"Accept":              {"application/json"},
	}
	tests := []struct {
		name       string
		scheme     Scheme
		url        string
		wantHeader []string // remaining header keys, sorted
		wantQuery  string
	}{
		{"oauth2", Scheme{Mode: ModeOAuth2}, "https://api.test/x?api_key=1&q=2",
			[]string{"Accept", "X-Api-Key", "x-api-key"}, "api_key=1&q=2"},
		{"apikey header", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X-API-KEY", Value: "{k}"}}, "https://api.test/x?api_key=1",
			[]string{"Accept"}, "api_key=1"},
		{"apikey query", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Name: "api_key", Value: "{k}"}}, "https://api.test/x?API_KEY=1&q=2&api%5Fkey=3;api_key=4&z",
			[]string{"Accept", "X-Api-Key", "x-api-key"}, "q=2&z"},
		{"apikey query keeps order and encoding", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Name: "token", Value: "{k}"}}, "https://api.test/x?b=%2F&token=x&a=1;c",
			[]string{"Accept", "X-Api-Key", "x-api-key"}, "b=%2F&a=1;c"},
		{"none still strips", Scheme{Mode: ModeNone}, "https://api.test/",
			[]string{"Accept", "X-Api-Key", "x-api-key"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(t, tt.url, header)
			tt.scheme.Strip(req)
			var keys []string
			for k := range req.Header {
				keys = append(keys, k)
			}
			sortStrings(keys)
			if !reflect.DeepEqual(keys, tt.wantHeader) {
				t.Fatalf("headers left = %v, want %v", keys, tt.wantHeader)
			}
			if req.URL.RawQuery != tt.wantQuery {
				t.Fatalf("query = %q, want %q", req.URL.RawQuery, tt.wantQuery)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestRemoveQueryParam(t *testing.T) {
	tests := []struct{ raw, name, want string }{
		{"", "k", ""},
		{"k=1", "k", ""},
		{"k", "k", ""},
		{"a=1&k=2", "k", "a=1"},
		{"k=2&a=1", "k", "a=1"},
		{"a=1&k=2&b=3", "k", "a=1&b=3"},
		{"a=1;k=2;b=3", "k", "a=1;b=3"},
		{"a=1&&b=2", "k", "a=1&&b=2"},
		{"K=1&k+=2&k%=3", "k", "k+=2&k%=3"},
		{"ka=1&ak=2", "k", "ka=1&ak=2"},
		{"a=k&b==k", "k", "a=k&b==k"},
	}
	for _, tt := range tests {
		if got := removeQueryParam(tt.raw, tt.name); got != tt.want {
			t.Errorf("removeQueryParam(%q, %q) = %q, want %q", tt.raw, tt.name, got, tt.want)
		}
	}
}

func TestScheme_Apply(t *testing.T) {
	hostile := http.Header{
		"Authorization": {"Bearer plugin-token"},
		"authorization": {"Bearer plugin-token-2"},
		"Cookie":        {"sid=plugin"},
		"X-Api-Key":     {"plugin-key"},
		"x-api-key":     {"plugin-key-2"},
	}
	fields := map[string]string{"api_key": secretKey, "email": "me@example.com", "api_token": "tok-SECRET"}
	tests := []struct {
		name   string
		scheme Scheme
		cred   *Credential
		url    string
		check  func(t *testing.T, req *http.Request)
	}{
		{
			name:   "oauth2 replaces plugin authorization",
			scheme: Scheme{Mode: ModeOAuth2},
			cred:   &Credential{AccessToken: secretToken},
			url:    "https://api.test/x",
			check: func(t *testing.T, req *http.Request) {
				wantOnly(t, req, "Authorization", "Bearer "+secretToken)
				wantAbsent(t, req, "Cookie")
				if got := req.Header.Values("X-Api-Key"); len(got) != 1 {
					t.Fatalf("oauth2 must leave unrelated headers alone, X-Api-Key = %v", got)
				}
			},
		},
		{
			name:   "apikey header replaces every spelling",
			scheme: Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "x-api-key", Value: "{api_key}"}},
			cred:   &Credential{Fields: fields},
			url:    "https://api.test/x",
			check: func(t *testing.T, req *http.Request) {
				wantOnly(t, req, "X-Api-Key", secretKey)
				wantAbsent(t, req, "Authorization")
				wantAbsent(t, req, "Cookie")
			},
		},
		{
			name:   "apikey header template",
			scheme: Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "Authorization", Value: "Token {api_key}"}},
			cred:   &Credential{Fields: fields},
			url:    "https://api.test/x",
			check: func(t *testing.T, req *http.Request) {
				wantOnly(t, req, "Authorization", "Token "+secretKey)
			},
		},
		{
			name:   "apikey query replaces plugin param",
			scheme: Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Name: "api_key", Value: "{api_key}"}},
			cred:   &Credential{Fields: fields},
			url:    "https://api.test/x?api_key=plugin&q=a+b&Api_Key=again",
			check: func(t *testing.T, req *http.Request) {
				q := req.URL.Query()
				if got := q["api_key"]; len(got) != 1 || got[0] != secretKey {
					t.Fatalf("api_key = %v, want exactly the real key", got)
				}
				if q.Get("q") != "a b" || len(q) != 2 {
					t.Fatalf("query = %v", q)
				}
				wantAbsent(t, req, "Authorization")
			},
		},
		{
			name:   "apikey basic",
			scheme: Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{email}", Password: "{api_token}"}},
			cred:   &Credential{Fields: fields},
			url:    "https://api.test/x",
			check: func(t *testing.T, req *http.Request) {
				if len(req.Header.Values("Authorization")) != 1 {
					t.Fatalf("Authorization = %v", req.Header.Values("Authorization"))
				}
				u, p, ok := req.BasicAuth()
				if !ok || u != "me@example.com" || p != "tok-SECRET" {
					t.Fatalf("BasicAuth = %q %q %v", u, p, ok)
				}
				wantAbsent(t, req, "Cookie")
			},
		},
		{
			name:   "none strips and adds nothing",
			scheme: Scheme{Mode: ModeNone},
			cred:   nil,
			url:    "https://api.test/x",
			check: func(t *testing.T, req *http.Request) {
				wantAbsent(t, req, "Authorization")
				wantAbsent(t, req, "Cookie")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(t, tt.url, hostile)
			if err := tt.scheme.Apply(req, tt.cred); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			tt.check(t, req)
		})
	}
}

func TestScheme_Apply_errors(t *testing.T) {
	header := Scheme{Mode: ModeAPIKey, Placement: Placement{In: InHeader, Name: "X-Api-Key", Value: "{api_key}"}}
	tests := []struct {
		name         string
		scheme       Scheme
		cred         *Credential
		wantErr      string
		notConnected bool
	}{
		{"missing field", header, &Credential{Fields: map[string]string{"other": secretKey}}, `no field "api_key"`, true},
		{"missing basic password field", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{email}", Password: "{api_token}"}},
			&Credential{Fields: map[string]string{"email": "e", "x": secretKey}}, `no field "api_token"`, true},
		{"nil credential", header, nil, "no apikey credential", true},
		{"no token", Scheme{Mode: ModeOAuth2}, &Credential{Fields: map[string]string{"a": secretKey}}, "no access token", true},
		{"token with newline", Scheme{Mode: ModeOAuth2}, &Credential{AccessToken: secretToken + "\r\nX-Evil: 1"}, "not allowed in a header", false},
		{"key with newline", header, &Credential{Fields: map[string]string{"api_key": secretKey + "\n"}}, "not allowed in a header", false},
		{"basic username colon", Scheme{Mode: ModeAPIKey, Placement: Placement{In: InBasic, Username: "{api_key}"}},
			&Credential{Fields: map[string]string{"api_key": secretKey + ":x"}}, "contains ':'", false},
		{"invalid scheme", Scheme{Mode: "magic"}, &Credential{AccessToken: secretToken}, "unknown auth mode", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(t, "https://api.test/", http.Header{"Authorization": {"Bearer plugin"}})
			err := tt.scheme.Apply(req, tt.cred)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Apply() = %v, want error containing %q", err, tt.wantErr)
			}
			if errors.Is(err, failure.ErrNotConnected) != tt.notConnected {
				t.Fatalf("errors.Is(err, failure.ErrNotConnected) = %v, want %v", !tt.notConnected, tt.notConnected)
			}
			assertNoSecret(t, err.Error())
			if req.Header.Get("Authorization") == "Bearer plugin" {
				t.Fatal("plugin Authorization survived a failed Apply")
			}
		})
	}
}

func TestScheme_Apply_cookies(t *testing.T) {
	future := time.Now().Add(time.Hour)
	past := time.Now().Add(-time.Hour)
	jar := []*http.Cookie{
		{Name: "apex", Value: "1", Domain: "example.com"},
		{Name: "dotted", Value: "2", Domain: ".example.com", Expires: future},
		{Name: "app", Value: "3", Domain: "app.example.com"},
		{Name: "hostonly", Value: "4"},
		{Name: "expired", Value: "5", Domain: "example.com", Expires: past},
		{Name: "deleted", Value: "6", Domain: "example.com", MaxAge: -1},
		{Name: "secure", Value: "7", Domain: "example.com", Secure: true},
		{Name: "api", Value: "8", Domain: "example.com", Path: "/api"},
		{Name: "other", Value: "9", Domain: "other.org"},
		{Name: "suffix", Value: "10", Domain: "ample.com"},
		nil,
	}
	domains := []string{".example.com", "other.org"}
	tests := []struct {
		url  string
		want []string
	}{
		{"https://example.com/", []string{"apex", "dotted", "secure"}},
		{"https://EXAMPLE.com./", []string{"apex", "dotted", "secure"}},
		{"http://example.com/", []string{"apex", "dotted"}},
		{"https://app.example.com/", []string{"apex", "dotted", "app", "secure"}},
		{"https://deep.app.example.com/", []string{"apex", "dotted", "app", "secure"}},
		{"https://example.com/api", []string{"apex", "dotted", "secure", "api"}},
		{"https://example.com/api/v1", []string{"apex", "dotted", "secure", "api"}},
		{"https://example.com/apiv1", []string{"apex", "dotted", "secure"}},
		{"https://other.org/", []string{"other"}},
		{"https://sub.other.org/", nil},    // other.org listed without a dot: exact host only
		{"https://badexample.com/", nil},   // not a subdomain
		{"https://example.com.evil/", nil}, // not a subdomain
		{"https://ample.com/", nil},        // not in CookieDomains
		{"https://127.0.0.1/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			req := newRequest(t, tt.url, http.Header{"Cookie": {"plugin=1"}})
			if err := (Scheme{Mode: ModeCookie, CookieDomains: domains}).Apply(req, &Credential{Cookies: jar}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range req.Cookies() {
				got = append(got, c.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("cookies = %v, want %v", got, tt.want)
			}
			if len(req.Header.Values("Cookie")) > 1 {
				t.Fatalf("more than one Cookie header: %v", req.Header.Values("Cookie"))
			}
		})
	}
}

func TestBinding(t *testing.T) {
	s := Scheme{Mode: ModeAPIKey, Placement: Placement{In: InQuery, Name: "key", Value: "{api_key}"}}
	b := s.Bind(&Credential{Fields: map[string]string{"api_key": secretKey}})
	req := newRequest(t, "https://api.test/?key=plugin", nil)
	b.Strip(req)
	if req.URL.RawQuery != "" {
		t.Fatalf("Strip left %q", req.URL.RawQuery)
	}
	if err := b.Apply(req); err != nil {
		t.Fatal(err)
	}
	if req.URL.RawQuery != "key="+url.QueryEscape(secretKey) {
		t.Fatalf("Apply query = %q", req.URL.RawQuery)
	}
	assertNoSecret(t, fmtAll(b))
}

func wantOnly(t *testing.T, req *http.Request, name, value string) {
	t.Helper()
	var got []string
	for k, vs := range req.Header {
		if strings.EqualFold(k, name) {
			got = append(got, vs...)
		}
	}
	if len(got) != 1 || got[0] != value {
		t.Fatalf("%s = %q, want exactly [%q]", name, got, value)
	}
}

func wantAbsent(t *testing.T, req *http.Request, name string) {
	t.Helper()
	for k, vs := range req.Header {
		if strings.EqualFold(k, name) {
			t.Fatalf("%s still present as %s: %q", name, k, vs)
		}
	}
}
