// Package proxy owns curl sessions and the authenticated proxy behind
// SERVER_PUBLIC_URL/c/<integration>/<path> (docs/proxy.md).
//
// A Service mints 15-minute tokens scoped to named integrations (stored as
// SHA-256 hashes, so every replica on the same database accepts them), and
// Handler forwards a request carrying such a token to the integration's
// proxy base URL with the user's real credential attached by
// runtime/credential and every connection dialled through runtime/egress.
// Both bodies stream; nothing is buffered whole. Every call made with a
// valid token is audited (never a body, header, query value or token); the
// audit rows are written in batches by Run, which also prunes old sessions
// and audit rows.
//
// The package reaches integrations, credentials and connection state only
// through the small interfaces it declares. It never follows an upstream
// redirect, never sends the curl token or the client's cookies upstream, and
// turns its errors into JSON responses in exactly one place (writeError).
package proxy
