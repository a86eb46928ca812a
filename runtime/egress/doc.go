// Package egress is the only way out for plugins: an HTTP client that denies
// by default.
//
// Every request and every redirect hop must match the calling plugin's Policy
// (scheme, host pattern and port). Host names are resolved by the client's own
// dialer, which refuses loopback, private, link-local, multicast, CGNAT and
// other internal addresses and then dials the checked address itself, so a
// second DNS answer cannot redirect the connection.
//
// The address rule (CheckAddr) is a deny-list for IPv4, whose special-purpose
// ranges are few and stable, and an allow-list for IPv6: only global unicast
// (2000::/3) is reachable, minus the ranges inside it that are special
// (documentation, IETF protocol assignments). IPv6 forms that embed an IPv4
// address at a fixed place are unwrapped and the IPv4 address is checked:
// IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96 (RFC 6145),
// NAT64 64:ff9b::/96 and 6to4 2002::/16. Forms whose IPv4 address the host
// cannot read reliably are refused outright: Teredo 2001::/32 (the client
// address is obfuscated and the relay is chosen elsewhere) and local-use NAT64
// 64:ff9b:1::/48 (a network-specific layout).
//
// An operator's service inside the network (a GitHub Enterprise named by
// <NAME>_BASE_URL) is reached through Policy.Internal: only that policy's
// requests to that scheme, host and port may go to the loopback, private,
// CGNAT or reserved addresses the host resolves to, over a connection pool
// of their own (DialInternal), so no other request or plugin reuses those
// connections and another name resolving to the same address stays refused.
// Link-local, cloud metadata (169.254.169.254, fd00:ec2::254 and the like),
// multicast, broadcast and unspecified addresses are refused even there.
// Options.AllowPrivate (EGRESS_ALLOW_PRIVATE=1) lifts the whole rule for
// every caller and is for development and tests only. Redirects are followed by hand; a credential is
// attached only on hops that stay on the original scheme, host and port, and
// credential-bearing headers are stripped on every other hop. Response size and
// time are capped.
//
// The package imports only the standard library, golang.org/x/net/http/httpguts
// (header validation) and the failure package (error codes). It does not know
// where credentials come from: callers pass an Injector.
package egress
