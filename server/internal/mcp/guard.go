package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostGuard refuses requests whose Host or Origin names a host other than
// the public URL's host or loopback. It stops DNS rebinding: a page on an
// attacker's domain that resolves to this server still sends the attacker's
// host name.
type hostGuard struct {
	allowed map[string]bool // lower-case host names without port
}

func newHostGuard(publicURL string) (*hostGuard, error) {
	u, err := url.Parse(publicURL)
	if err != nil {
		return nil, err
	}
	g := &hostGuard{allowed: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	if h := u.Hostname(); h != "" {
		g.allowed[strings.ToLower(h)] = true
	}
	return g, nil
}

// check returns "" for an allowed request, or why it is refused.
func (g *hostGuard) check(r *http.Request) string {
	if !g.allowedHost(r.Host) {
		return "Host " + quote(r.Host) + " is not this server"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || !g.allowedHost(u.Host) {
		return "Origin " + quote(origin) + " may not call this server"
	}
	return ""
}

func (g *hostGuard) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" {
		return false
	}
	if g.allowed[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
