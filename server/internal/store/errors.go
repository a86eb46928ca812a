package store

import "errors"

// Sentinel errors. Implementations wrap them with %w and a message that names
// the record but never a secret.
var (
	// ErrNotFound: no such record, or it belongs to another user.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record would break a uniqueness rule (an email already
	// used in the tenant, for example).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: an argument is malformed (an empty id, a bad email, an
	// unknown status).
	ErrInvalid = errors.New("invalid argument")
	// ErrNotPending: the pending connection already reached a terminal
	// status, or its state was already used.
	ErrNotPending = errors.New("pending connection is no longer pending")
	// ErrExpired: the pending connection's handshake window, or the login
	// link's lifetime, has ended.
	ErrExpired = errors.New("pending connection expired")
)
