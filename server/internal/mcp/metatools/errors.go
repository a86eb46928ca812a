package metatools

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
)

// Error is a failure an agent can act on. It is what a failed execution or
// meta-tool returns, as JSON.
type Error struct {
	Code    failure.Code `json:"code"`
	Message string       `json:"message"`
	// Fix is the call that resolves the error, such as connect('github').
	Fix string `json:"fix,omitempty"`
	// Integration is the integration the error is about.
	Integration string `json:"integration,omitempty"`
	// Reason is the plugin's or the host's own code behind TOOL_ERROR and
	// TIMEOUT, such as NOT_FOUND, RATE_LIMITED, TRAP or UPSTREAM_TIMEOUT.
	Reason failure.Code `json:"reason,omitempty"`
	// Problems lists the failing argument paths of INVALID_ARGUMENTS.
	Problems []argcheck.Problem `json:"problems,omitempty"`
	// Suggestions lists the closest names for UNKNOWN_TOOL and
	// UNKNOWN_INTEGRATION.
	Suggestions []string `json:"suggestions,omitempty"`
	// Details is structured data the plugin attached to its error.
	Details json.RawMessage `json:"details,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func errorf(code failure.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// notConnected is NOT_CONNECTED with its fix.
func notConnected(integration string) *Error {
	return &Error{
		Code:        failure.NotConnected,
		Message:     fmt.Sprintf("you are not connected to %s; call connect('%s'), have the user open the URL it returns, then call wait_for_connection and retry", integration, integration),
		Fix:         fmt.Sprintf("connect('%s')", integration),
		Integration: integration,
	}
}

// fromToolError maps a runtime failure of a tool of integration to the
// agent's error codes: NOT_CONNECTED, EGRESS_DENIED, INVALID_ARGUMENTS and
// UNKNOWN_TOOL keep their code, deadlines become TIMEOUT, everything else
// TOOL_ERROR with the original code as Reason.
func fromToolError(err error, integration string) *Error {
	var te *failure.Error
	if !errors.As(err, &te) {
		return &Error{Code: failure.ToolError, Reason: failure.Internal, Message: "the tool failed: " + err.Error(), Integration: integration}
	}
	e := &Error{Message: te.Message, Integration: integration, Details: te.Details}
	switch te.Code {
	case failure.NotConnected:
		nc := notConnected(integration)
		nc.Details = te.Details
		return nc
	case failure.EgressDenied:
		e.Code = failure.EgressDenied
	case failure.InvalidArguments:
		e.Code = failure.InvalidArguments
	case failure.UnknownTool:
		e.Code = failure.UnknownTool
	case failure.Timeout:
		e.Code = failure.Timeout
	case failure.UpstreamTimeout:
		e.Code, e.Reason = failure.Timeout, te.Code
	default:
		e.Code, e.Reason = failure.ToolError, te.Code
	}
	return e
}
