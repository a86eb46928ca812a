package credential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

// cookieSummary is "name=value domain path" plus " deleted" or " until
// <unix seconds>", one per cookie, for comparing bundles.
func cookieSummary(cs []*http.Cookie) string {
	var parts []string
	for _, c := range cs {
		s := fmt.Sprintf("%s=%s %s %s", c.Name, c.Value, c.Domain, c.Path)
		switch {
		case c.MaxAge < 0:
			s += " deleted"
		case !c.Expires.IsZero():
			s += fmt.Sprintf(" until %d", c.Expires.Unix())
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func TestScheme_ReceivedCookies(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cookie := Scheme{Mode: ModeCookie, CookieDomains: []string{".example.com", "app.example.org"}}
	tests := []struct {
		name   string
		scheme Scheme
		url    string
		lines  []string
		want   string
	}{
		{"rotated session, host-only", cookie, "https://app.example.com/api/v1/items", []string{"sid=new; Path=/; HttpOnly; Secure"}, "sid=new app.example.com /"},
		{"domain cookie", cookie, "https://app.example.com/", []string{"sid=new; Domain=.example.com; Path=/"}, "sid=new example.com /"},
		{"default path", cookie, "https://app.example.com/api/v1/items", []string{"pref=1"}, "pref=1 app.example.com /api/v1"},
		{"max-age to expires", cookie, "https://app.example.com/", []string{"sid=new; Path=/; Max-Age=3600"}, fmt.Sprintf("sid=new app.example.com / until %d", now.Unix()+3600)},
		{"max-age zero deletes", cookie, "https://app.example.com/", []string{"sid=; Path=/; Max-Age=0"}, "sid= app.example.com / deleted"},
		{"past expires deletes", cookie, "https://app.example.com/", []string{"sid=x; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"}, "sid=x app.example.com / deleted"},
		{"exact cookie domain", cookie, "https://app.example.org/", []string{"sid=1; Path=/"}, "sid=1 app.example.org /"},

		{"host outside the cookie domains", cookie, "https://evil.test/", []string{"sid=evil; Path=/"}, ""},
		{"domain the host does not match", cookie, "https://app.example.com/", []string{"sid=evil; Domain=other.example.com; Path=/"}, ""},
		{"domain wider than the cookie domains", cookie, "https://app.example.org/", []string{"sid=evil; Domain=example.org; Path=/"}, ""},
		{"public suffix domain", cookie, "https://app.example.com/", []string{"sid=evil; Domain=com; Path=/"}, ""},
		{"secure over http", cookie, "http://app.example.com/", []string{"sid=new; Path=/; Secure"}, ""},
		{"oversized", cookie, "https://app.example.com/", []string{"big=" + strings.Repeat("a", maxCookieBytes) + "; Path=/"}, ""},
		{"malformed", cookie, "https://app.example.com/", []string{"=nameless", ""}, ""},
		{"oauth2 keeps none", Scheme{Mode: ModeOAuth2}, "https://app.example.com/", []string{"sid=1; Path=/"}, ""},
		{"apikey keeps none", Scheme{Mode: ModeAPIKey}, "https://app.example.com/", []string{"sid=1; Path=/"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got := tt.scheme.ReceivedCookies(u, http.Header{"Set-Cookie": tt.lines}, now)
			if s := cookieSummary(got); s != tt.want {
				t.Fatalf("ReceivedCookies = %q, want %q", s, tt.want)
			}
		})
	}
}

func TestMergeCookies(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	later := now.Add(time.Hour)
	stored := func() []*http.Cookie {
		return []*http.Cookie{
			{Name: "sid", Value: "old", Domain: ".example.com", Path: "/"},
			{Name: "csrf", Value: "c1", Domain: "app.example.com"},
			{Name: "stale", Value: "s", Domain: "app.example.com", Path: "/", Expires: now.Add(-time.Minute)},
		}
	}
	many := make([]*http.Cookie, MaxBundleCookies)
	for i := range many {
		many[i] = &http.Cookie{Name: fmt.Sprintf("c%d", i), Value: "v", Domain: "example.com", Path: "/"}
	}
	tests := []struct {
		name     string
		stored   []*http.Cookie
		received []*http.Cookie
		want     string
	}{
		{"rotation replaces", stored(), []*http.Cookie{{Name: "sid", Value: "new", Domain: "example.com", Path: "/", Expires: later}},
			fmt.Sprintf("csrf=c1 app.example.com ; sid=new example.com / until %d", later.Unix())},
		{"empty path is root", stored(), []*http.Cookie{{Name: "csrf", Value: "c2", Domain: "app.example.com", Path: "/"}},
			"sid=old .example.com /; csrf=c2 app.example.com /"},
		{"deletion removes", stored(), []*http.Cookie{{Name: "sid", Domain: "example.com", Path: "/", MaxAge: -1}},
			"csrf=c1 app.example.com "},
		{"other path is another cookie", stored(), []*http.Cookie{{Name: "sid", Value: "api", Domain: "example.com", Path: "/api"}},
			"sid=old .example.com /; csrf=c1 app.example.com ; sid=api example.com /api"},
		{"last of two wins", nil, []*http.Cookie{{Name: "a", Value: "1", Domain: "x.com", Path: "/"}, {Name: "a", Value: "2", Domain: "x.com", Path: "/"}},
			"a=2 x.com /"},
		{"new cookie past the cap is dropped", many, []*http.Cookie{{Name: "extra", Value: "v", Domain: "example.com", Path: "/"}},
			cookieSummary(many)},
		{"replacement past the cap is kept", many, []*http.Cookie{{Name: "c0", Value: "w", Domain: "example.com", Path: "/"}},
			cookieSummary(many[1:]) + "; c0=w example.com /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cookieSummary(tt.stored)
			got := MergeCookies(tt.stored, tt.received, now)
			if s := cookieSummary(got); s != tt.want {
				t.Fatalf("MergeCookies = %q\nwant %q", s, tt.want)
			}
			if cookieSummary(tt.stored) != before {
				t.Fatal("MergeCookies modified stored")
			}
		})
	}
}

func TestMemory_UpdateCookies(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := m.UpdateCookies(ctx, "u1", "app", nil); !errors.Is(err, failure.ErrNotConnected) {
		t.Fatalf("no connection: err = %v, want failure.ErrNotConnected", err)
	}
	m.Set("u1", "app", &Credential{Cookies: []*http.Cookie{{Name: "sid", Value: "old", Domain: "example.com", Path: "/"}}})
	received := []*http.Cookie{{Name: "sid", Value: "new", Domain: "example.com", Path: "/"}}
	if err := m.UpdateCookies(ctx, "u1", "app", received); err != nil {
		t.Fatal(err)
	}
	received[0].Value = "changed" // the stored bundle must not alias the caller's cookies
	got, err := m.Credential(ctx, "u1", "app")
	if err != nil || cookieSummary(got.Cookies) != "sid=new example.com /" {
		t.Fatalf("Credential = %v, %v; want the rotated cookie", cookieSummary(got.Cookies), err)
	}
}
