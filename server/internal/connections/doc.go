// Package connections keeps users' integration credentials: it seals them
// with the secrets Keyring before they reach the store, opens them for the
// runtime (Service implements runtime/credential.Source), decides whether a
// user counts as connected under an integration's auth mode, renews OAuth
// tokens through a Refresher shortly before they expire, and re-seals every
// row when the key rotates.
//
// Each sealed blob is bound (as AES-GCM additional data) to its purpose, tenant,
// user and integration, so a blob copied into another row does not open. The
// package never logs a credential and never puts one in an error. It does not
// run connect handshakes or talk to OAuth providers itself.
package connections
