package runtime

import (
	"errors"

	"github.com/workbench-dev/workbench/failure"
)

// ErrClosed is returned by calls on a closed plugin or host.
var ErrClosed = errors.New("plugin is closed")

// ToolError is how every failed call ends: a plugin's own structured error or
// a host error with one of the host codes of package failure (docs/abi.md,
// section 3).
type ToolError = failure.Error

func toolError(code failure.Code, msg string) *ToolError { return &ToolError{Code: code, Message: msg} }

// abort is panicked by a host import to end the running call; wazero recovers
// it and returns it wrapped from the export call, where it becomes a ToolError.
type abort struct{ err *ToolError }

func (a *abort) Error() string { return a.err.Error() }
