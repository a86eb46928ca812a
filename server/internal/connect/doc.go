// Package connect runs the connect handshakes that give a user a connection
// to an integration: Connect creates a pending connection and returns the URL
// the user opens, Wait blocks until the handshake ends, and the portal
// completes it (SubmitAPIKey for an API-key form, CompleteOAuth for an OAuth
// callback). A sweep expires handshakes that outlive their window and prunes
// old terminal records.
//
// Per auth mode: none is connected at once; oauth2 is the authorization-code
// flow with PKCE (S256) and state against the integration's provider, whose
// client comes from <NAME>_CLIENT_ID and <NAME>_CLIENT_SECRET; apikey is a
// form built from the manifest's fields, validated here before anything is
// stored; cookie fails honestly, since cookie capture is not available on this
// server yet. Providers also implements connections.Refresher (the
// refresh-token grant).
//
// The package talks HTTP only to OAuth providers, through a client that
// refuses internal addresses (loopback is allowed only when the operator set
// EGRESS_ALLOW_PRIVATE). It serves no pages itself: the portal does. It knows
// the registry, the store and the sealing of credentials only through the
// small interfaces it declares, and never logs or returns a secret.
package connect
