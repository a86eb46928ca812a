// Package accounts is the identity front door over the store: adding users
// with their first API token, minting and revoking tokens, authenticating a
// bearer token, checking a portal password, minting and spending one-time
// sign-in links, and creating the first admin on an empty store. The CLI
// (workbench user add, token create|revoke) and the server share it.
//
// Tokens and passwords pass through here in clear exactly once; only their
// hashes reach the store, and no error or log line carries them.
package accounts
