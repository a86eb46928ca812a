// Package clientaddr finds the address a request came from, behind the
// reverse proxies the operator trusts (TRUSTED_PROXIES), and the form of it
// that rate limits count by. It must not trust a forwarding header from a
// peer that is not a trusted proxy: anyone can send one.
package clientaddr

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// MaxForwardedHops bounds the X-Forwarded-For entries read from one request.
const MaxForwardedHops = 32

// Resolver finds a request's client address. The zero Resolver trusts no
// proxy: the client is the connection's peer.
type Resolver struct {
	trusted []netip.Prefix
}

// Parse returns a Resolver trusting the comma-separated addresses and CIDR
// prefixes in list (TRUSTED_PROXIES, e.g. "10.0.0.0/8, 127.0.0.1").
func Parse(list string) (Resolver, error) {
	var r Resolver
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return Resolver{}, fmt.Errorf("clientaddr: %q is neither an IP address nor a CIDR prefix", part)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		r.trusted = append(r.trusted, p.Masked())
	}
	return r, nil
}

// Of returns the client address of a request: the connection's peer, or,
// when the peer is a trusted proxy, the rightmost X-Forwarded-For entry that
// is not itself a trusted proxy (entries to its left were written by the
// client and prove nothing).
func (r Resolver) Of(c *fiber.Ctx) netip.Addr {
	var peer netip.Addr
	if tcp, ok := c.Context().RemoteAddr().(*net.TCPAddr); ok {
		peer = tcp.AddrPort().Addr().Unmap()
	}
	if !r.trusts(peer) {
		return peer
	}
	var hops []string
	for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(v), ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-MaxForwardedHops; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return client // a garbled hop: the last proxy that wrote a good one is all we know
		}
		client = a.Unmap()
		if !r.trusts(client) {
			return client
		}
	}
	return client
}

// Key returns the client address of a request in the form rate limits
// count by (see KeyOf).
func (r Resolver) Key(c *fiber.Ctx) string { return KeyOf(r.Of(c)) }

// KeyOf returns an address as rate limits count it: an IPv4 address as it
// is, an IPv6 address by its /64, since one host is usually given a whole
// /64 and could otherwise count as 2^64 clients.
func KeyOf(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

func (r Resolver) trusts(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
