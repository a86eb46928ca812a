// Package oauthserver is Workbench's own OAuth 2.1 authorization server for
// MCP clients: the protected-resource (RFC 9728) and authorization-server
// (RFC 8414) metadata, dynamic registration of public clients (RFC 7591),
// the consent page behind a portal session, and the token endpoint (PKCE
// S256 codes bound to an RFC 8707 resource, 1-hour access tokens, rotating
// refresh tokens). It stores only hashes of what it issues and never
// serves the portal's other pages.
package oauthserver
