package hostguard

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Hosts is a set of host names a request may name, compared without port
// and ignoring case.
type Hosts struct {
	names    map[string]bool
	loopback bool // every loopback name and address too
}

// App returns the hosts of the app: the host of publicURL (an absolute
// http(s) URL), localhost and every loopback address.
func App(publicURL string) (*Hosts, error) {
	h, err := Only(publicURL)
	if err != nil {
		return nil, err
	}
	h.names["localhost"] = true
	h.loopback = true
	return h, nil
}

// Only returns exactly the host of rawURL, an absolute http(s) URL.
func Only(rawURL string) (*Hosts, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", rawURL)
	}
	return &Hosts{names: map[string]bool{Hostname(u.Host): true}}, nil
}

// Hostname returns the host name of a Host header value or URL host: without
// port and brackets, lower-cased.
func Hostname(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// Admits reports whether a request may name hostport (a Host header value).
func (h *Hosts) Admits(hostport string) bool {
	host := Hostname(hostport)
	if host == "" {
		return false
	}
	if h.names[host] {
		return true
	}
	ip := net.ParseIP(host)
	return h.loopback && ip != nil && ip.IsLoopback()
}

// Check returns "" when both the Host header value and the Origin header
// value (empty when the request has none) name admitted hosts, or else why
// the request is refused.
func (h *Hosts) Check(host, origin string) string {
	if !h.Admits(host) {
		return "Host " + quote(host) + " is not this server"
	}
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || !h.Admits(u.Host) {
		return "Origin " + quote(origin) + " may not call this server"
	}
	return ""
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
