// Package egress is the only way out for plugins: an HTTP client that denies
// by default.
//
// Every request and every redirect hop must match the calling plugin's Policy
// (scheme, host pattern and port). Host names are resolved by the client's own
// dialer, which refuses loopback, private, link-local, multicast, CGNAT and
// other internal addresses (including their IPv4-mapped, NAT64 and 6to4 forms)
// and then dials the checked address itself, so a second DNS answer cannot
// redirect the connection. Redirects are followed by hand; a credential is
// attached only on hops that stay on the original scheme, host and port, and
// credential-bearing headers are stripped on every other hop. Response size and
// time are capped.
//
// The package imports only the standard library, golang.org/x/net/http/httpguts
// (header validation) and the failure package (error codes). It does not know
// where credentials come from: callers pass an Injector.
package egress
