package pdk

import (
	"errors"
	"fmt"
)

// Error codes a plugin commonly returns. Any upper-snake-case word is allowed;
// these are the ones the host and agents already know.
const (
	CodeToolError        = "TOOL_ERROR"
	CodeInvalidArguments = "INVALID_ARGUMENTS"
	CodeNotFound         = "NOT_FOUND"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeForbidden        = "FORBIDDEN"
	CodeConflict         = "CONFLICT"
	CodeValidationFailed = "VALIDATION_FAILED"
	CodeRateLimited      = "RATE_LIMITED"
	CodeUpstreamError    = "UPSTREAM_ERROR"
	CodeInvalidManifest  = "INVALID_MANIFEST"
	// CodeUnsupported is what Elicit and Sample report when the client did
	// not declare the capability (or the call has no client).
	CodeUnsupported = "UNSUPPORTED"
)

// Error is a structured tool error: what a tool export reports with status 1,
// and what the host's imports report to the plugin (for example
// EGRESS_DENIED or NOT_CONNECTED from an HTTP request).
type Error struct {
	// Code is an upper-snake-case word such as NOT_FOUND.
	Code string `json:"code"`
	// Message is shown to the agent.
	Message string `json:"message"`
	// Details is optional extra JSON-encodable data.
	Details any `json:"details,omitempty"`
}

// Error returns "CODE: message".
func (e *Error) Error() string {
	return e.Code + ": " + e.Message
}

// WithDetails returns a copy of e carrying details.
func (e *Error) WithDetails(details any) *Error {
	c := *e
	c.Details = details
	return &c
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a NOT_FOUND error.
func NotFound(format string, args ...any) *Error {
	return Errorf(CodeNotFound, format, args...)
}

// InvalidArguments returns an INVALID_ARGUMENTS error.
func InvalidArguments(format string, args ...any) *Error {
	return Errorf(CodeInvalidArguments, format, args...)
}

// Unauthorized returns an UNAUTHORIZED error.
func Unauthorized(format string, args ...any) *Error {
	return Errorf(CodeUnauthorized, format, args...)
}

// Forbidden returns a FORBIDDEN error.
func Forbidden(format string, args ...any) *Error {
	return Errorf(CodeForbidden, format, args...)
}

// Conflict returns a CONFLICT error.
func Conflict(format string, args ...any) *Error {
	return Errorf(CodeConflict, format, args...)
}

// RateLimited returns a RATE_LIMITED error.
func RateLimited(format string, args ...any) *Error {
	return Errorf(CodeRateLimited, format, args...)
}

// UpstreamError returns an UPSTREAM_ERROR error.
func UpstreamError(format string, args ...any) *Error {
	return Errorf(CodeUpstreamError, format, args...)
}

// toolError turns whatever a handler returned into the error object written
// with status 1. A *Error anywhere in the chain keeps its code and details; a
// wrapped one keeps the wrapper's fuller message. Anything else is TOOL_ERROR.
// Codes that are not upper snake case become TOOL_ERROR, as the host would do.
func toolError(err error) *Error {
	out := &Error{Code: CodeToolError, Message: err.Error()}
	var pe *Error
	if errors.As(err, &pe) && pe != nil {
		out.Code = pe.Code
		out.Details = pe.Details
		if err == error(pe) {
			out.Message = pe.Message
		}
	}
	if !validCode(out.Code) {
		out.Code = CodeToolError
	}
	if out.Message == "" {
		out.Message = "tool failed with " + out.Code
	}
	return out
}

// validCode reports whether code is an upper-snake-case word: A-Z first,
// then A-Z, 0-9 and underscores.
func validCode(code string) bool {
	if code == "" || code[0] < 'A' || code[0] > 'Z' {
		return false
	}
	for i := 1; i < len(code); i++ {
		c := code[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
