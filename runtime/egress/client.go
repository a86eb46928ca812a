package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/workbench-dev/workbench/failure"
)

// Resolver looks up a host's addresses; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures a Client. The zero value is the production default.
type Options struct {
	// AllowPrivate lifts the address rule entirely (EGRESS_ALLOW_PRIVATE=1),
	// link-local and metadata addresses included, for every caller: for
	// development and tests only. An operator's service inside the network
	// is reached through Policy.Internal instead.
	AllowPrivate bool
	// AllowAddrs are exact addresses exempt from the address rule, trusted
	// by the operator (an internal GitHub Enterprise, a test fake).
	AllowAddrs []netip.AddrPort
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// MaxRedirects is how many redirects one request may follow; 0 means 10
	// and a negative value means none.
	MaxRedirects int
	// DialTimeout bounds name resolution and each connection attempt;
	// 0 means 10 seconds.
	DialTimeout time.Duration
}

// Client performs plugin egress. It holds one connection pool; create one per
// host process and share it. It is safe for concurrent use.
type Client struct {
	resolver     Resolver
	allowPrivate bool
	allowAddrs   map[netip.AddrPort]bool
	maxRedirects int
	dialTimeout  time.Duration
	// dialAddr connects to one already-checked ip:port; tests replace it to
	// observe every connection attempt.
	dialAddr func(ctx context.Context, network, address string) (net.Conn, error)
	// http dials with DialContext; internalHTTP dials with DialInternal and
	// carries only requests to a Policy.Internal destination, so no other
	// request reuses a connection that the exemption allowed.
	http, internalHTTP *http.Client
}

// NewClient returns a Client configured by o.
func NewClient(o Options) *Client {
	c := &Client{
		resolver:     o.Resolver,
		allowPrivate: o.AllowPrivate,
		allowAddrs:   make(map[netip.AddrPort]bool, len(o.AllowAddrs)),
		maxRedirects: o.MaxRedirects,
		dialTimeout:  o.DialTimeout,
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	for _, ap := range o.AllowAddrs {
		c.allowAddrs[ap] = true
	}
	switch {
	case c.maxRedirects == 0:
		c.maxRedirects = 10
	case c.maxRedirects < 0:
		c.maxRedirects = 0
	}
	if c.dialTimeout <= 0 {
		c.dialTimeout = 10 * time.Second
	}
	c.dialAddr = (&net.Dialer{Timeout: c.dialTimeout}).DialContext
	c.http = newHTTPClient(c.DialContext)
	c.internalHTTP = newHTTPClient(c.DialInternal)
	return c
}

// newHTTPClient returns an HTTP client that dials with dial and never
// follows redirects (Do follows them itself).
func newHTTPClient(dial func(ctx context.Context, network, address string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // never route through an environment proxy: it would bypass the address rule
			DialContext:            dial,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           256,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxResponseHeaderBytes: 1 << 20,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Close closes idle pooled connections. Requests in flight are not affected.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.internalHTTP.CloseIdleConnections()
}

// DialContext connects to address (host:port) under the address rule: the
// host is resolved with the client's Resolver, every refused address is
// skipped, and the connection goes to a checked address, never to a second
// resolution. When every address is refused it returns an *Error with code
// EGRESS_DENIED. It does not apply a Policy; a streaming proxy can use it as
// its transport's dialer.
func (c *Client) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return c.dial(ctx, network, address, false)
}

// DialInternal is DialContext for a destination the operator placed inside
// the network (Policy.Internal): the host's loopback, private, CGNAT and
// reserved addresses may be dialed, link-local, metadata, multicast,
// broadcast and unspecified ones may not. Use it only for such a
// destination, through a transport that carries nothing else, so that no
// other request reuses its connections.
func (c *Client) DialInternal(ctx context.Context, network, address string) (net.Conn, error) {
	return c.dial(ctx, network, address, true)
}

// dial connects to address under the address rule, with the Policy.Internal
// exemption when internal is set.
func (c *Client) dial(ctx context.Context, network, address string, internal bool) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, newError(failure.InvalidRequest, fmt.Sprintf("network %q is not allowed", network), nil)
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, newError(failure.InvalidRequest, fmt.Sprintf("invalid address %q", address), nil)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, newError(failure.InvalidRequest, fmt.Sprintf("invalid port in %q", address), nil)
	}
	addrs, literal, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var (
		permitted []netip.AddrPort
		reason    string
	)
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		if why := c.refusal(ap, internal); why != "" {
			if reason == "" {
				reason = why
			}
			continue
		}
		permitted = append(permitted, ap)
	}
	if len(permitted) == 0 {
		switch {
		case reason == "":
			return nil, newError(failure.UpstreamUnreachable, fmt.Sprintf("%s has no addresses", host), nil)
		case literal:
			return nil, newError(failure.EgressDenied, "refused "+reason, nil)
		default:
			return nil, newError(failure.EgressDenied, fmt.Sprintf("%s resolves to %s", host, reason), nil)
		}
	}
	var lastErr error
	for _, ap := range permitted {
		conn, err := c.dialAddr(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// resolve returns host's addresses; an IP literal is returned as is without
// asking the resolver.
func (c *Client) resolve(ctx context.Context, host string) (addrs []netip.Addr, literal bool, err error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout)
	defer cancel()
	addrs, err = c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, newError(failure.UpstreamTimeout, fmt.Sprintf("resolving %s timed out", host), ctx.Err())
		}
		return nil, false, newError(failure.UpstreamUnreachable, fmt.Sprintf("cannot resolve %s", host), nil)
	}
	return addrs, false, nil
}

// refusal returns why ap may not be dialed, or "" when it may; internal
// applies the Policy.Internal exemption.
func (c *Client) refusal(ap netip.AddrPort, internal bool) string {
	if c.allowPrivate || c.allowAddrs[ap] {
		return ""
	}
	kind, reason := refusal(ap.Addr())
	if internal && !alwaysRefused[kind] {
		return ""
	}
	return reason
}
