package runtime

import (
	"errors"

	"github.com/workbench-dev/workbench/failure"
)

// ErrClosed is returned by calls on a closed plugin or host.
var ErrClosed = errors.New("plugin is closed")

// toolError is a host error with one of the host codes of package failure
// (docs/abi.md, section 3). Every failed call ends with a *failure.Error:
// the plugin's own structured error or one of these.
func toolError(code failure.Code, msg string) *failure.Error {
	return &failure.Error{Code: code, Message: msg}
}

// abort is panicked by a host import to end the running call; wazero recovers
// it and returns it wrapped from the export call, where it becomes a *failure.Error.
type abort struct{ err *failure.Error }

func (a *abort) Error() string { return a.err.Error() }
