package proxy

import (
	"net/http"
	"net/textproto"
	"strings"
)

// hopByHop are the headers that describe one connection, not the message
// (RFC 9110, section 7.6.1), plus the proxy ones; they are never forwarded
// in either direction.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Keep-Alive":          true,
	"Proxy-Connection":    true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// requestOnlyDropped are client headers that never go upstream: Host is the
// upstream's, Content-Length is set from the body, Expect is handled by each
// hop itself, and the forwarding headers would describe Workbench's hop. The
// credential layer strips Authorization, Cookie and the API-key header.
var requestOnlyDropped = map[string]bool{
	"Host":              true,
	"Content-Length":    true,
	"Expect":            true,
	"Forwarded":         true,
	"X-Forwarded-For":   true,
	"X-Forwarded-Host":  true,
	"X-Forwarded-Proto": true,
	"X-Real-Ip":         true,
}

// responseOnlyDropped are upstream headers the client never gets: cookies
// and transport policies would apply to Workbench's origin, not the
// upstream's, and Content-Length is set from the body.
var responseOnlyDropped = map[string]bool{
	"Set-Cookie":                true,
	"Set-Cookie2":               true,
	"Strict-Transport-Security": true,
	"Alt-Svc":                   true,
	"Content-Length":            true,
}

// connectionNamed returns the header names a Connection header lists.
func connectionNamed(values []string) map[string]bool {
	var named map[string]bool
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				if named == nil {
					named = map[string]bool{}
				}
				named[textproto.CanonicalMIMEHeaderKey(name)] = true
			}
		}
	}
	return named
}

// forwardable reports whether a header (canonical name) of a message may
// cross the proxy; extra are the message's own request- or response-only
// exclusions and named those its Connection header lists.
func forwardable(name string, extra, named map[string]bool) bool {
	return !hopByHop[name] && !extra[name] && !named[name] && !strings.HasPrefix(name, "Proxy-")
}

// filterResponse copies the forwardable headers of an upstream response.
func filterResponse(h http.Header, add func(name, value string)) {
	named := connectionNamed(h["Connection"])
	for name, values := range h {
		if !forwardable(name, responseOnlyDropped, named) {
			continue
		}
		for _, v := range values {
			add(name, v)
		}
	}
}
