// Package roundstate seals and opens the requestState of MCP input-required
// results (2026-07-28, SEP-2322): the answers a client gave in earlier
// rounds of one call, bound to the user, the request and its arguments,
// integrity-protected with HMAC-SHA256 and expiring. It knows nothing of
// MCP or plugins; the endpoint decides what the answers mean.
package roundstate
