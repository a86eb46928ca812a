package credential

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// MaxBundleCookies caps how many cookies a bundle keeps from responses:
// cookies set by a response past it are dropped, replacements are not.
const MaxBundleCookies = 100

// maxCookieBytes caps one received cookie's name and value together.
const maxCookieBytes = 4096

// attachCookies adds the cookies that may go to req's host: the host must be
// one of the scheme's cookie domains and domain-match the cookie's Domain
// (RFC 6265 section 5.1.3), the cookie's Path must path-match the request path,
// it must not have expired, and Secure cookies go only over https. Host-only
// cookies (empty Domain) match no host, since the host they came from is not
// recorded.
func attachCookies(req *http.Request, allowed []string, cookies []*http.Cookie) {
	host := normalizeHost(req.URL.Hostname())
	if host == "" || !hostInCookieDomains(host, allowed) {
		return
	}
	now := time.Now()
	for _, c := range cookies {
		switch {
		case c == nil || c.Name == "" || c.Domain == "":
		case !domainMatch(host, normalizeHost(strings.TrimPrefix(c.Domain, "."))):
		case expired(c, now):
		case c.Secure && req.URL.Scheme != "https":
		case !pathMatch(req.URL.Path, c.Path):
		default:
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value, Quoted: c.Quoted})
		}
	}
}

// hostInCookieDomains reports whether host is covered by the scheme's list:
// "example.com" covers that host only, ".example.com" also its subdomains.
func hostInCookieDomains(host string, allowed []string) bool {
	for _, d := range allowed {
		if sub, ok := strings.CutPrefix(d, "."); ok {
			if domainMatch(host, normalizeHost(sub)) {
				return true
			}
		} else if host == normalizeHost(d) {
			return true
		}
	}
	return false
}

// domainMatch is RFC 6265 domain-match: identical, or host ends with
// "."+domain and is a name rather than an IP address.
func domainMatch(host, domain string) bool {
	if domain == "" {
		return false
	}
	if host == domain {
		return true
	}
	return strings.HasSuffix(host, "."+domain) && net.ParseIP(host) == nil
}

// pathMatch is RFC 6265 path-match; an empty cookie path matches every path.
func pathMatch(reqPath, cookiePath string) bool {
	if cookiePath == "" || cookiePath == "/" {
		return true
	}
	if reqPath == "" {
		reqPath = "/"
	}
	if !strings.HasPrefix(reqPath, cookiePath) {
		return false
	}
	return len(reqPath) == len(cookiePath) || strings.HasSuffix(cookiePath, "/") || reqPath[len(cookiePath)] == '/'
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isCookieDomain reports whether d (with an optional leading dot) looks like a
// host name: dot-separated labels of letters, digits, '-' and '_'.
func isCookieDomain(d string) bool {
	d = strings.TrimPrefix(d, ".")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// expired reports whether c is deleted (Max-Age < 0) or past its expiry.
func expired(c *http.Cookie, now time.Time) bool {
	return c.MaxAge < 0 || !c.Expires.IsZero() && !c.Expires.After(now)
}

// ReceivedCookies returns the cookies that the Set-Cookie lines of a
// response from u set for a cookie-mode scheme's bundle; other modes, and
// hosts outside the scheme's cookie domains, give none. A cookie is kept
// only for a domain that u's host domain-matches and that lies inside the
// cookie domains; one without a Domain attribute is kept for u's host. A
// missing Path becomes the default path of u (RFC 6265 section 5.1.4),
// Max-Age becomes an absolute Expires, and a cookie deleted by Max-Age=0 or
// a past Expires is returned with MaxAge -1 so that MergeCookies removes
// it. Secure cookies sent over http and cookies over maxCookieBytes are
// ignored.
func (s Scheme) ReceivedCookies(u *url.URL, h http.Header, now time.Time) []*http.Cookie {
	if s.Mode != ModeCookie || u == nil {
		return nil
	}
	host := normalizeHost(u.Hostname())
	if host == "" || !hostInCookieDomains(host, s.CookieDomains) {
		return nil
	}
	var out []*http.Cookie
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil || len(c.Name)+len(c.Value) > maxCookieBytes || c.Secure && u.Scheme != "https" {
			continue
		}
		domain := host
		if c.Domain != "" {
			domain = normalizeHost(strings.TrimPrefix(c.Domain, "."))
			if !domainMatch(host, domain) || !hostInCookieDomains(domain, s.CookieDomains) {
				continue
			}
		}
		kept := &http.Cookie{Name: c.Name, Value: c.Value, Quoted: c.Quoted, Domain: domain, Path: c.Path,
			Secure: c.Secure, HttpOnly: c.HttpOnly, SameSite: c.SameSite, Partitioned: c.Partitioned}
		if !strings.HasPrefix(kept.Path, "/") {
			kept.Path = defaultPath(u.Path)
		}
		switch {
		case c.MaxAge < 0:
			kept.MaxAge = -1
		case c.MaxAge > 0:
			kept.Expires = now.Add(time.Duration(c.MaxAge) * time.Second)
		case !c.Expires.IsZero():
			kept.Expires = c.Expires
			if !c.Expires.After(now) {
				kept.MaxAge = -1
			}
		}
		out = append(out, kept)
	}
	return out
}

// defaultPath is RFC 6265's default-path of a request path: up to, not
// including, its last '/', or "/".
func defaultPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// MergeCookies returns stored updated with received (from
// ReceivedCookies): a received cookie replaces every stored one with the
// same name, domain and path, a deleted or expired one only removes them,
// and stored cookies that have expired are dropped. A new cookie is not
// added once the bundle holds MaxBundleCookies. stored is not modified.
func MergeCookies(stored, received []*http.Cookie, now time.Time) []*http.Cookie {
	out := make([]*http.Cookie, 0, len(stored)+len(received))
	for _, c := range stored {
		if c != nil && !expired(c, now) {
			out = append(out, c)
		}
	}
	for _, r := range received {
		n := len(out)
		out = slices.DeleteFunc(out, func(c *http.Cookie) bool { return sameCookie(c, r) })
		if expired(r, now) || len(out) == n && len(out) >= MaxBundleCookies {
			continue
		}
		out = append(out, r)
	}
	return out
}

// sameCookie reports whether a and b have the same name, domain (without a
// leading dot) and path (empty meaning "/").
func sameCookie(a, b *http.Cookie) bool {
	path := func(c *http.Cookie) string {
		if c.Path == "" {
			return "/"
		}
		return c.Path
	}
	return a.Name == b.Name && path(a) == path(b) &&
		normalizeHost(strings.TrimPrefix(a.Domain, ".")) == normalizeHost(strings.TrimPrefix(b.Domain, "."))
}
