package runtime

import (
	"encoding/json"
	"errors"
)

// Error codes set by the host (docs/abi.md, section 3).
const (
	CodeTimeout        = "TIMEOUT"
	CodeTrap           = "TRAP"
	CodeBadPointer     = "BAD_POINTER"
	CodeOutputTooLarge = "OUTPUT_TOO_LARGE"
	CodeBadOutput      = "BAD_OUTPUT"
	CodeOutOfMemory    = "OUT_OF_MEMORY"
	CodeBusy           = "BUSY"
	CodeUnknownTool    = "UNKNOWN_TOOL"
	CodeToolError      = "TOOL_ERROR"
	CodeNotConnected   = "NOT_CONNECTED"
	CodeInputTooLarge  = "INPUT_TOO_LARGE"
	CodeClosed         = "PLUGIN_CLOSED"
	CodeCanceled       = "CANCELED"
	CodeInvalidArgs    = "INVALID_ARGUMENTS"
	// CodeInputRequired ends a call whose client must answer input requests
	// (elicit, sample, input) before it can go on: the 2026-07-28 era's
	// input-required result. The instance is discarded like after any host
	// error, and the tool runs again from the start on the next round.
	CodeInputRequired = "INPUT_REQUIRED"
)

// ErrClosed is returned by calls on a closed plugin or host.
var ErrClosed = errors.New("plugin is closed")

// ToolError is how every failed call ends: a plugin's own structured error or
// a host error. Code is an upper-snake-case word; Message is for the agent.
type ToolError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

func toolError(code, msg string) *ToolError { return &ToolError{Code: code, Message: msg} }

// abort is panicked by a host import to end the running call; wazero recovers
// it and returns it wrapped from the export call, where it becomes a ToolError.
type abort struct{ err *ToolError }

func (a *abort) Error() string { return a.err.Error() }
