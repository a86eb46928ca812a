// Package secrets owns the cryptography applied to secret material at rest:
// sealing credentials with AES-256-GCM under a Keyring (current key plus old
// keys for rotation), hashing passwords with argon2id, and minting API tokens
// that are stored only as a SHA-256.
//
// The key is read lazily, on the first Seal or Open, never at package load.
// Errors name keys by id (the first 8 hex characters of the key's SHA-256) and
// never contain a key, a plaintext or a password. The package does not know
// where sealed blobs are stored; callers bind each blob to its row with AAD.
package secrets
