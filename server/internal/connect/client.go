package connect

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/workbench-dev/workbench/runtime/egress"
)

// Deadlines of provider requests.
const (
	providerTimeout     = 30 * time.Second
	providerDialTimeout = 10 * time.Second
)

// NewProviderClient returns the HTTP client that talks to OAuth providers.
// It refuses loopback, private, link-local and other internal addresses
// after resolving a host (the address rule of runtime/egress) and dials the
// address it checked; allowLoopback (EGRESS_ALLOW_PRIVATE) lets it reach
// loopback addresses and nothing else internal. It follows no redirects,
// uses no environment proxy and gives up after 30 s.
func NewProviderClient(allowLoopback bool) *http.Client {
	d := &guardedDialer{allowLoopback: allowLoopback, dialer: &net.Dialer{Timeout: providerDialTimeout}}
	return &http.Client{
		Timeout: providerTimeout,
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            d.DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           16,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  providerTimeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// guardedDialer resolves a host, drops every address the rule refuses and
// dials one of the rest.
type guardedDialer struct {
	allowLoopback bool
	dialer        *net.Dialer
}

// DialContext implements the transport's dialer.
func (d *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("invalid address %q", address)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, providerDialTimeout)
		addrs, err = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s", host)
		}
	}
	var refused error
	for _, a := range addrs {
		a = a.Unmap()
		if err := egress.CheckAddr(a); err != nil && !(d.allowLoopback && a.IsLoopback()) {
			refused = err
			continue
		}
		return d.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
	}
	if refused == nil {
		return nil, fmt.Errorf("%s has no addresses", host)
	}
	return nil, fmt.Errorf("%s: %w", host, refused)
}

// isLoopbackHost reports whether host is localhost or a loopback IP literal.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// randomString returns n random bytes in base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}
