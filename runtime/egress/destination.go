package egress

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Destination is one allowed scheme, host pattern and port. Host is lowercase
// without a trailing dot; "*.example.com" matches exactly one extra label
// (a.example.com, not example.com or a.b.example.com). An IP host is stored in
// its canonical text form.
type Destination struct {
	Scheme string // "http" or "https"
	Host   string
	Port   string // decimal, never empty
}

// String returns the destination as scheme://host:port.
func (d Destination) String() string {
	return d.Scheme + "://" + net.JoinHostPort(d.Host, d.Port)
}

// ParseDestination parses a manifest host entry or an operator base URL.
//
// Host form (manifest "hosts"): "api.github.com" means https on port 443,
// "api.example.com:8443" another port, "*.atlassian.net" one extra label.
// IP literals are refused in host form. URL form ("https://ghe.corp",
// "http://127.0.0.1:8080", operator configured) keeps its scheme and port and
// may name an IP address, but not a wildcard.
func ParseDestination(s string) (Destination, error) {
	var (
		d   Destination
		err error
	)
	if strings.Contains(s, "://") {
		d, err = parseURLDestination(s)
	} else {
		d, err = parseHostDestination(s)
	}
	if err != nil {
		return Destination{}, fmt.Errorf("egress: destination %q: %w", s, err)
	}
	return d, nil
}

func parseHostDestination(s string) (Destination, error) {
	switch {
	case s == "":
		return Destination{}, fmt.Errorf("empty")
	case strings.Contains(s, "@"):
		return Destination{}, fmt.Errorf("userinfo is not allowed")
	case strings.ContainsAny(s, "?#"):
		return Destination{}, fmt.Errorf("query and fragment are not allowed")
	}
	hostport, path, _ := strings.Cut(s, "/")
	if path != "" {
		return Destination{}, fmt.Errorf("a path is not allowed in a host pattern")
	}
	if strings.HasPrefix(hostport, "[") || strings.Count(hostport, ":") > 1 {
		return Destination{}, fmt.Errorf("IP literals are only allowed in URL form (http://addr:port)")
	}
	host, port := hostport, "443"
	if h, p, found := strings.Cut(hostport, ":"); found {
		host = h
		if port, found = canonicalPort(p); !found {
			return Destination{}, fmt.Errorf("invalid port %q", p)
		}
	}
	host = normalizeHost(host)
	if _, err := netip.ParseAddr(host); err == nil {
		return Destination{}, fmt.Errorf("IP literals are only allowed in URL form (http://addr:port)")
	}
	if base, ok := strings.CutPrefix(host, "*."); ok {
		if err := checkHostName(base); err != nil {
			return Destination{}, err
		}
		if !strings.Contains(base, ".") {
			return Destination{}, fmt.Errorf("a wildcard needs at least two labels after \"*.\"")
		}
	} else if host == "*" {
		return Destination{}, fmt.Errorf("a bare \"*\" is not allowed")
	} else if err := checkHostName(host); err != nil {
		return Destination{}, err
	}
	return Destination{Scheme: "https", Host: host, Port: port}, nil
}

func parseURLDestination(s string) (Destination, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Destination{}, fmt.Errorf("not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return Destination{}, fmt.Errorf("scheme must be http or https")
	case u.User != nil:
		return Destination{}, fmt.Errorf("userinfo is not allowed")
	case u.Opaque != "" || u.Host == "":
		return Destination{}, fmt.Errorf("missing host")
	case u.Path != "" && u.Path != "/":
		return Destination{}, fmt.Errorf("a path is not allowed")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return Destination{}, fmt.Errorf("query and fragment are not allowed")
	}
	port, ok := schemePort(u)
	if !ok {
		return Destination{}, fmt.Errorf("invalid port %q", u.Port())
	}
	host := normalizeHost(u.Hostname())
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Destination{}, fmt.Errorf("IPv6 zones are not allowed")
		}
		return Destination{Scheme: u.Scheme, Host: a.String(), Port: port}, nil
	}
	if strings.Contains(host, "*") {
		return Destination{}, fmt.Errorf("wildcards are not allowed in URL form")
	}
	if err := checkHostName(host); err != nil {
		return Destination{}, err
	}
	return Destination{Scheme: u.Scheme, Host: host, Port: port}, nil
}

// checkHostName accepts dot-separated labels of [a-z0-9_-] (not starting or
// ending with '-') whose last label is not numeric, so "127.1" or "0x7f.1"
// cannot stand in for an IP literal.
func checkHostName(host string) error {
	if host == "" || len(host) > 253 {
		return fmt.Errorf("invalid host name length")
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("empty or over-long label in host name")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("a label may not start or end with '-'")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c == '*' {
				return fmt.Errorf("a wildcard must be the whole first label (\"*.example.com\")")
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("invalid character %q in host name", c)
			}
		}
	}
	if looksNumeric(labels[len(labels)-1]) {
		return fmt.Errorf("host name looks like an IP address")
	}
	return nil
}

// looksNumeric reports whether a last label would make a URL parser treat the
// host as an IPv4 address: all decimal digits, or 0x followed by hex digits.
func looksNumeric(label string) bool {
	digits := strings.TrimLeft(label, "0123456789")
	if digits == "" {
		return true
	}
	if hex, ok := strings.CutPrefix(label, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return false
}

// canonicalPort parses a decimal port 1..65535 and returns it without
// leading zeros.
func canonicalPort(p string) (string, bool) {
	if p == "" || len(p) > 5 || strings.Trim(p, "0123456789") != "" {
		return "", false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", false
	}
	return strconv.Itoa(n), true
}

// schemePort returns u's port, or the scheme's default when none is written.
func schemePort(u *url.URL) (string, bool) {
	if p := u.Port(); p != "" {
		return canonicalPort(p)
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", false
	}
	switch u.Scheme {
	case "https":
		return "443", true
	case "http":
		return "80", true
	}
	return "", false
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Policy is the set of destinations one plugin call may reach. The zero
// Policy allows nothing.
type Policy struct {
	Allow []Destination
	// Internal are destinations of Allow that the operator placed inside
	// the network (an integration's <NAME>_BASE_URL naming a GitHub
	// Enterprise): the addresses their host resolves to are exempt from the
	// address rule, except link-local, metadata, multicast, broadcast and
	// unspecified ones, which stay refused. The exemption covers only these
	// destinations of this policy, never another host that resolves to the
	// same address.
	Internal []Destination
}

// Allows reports whether u's scheme, host and port match one destination.
// Hosts compare case-insensitively with a trailing dot removed; a missing port
// is the scheme's default.
func (p Policy) Allows(u *url.URL) bool { return anyMatches(p.Allow, u) }

// internal reports whether u addresses one of p's Internal destinations.
func (p Policy) internal(u *url.URL) bool { return anyMatches(p.Internal, u) }

// anyMatches reports whether u's scheme, host and port match one of ds.
func anyMatches(ds []Destination, u *url.URL) bool {
	t, ok := targetOf(u)
	if !ok {
		return false
	}
	for _, d := range ds {
		if d.Scheme == t.Scheme && d.Port == t.Port && hostMatches(d.Host, t.Host) {
			return true
		}
	}
	return false
}

// targetOf normalizes u to the Destination it addresses.
func targetOf(u *url.URL) (Destination, bool) {
	if u == nil {
		return Destination{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Destination{}, false
	}
	port, ok := schemePort(&url.URL{Scheme: scheme, Host: u.Host})
	host := normalizeHost(u.Hostname())
	if !ok || host == "" {
		return Destination{}, false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	return Destination{Scheme: scheme, Host: host, Port: port}, true
}

func hostMatches(pattern, host string) bool {
	suffix, wildcard := strings.CutPrefix(pattern, "*")
	if !wildcard {
		return pattern == host
	}
	label, ok := strings.CutSuffix(host, suffix)
	return ok && label != "" && !strings.Contains(label, ".")
}
