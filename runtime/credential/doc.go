// Package credential describes what the host attaches to a plugin's outbound
// request on a user's behalf: the integration's authentication Scheme (taken
// from its manifest), one user's stored Credential, and the Source the runtime
// reads credentials from.
//
// A Scheme strips every credential-bearing header and query parameter a plugin
// set, then attaches the real credential: an OAuth bearer token, an API key in
// the header, query or basic form the manifest declares, or the cookies whose
// domain matches the request host. Plugins never see a Credential; printing or
// logging one shows only a redacted summary.
//
// The package imports only the standard library and the failure package (for
// ErrNotConnected). It does not store, refresh or encrypt credentials (the
// server's store does) and it does not decide where a request may go
// (runtime/egress does).
package credential
