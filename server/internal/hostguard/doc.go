// Package hostguard refuses requests that name a host this server is not,
// the defence against DNS rebinding: a page on an attacker's domain that
// re-resolves to a Workbench on loopback or a private network still sends
// the attacker's host name in Host (and its origin in Origin).
//
// Hosts is the one definition of which names a request may carry; the MCP
// endpoint checks Host and Origin with it, and Middleware checks Host on
// every Fiber route. The package knows no route of its own: callers pass the
// paths any host may reach and the prefix the jots host is confined to.
package hostguard
