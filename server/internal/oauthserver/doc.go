// Package oauthserver is Workbench's own OAuth 2.1 authorization server for
// MCP clients: the protected-resource (RFC 9728) and authorization-server
// (RFC 8414) metadata, public clients registered dynamically (RFC 7591) or
// described by client ID metadata documents (fetched under the egress
// address rule, size- and time-capped, cached with a bound), the consent
// page behind a portal session, the scopes ("mcp", "offline_access"), and
// the token endpoint (PKCE S256 codes bound to an RFC 8707 resource, 1-hour
// access tokens, rotating refresh tokens whose reuse revokes the grant; a
// credential is checked against the request before it is used up).
// Registrations and document fetches are counted per client address in the
// store, clients are capped in total, and clients never granted are swept
// after a day. It stores only hashes of what it issues and never serves the
// portal's other pages.
package oauthserver
