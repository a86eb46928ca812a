package proxy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Route is where proxied requests start: SERVER_PUBLIC_URL + Route +
// <integration>/<path>.
const Route = "/c/"

// errPath is wrapped by every refused request path.
var errPath = errors.New("invalid path")

// splitTarget splits a raw request target (as sent on the request line)
// into the integration and the raw path and query after it. Only
// origin-form targets under Route are accepted.
func splitTarget(raw string) (integration, rawPath, rawQuery string, err error) {
	if !strings.HasPrefix(raw, Route) {
		return "", "", "", fmt.Errorf("%w: the request target must be an origin-form path under %s (absolute-form and other targets are refused)", errPath, Route)
	}
	rest := raw[len(Route):]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	rest, rawQuery, _ = strings.Cut(rest, "?")
	integration, rawPath, found := strings.Cut(rest, "/")
	if found {
		rawPath = "/" + rawPath
	}
	if !isName(integration) {
		return "", "", "", fmt.Errorf("%w: %q is not an integration name", errPath, truncate(integration, 64))
	}
	return integration, rawPath, rawQuery, nil
}

// isName reports whether s looks like an integration name.
func isName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// checkPath validates the raw, percent-encoded path after the integration
// ("" or starting with '/') and returns its decoded form. It refuses every
// way to climb out of the base URL's path, rather than normalising them:
// empty segments, segments that decode (once or twice) to "." or ".." (also
// with ";parameters" after them), encoded or literal backslashes, encoded slashes, control characters and
// malformed escapes.
func checkPath(rawPath string) (string, error) {
	if rawPath == "" || rawPath == "/" {
		return rawPath, nil
	}
	if strings.ContainsRune(rawPath, '\\') {
		return "", fmt.Errorf("%w: a backslash is not allowed in the path", errPath)
	}
	segments := strings.Split(rawPath[1:], "/")
	for i, seg := range segments {
		if seg == "" {
			if i == len(segments)-1 {
				continue // a trailing slash
			}
			return "", fmt.Errorf("%w: empty path segment (\"//\")", errPath)
		}
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", fmt.Errorf("%w: malformed percent-encoding in %q", errPath, truncate(seg, 64))
		}
		if strings.ContainsAny(dec, "/\\") {
			return "", fmt.Errorf("%w: an encoded slash or backslash (%%2F, %%5C) is not allowed in a path segment", errPath)
		}
		for j := 0; j < len(dec); j++ {
			if dec[j] < 0x20 || dec[j] == 0x7f {
				return "", fmt.Errorf("%w: control characters are not allowed in the path", errPath)
			}
		}
		if isDots(dec) {
			return "", fmt.Errorf("%w: %q segments are not allowed", errPath, dec)
		}
		if twice, err := url.PathUnescape(dec); err == nil && (isDots(twice) || strings.ContainsAny(twice, "/\\")) {
			return "", fmt.Errorf("%w: double-encoded %q is not allowed", errPath, truncate(seg, 64))
		}
	}
	return url.PathUnescape(rawPath)
}

// isDots reports whether a decoded segment is "." or "..", alone or followed
// by ";parameters": upstreams that strip path parameters before normalising
// (Tomcat, Jetty, Spring) read "..;x" as "..".
func isDots(s string) bool {
	s, _, _ = strings.Cut(s, ";")
	return s == "." || s == ".."
}

// upstreamURL joins the base URL with a checked path and the raw query, and
// verifies that the result still addresses the base's scheme, host and path.
func upstreamURL(base *url.URL, rawPath, path, rawQuery string) (*url.URL, error) {
	basePath := strings.TrimSuffix(base.EscapedPath(), "/")
	u := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: strings.TrimSuffix(base.Path, "/") + path,
		RawPath: basePath + rawPath, RawQuery: rawQuery}
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	check, err := url.Parse(u.String())
	if err != nil || check.Scheme != base.Scheme || check.Host != base.Host || check.User != nil ||
		!strings.HasPrefix(check.EscapedPath(), basePath+"/") && check.EscapedPath() != basePath {
		return nil, fmt.Errorf("%w: the path does not stay under the integration's base URL", errPath)
	}
	return u, nil
}

// auditPath is what the audit log keeps of a request: the upstream path and
// the query's parameter names, never their values.
func auditPath(path, rawQuery string) string {
	if path == "" {
		path = "/"
	}
	if rawQuery == "" {
		return path
	}
	var b strings.Builder
	b.WriteString(path)
	sep := byte('?')
	for _, part := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		name, _, _ := strings.Cut(part, "=")
		if dec, err := url.QueryUnescape(name); err == nil {
			name = dec
		}
		b.WriteByte(sep)
		b.WriteString(url.QueryEscape(name))
		sep = '&'
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
