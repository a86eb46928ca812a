package credential

import (
	"net"
	"net/http"
	"strings"
	"time"
)

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
		case c.MaxAge < 0 || !c.Expires.IsZero() && !c.Expires.After(now):
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
