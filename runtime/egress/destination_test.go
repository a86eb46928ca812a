package egress

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
)

func TestParseDestination(t *testing.T) {
	valid := []struct {
		in   string
		want Destination
	}{
		{"api.github.com", Destination{"https", "api.github.com", "443"}},
		{"API.GitHub.com.", Destination{"https", "api.github.com", "443"}},
		{"api.github.com/", Destination{"https", "api.github.com", "443"}},
		{"api.example.com:8443", Destination{"https", "api.example.com", "8443"}},
		{"api.example.com:08443", Destination{"https", "api.example.com", "8443"}},
		{"*.atlassian.net", Destination{"https", "*.atlassian.net", "443"}},
		{"*.eu.example.com:444", Destination{"https", "*.eu.example.com", "444"}},
		{"localhost", Destination{"https", "localhost", "443"}},
		{"my_host.example.com", Destination{"https", "my_host.example.com", "443"}},
		{"http://127.0.0.1:8080", Destination{"http", "127.0.0.1", "8080"}},
		{"http://127.0.0.1:8080/", Destination{"http", "127.0.0.1", "8080"}},
		{"https://ghe.corp", Destination{"https", "ghe.corp", "443"}},
		{"HTTPS://GHE.Corp.", Destination{"https", "ghe.corp", "443"}},
		{"http://ghe.corp", Destination{"http", "ghe.corp", "80"}},
		{"http://[::1]:9000", Destination{"http", "::1", "9000"}},
		{"http://[0:0:0:0:0:0:0:1]:9000", Destination{"http", "::1", "9000"}},
		{"http://[::ffff:127.0.0.1]", Destination{"http", "::ffff:127.0.0.1", "80"}},
	}
	for _, tt := range valid {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDestination(tt.in)
			if err != nil {
				t.Fatalf("ParseDestination(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseDestination(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}

	invalid := []struct{ in, want string }{
		{"", "empty"},
		{"*", "bare"},
		{"*.com", "at least two labels"},
		{"*.", "bare"},
		{"*..com", "empty or over-long label"},
		{"a.*.example.com", "whole first label"},
		{"*a.example.com", "whole first label"},
		{"api*.example.com", "whole first label"},
		{"*.*.example.com", "whole first label"},
		{"127.0.0.1", "IP literals"},
		{"127.0.0.1:443", "IP literals"},
		{"::1", "IP literals"},
		{"[::1]:443", "IP literals"},
		{"[::1]", "IP literals"},
		{"127.1", "looks like an IP"},
		{"0x7f.1", "looks like an IP"},
		{"example.123", "looks like an IP"},
		{"user@api.github.com", "userinfo"},
		{"https://user:pw@api.github.com", "userinfo"},
		{"api.github.com/repos", "path"},
		{"api.github.com//", "path"},
		{"https://api.github.com/repos", "path"},
		{"api.github.com?x=1", "query"},
		{"https://api.github.com/?x=1", "query"},
		{"https://api.github.com/#frag", "query"},
		{"https://api.github.com?", "query"},
		{"api.github.com:", "invalid port"},
		{"api.github.com:0", "invalid port"},
		{"api.github.com:65536", "invalid port"},
		{"api.github.com:-1", "invalid port"},
		{"api.github.com:+443", "invalid port"},
		{"api.github.com:443x", "invalid port"},
		{"https://api.github.com:99999", "invalid port"},
		{"https://api.github.com:", "invalid port"},
		{"ftp://files.example.com", "scheme"},
		{"https://", "missing host"},
		{"https://*.example.com", "wildcards are not allowed"},
		{"http://[fe80::1%25eth0]:80", "zones"},
		{"api .github.com", "invalid character"},
		{"api..github.com", "empty or over-long label"},
		{"-api.github.com", "start or end"},
		{"bücher.de", "invalid character"},
		{strings.Repeat("a", 64) + ".com", "over-long label"},
		{strings.Repeat("abcdefgh.", 30) + "com", "length"},
		{"\x00.example.com", "invalid character"},
	}
	for _, tt := range invalid {
		t.Run("invalid/"+tt.in, func(t *testing.T) {
			got, err := ParseDestination(tt.in)
			if err == nil {
				t.Fatalf("ParseDestination(%q) = %+v, want error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseDestination(%q) error %q, want it to mention %q", tt.in, err, tt.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
				t.Fatalf("error %q does not name the input", err)
			}
		})
	}
}

func TestPolicy_Allows(t *testing.T) {
	p := Policy{Allow: []Destination{
		mustDest(t, "api.github.com"),
		mustDest(t, "*.atlassian.net"),
		mustDest(t, "api.example.com:8443"),
		mustDest(t, "http://127.0.0.1:8080"),
		mustDest(t, "http://[::1]:9000"),
	}}
	tests := []struct {
		url  string
		want bool
	}{
		{"https://api.github.com/repos/o/r", true},
		{"https://API.GITHUB.COM./repos", true},
		{"https://api.github.com:443/", true},
		{"https://api.github.com:0443/", true},
		{"http://api.github.com/", false},       // scheme must match
		{"https://api.github.com:8443/", false}, // port must match
		{"https://github.com/", false},          // undeclared
		{"https://evilapi.github.com/", false},  // not a suffix match
		{"https://api.github.com.evil.com/", false},
		{"https://jira.atlassian.net/rest", true}, // one extra label
		{"https://JIRA.Atlassian.NET/", true},
		{"https://atlassian.net/", false},     // wildcard needs a label
		{"https://a.b.atlassian.net/", false}, // exactly one label
		{"https://.atlassian.net/", false},    // empty label
		{"https://api.example.com:8443/x", true},
		{"https://api.example.com/x", false},
		{"http://127.0.0.1:8080/x", true},
		{"http://127.0.0.1:8081/x", false},
		{"http://[::1]:9000/", true},
		{"http://[0::1]:9000/", true},
		{"http://[::ffff:127.0.0.1]:8080/", false}, // a different address form is a different destination
		{"ftp://api.github.com/", false},
		{"https:///path", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Allows(u); got != tt.want {
				t.Fatalf("Allows(%s) = %v, want %v", tt.url, got, tt.want)
			}
		})
	}
	if (Policy{}).Allows(&url.URL{Scheme: "https", Host: "api.github.com"}) {
		t.Fatal("the zero Policy allowed a request")
	}
	if p.Allows(nil) {
		t.Fatal("Allows(nil) = true")
	}
}

func mustDest(t testing.TB, s string) Destination {
	t.Helper()
	d, err := ParseDestination(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{
		"api.github.com", "api.example.com:8443", "*.atlassian.net", "http://127.0.0.1:8080",
		"https://ghe.corp", "http://[::1]:80/", "*", "*.com", "user@x.com", "x.com/a", "127.0.0.1", "https://x.com:0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDestination(s)
		if err != nil {
			if !strings.Contains(err.Error(), "egress: destination") {
				t.Fatalf("error %q lacks context", err)
			}
			return
		}
		if d.Scheme != "http" && d.Scheme != "https" {
			t.Fatalf("scheme %q", d.Scheme)
		}
		if d.Host == "" || d.Host != strings.ToLower(d.Host) || strings.HasSuffix(d.Host, ".") {
			t.Fatalf("host %q not normalized", d.Host)
		}
		if p, ok := canonicalPort(d.Port); !ok || p != d.Port {
			t.Fatalf("port %q not canonical", d.Port)
		}
		wildcard := strings.HasPrefix(d.Host, "*.")
		if strings.Contains(strings.TrimPrefix(d.Host, "*."), "*") {
			t.Fatalf("stray wildcard in %q", d.Host)
		}
		// Parsing the normalized form again gives the same destination.
		again := d.String()
		if wildcard {
			again = d.Host + ":" + d.Port
		}
		d2, err := ParseDestination(again)
		if err != nil || d2 != d {
			t.Fatalf("reparse of %q = %+v, %v; want %+v", again, d2, err, d)
		}
		// A policy made of d allows a URL addressing d.
		host := d.Host
		if wildcard {
			host = "x" + strings.TrimPrefix(host, "*")
		}
		u := &url.URL{Scheme: d.Scheme, Host: net.JoinHostPort(host, d.Port), Path: "/"}
		if !(Policy{Allow: []Destination{d}}).Allows(u) {
			t.Fatalf("policy %+v does not allow %s", d, u)
		}
	})
}
