// Package fakeoauth is a fake OAuth 2.0 authorization server for tests: an
// httptest server on 127.0.0.1 with an authorization endpoint that approves
// (or denies) at once and a token endpoint that checks what a real provider
// checks: the client's authentication (HTTP Basic or form body, whichever it
// was told), the redirect URI, single-use codes, the PKCE S256 verifier, and
// refresh tokens, which it rotates and can revoke.
//
// It is test support only; nothing in the server imports it.
package fakeoauth
