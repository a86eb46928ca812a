// Package store declares Workbench's persistent state: tenants, users, API
// tokens, portal sessions, one-time sign-in links, connections (a user's
// sealed credential for one integration) and pending connections (connect
// handshakes in flight), the Store interface over them, and the sentinel
// errors every implementation returns.
//
// Implementations live in the sqlite and postgres subpackages and pass the
// shared suite in storetest; the backend package picks one from DATABASE_URL.
// The store keeps secrets only in the form it is given: token and session
// hashes, password hashes and sealed blobs. It never encrypts, decrypts or
// hashes a secret itself, with one exception: it generates the OAuth state of
// a pending connection and keeps only its SHA-256.
//
// Every method that touches a user's data takes the user id and scopes its
// query by it: one user can never read or change another user's rows.
package store
