package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
)

// Caller runs the tools of one integration. Every failure is a
// *failure.Error.
type Caller interface {
	Call(ctx context.Context, c Call) (json.RawMessage, error)
}

// Call is one tool invocation.
type Call struct {
	// Tool is the slug of the tool to run.
	Tool string
	// Export, when set, runs this resource or prompt export of the manifest
	// (resources[].export, resourceTemplates[].export, prompts[].export)
	// instead of a tool; Tool is then ignored.
	Export string
	// UserID is the user the call runs for: whose credentials and data it
	// may use.
	UserID string
	// Input is the tool's arguments, a JSON object.
	Input []byte
	// Progress receives the tool's progress reports; nil drops them.
	Progress func(Progress)
	// Client is the MCP client for log, elicit, sample and input; nil means
	// the call has none (the CLI), and input requests fail with
	// UNSUPPORTED.
	Client Client
}

// Progress is one progress report of a running call.
type Progress struct {
	Done, Total float64
	Message     string
}

// Client is the MCP client behind a call. The server implements it twice:
// on a 2025-era session, where Ask sends the requests to the client and
// waits for the answers, and for a 2026-07-28 request, where Ask answers
// from the responses the client sent with the request and otherwise returns
// ErrInputRequired (docs/abi.md, "Input-required results").
type Client interface {
	// Log forwards a log record of the tool to the client.
	Log(level slog.Level, msg string)
	// Supports reports whether the client declared the capability that an
	// input request method (MethodElicit, MethodSample, MethodListRoots)
	// needs.
	Supports(method string) bool
	// Ask gets the client's result for every request, by key: the result
	// object of the request's method. A client that cannot ask now returns
	// an error wrapping ErrInputRequired after noting the requests it has
	// no answer for; the call then ends with INPUT_REQUIRED.
	Ask(ctx context.Context, requests []InputRequest) (map[string]json.RawMessage, error)
}

// ErrInputRequired is returned by a Client that has no answer yet for some
// of the requests it was asked and cannot wait for one: the call must end,
// and the client answer and call again (an input-required result, MCP
// 2026-07-28).
var ErrInputRequired = errors.New("the client must answer input requests before the call can go on")

// The methods of input requests: MCP's client requests a tool may make.
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
)

// InputRequest is one question for the MCP client: Params is the params
// object of Method. Key names it among the call's requests.
type InputRequest struct {
	Key    string
	Method string
	Params json.RawMessage
}
