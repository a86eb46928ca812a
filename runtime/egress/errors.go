package egress

import (
	"errors"

	"github.com/workbench-dev/workbench/failure"
)

// ErrDenied matches (with errors.Is) every Error whose Code is
// failure.EgressDenied.
var ErrDenied = errors.New("egress denied")

// Error is how every failed Do ends. Code is one of failure.EgressDenied,
// InvalidRequest, ResponseTooLarge, UpstreamTimeout, UpstreamUnreachable,
// TooManyRedirects, or NotConnected (the Injector could not attach the
// user's credential, for example a stored API key lacks a field). Message is
// safe to show to a plugin: it never contains a credential.
type Error struct {
	Code    failure.Code
	Message string
	cause   error
}

// Error returns "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the underlying cause, such as context.DeadlineExceeded or the
// Injector's error, when there is one.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is ErrDenied and e is a denial.
func (e *Error) Is(target error) bool { return target == ErrDenied && e.Code == failure.EgressDenied }

func newError(code failure.Code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, cause: cause}
}
