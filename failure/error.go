package failure

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error is a coded failure: what a failed tool call, host import or
// service call reports. Message is for the agent and never holds a secret;
// Details is optional structured data. Cause, when set, is the underlying
// error for logs and errors.Is; it is never shown to the agent.
type Error struct {
	Code    Code            `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
	Cause   error           `json:"-"`
}

// Error returns "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf returns an Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Domain sentinels. Wrap them with %w to add context; test them with
// errors.Is. Each has the code of the same name.
var (
	// ErrUnknownIntegration: no integration by that name is loaded.
	ErrUnknownIntegration = errors.New("unknown integration")
	// ErrNotConnected: the user has no usable connection to the
	// integration (none stored, expired, or refused on refresh).
	ErrNotConnected = errors.New("not connected")
	// ErrNotConfigured: the integration cannot be connected until the
	// operator configures it, such as an OAuth client ID and secret.
	ErrNotConfigured = errors.New("integration is not configured for connecting")
	// ErrUnknownConnection: no pending connection by that ID.
	ErrUnknownConnection = errors.New("unknown connection")
	// ErrNoProxy: the integration declares no proxy base URL.
	ErrNoProxy = errors.New("integration has no proxy")
	// ErrUnauthenticated: a token, session or password did not check out.
	// Errors wrapping it never say which part was wrong.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable: a dependency (the database, a service) failed; the
	// same request may succeed later. Wrap the cause beside it.
	ErrUnavailable = errors.New("temporarily unavailable")
)
