package egress

import "errors"

// Error codes, shared with the plugin ABI (docs/abi.md, section 3).
const (
	CodeDenied           = "EGRESS_DENIED"
	CodeInvalidRequest   = "INVALID_REQUEST"
	CodeTooLarge         = "RESPONSE_TOO_LARGE"
	CodeTimeout          = "UPSTREAM_TIMEOUT"
	CodeUnreachable      = "UPSTREAM_UNREACHABLE"
	CodeTooManyRedirects = "TOO_MANY_REDIRECTS"
	// CodeNotConnected reports that the Injector could not attach the
	// user's credential (for example a stored API key lacks a field).
	CodeNotConnected = "NOT_CONNECTED"
)

// ErrDenied matches (with errors.Is) every Error whose Code is CodeDenied.
var ErrDenied = errors.New("egress denied")

// Error is how every failed Do ends. Message is safe to show to a plugin: it
// never contains a credential.
type Error struct {
	Code    string
	Message string
	cause   error
}

// Error returns "CODE: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the underlying cause, such as context.DeadlineExceeded or the
// Injector's error, when there is one.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is ErrDenied and e is a denial.
func (e *Error) Is(target error) bool { return target == ErrDenied && e.Code == CodeDenied }

func newError(code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, cause: cause}
}
