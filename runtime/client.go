package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// Client is the MCP client behind a call. The talk-back imports (log,
// elicit, sample) reach it through this interface; the server implements it
// on an MCP session and returns ErrUnsupported for what the client did not
// declare.
type Client interface {
	// Log forwards a plugin log record to the client.
	Log(level slog.Level, msg string)
	// Elicit asks the user a question through the client.
	Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error)
	// Sample asks the client's model for a completion; request and result
	// are the params and result of MCP sampling/createMessage.
	Sample(ctx context.Context, request json.RawMessage) (json.RawMessage, error)
}

// ErrUnsupported is returned by a Client for a capability its MCP client did
// not declare.
var ErrUnsupported = errors.New("the client did not declare this capability")

// ElicitRequest is what a plugin asks the user.
type ElicitRequest struct {
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// ElicitResult is the user's answer: Action is accept, decline or cancel;
// Content holds the accepted values.
type ElicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Limits of the talk-back imports per call.
const (
	maxTalkBackRequestBytes = 64 << 10
	maxTalkBacksPerCall     = 10
	maxTalkBackResultBytes  = 1 << 20
)

// talkBack runs one elicit or sample import: it decodes the request, asks
// the client and returns the result JSON, or a ToolError.
func (st *callState) talkBack(ctx context.Context, kind string, req []byte) ([]byte, *ToolError) {
	st.talkBacks++
	switch {
	case st.talkBacks > maxTalkBacksPerCall:
		return nil, toolError("TOO_MANY_REQUESTS", fmt.Sprintf("a call may make at most %d elicit and sample requests", maxTalkBacksPerCall))
	case len(req) > maxTalkBackRequestBytes:
		return nil, toolError("INVALID_REQUEST", fmt.Sprintf("%s request of %d bytes is over the limit of %d", kind, len(req), maxTalkBackRequestBytes))
	case st.client == nil:
		return nil, toolError("UNSUPPORTED", fmt.Sprintf("%s is not available: no client is attached to this call", kind))
	}
	var out []byte
	var err error
	switch kind {
	case "elicit":
		var r ElicitRequest
		dec := json.NewDecoder(bytes.NewReader(req))
		dec.DisallowUnknownFields()
		if derr := dec.Decode(&r); derr != nil || r.Message == "" || !isJSONObject(r.RequestedSchema) {
			return nil, toolError("INVALID_REQUEST", `elicit needs {"message": "...", "requestedSchema": {...}}`)
		}
		var res ElicitResult
		if res, err = st.client.Elicit(ctx, r); err == nil {
			out, err = json.Marshal(res)
		}
	case "sample":
		if !isJSONObject(req) {
			return nil, toolError("INVALID_REQUEST", "sample needs the params object of sampling/createMessage")
		}
		out, err = st.client.Sample(ctx, bytes.Clone(req))
	}
	switch {
	case errors.Is(err, ErrUnsupported):
		te := toolError("UNSUPPORTED", fmt.Sprintf("%s is not available: the client did not declare the capability", kind))
		// The MCP capability the call needs, for the client's error (SEP-2575).
		capability := "sampling"
		if kind == "elicit" {
			capability = "elicitation"
		}
		te.Details = json.RawMessage(`{"requiredCapabilities":{"` + capability + `":{}}}`)
		return nil, te
	case ctx.Err() != nil:
		return nil, toolError(CodeCanceled, kind+" ended with the call")
	case err != nil:
		return nil, toolError("CLIENT_ERROR", kind+" failed: "+err.Error())
	case len(out) > maxTalkBackResultBytes:
		return nil, toolError("CLIENT_ERROR", fmt.Sprintf("%s result of %d bytes is over the limit of %d", kind, len(out), maxTalkBackResultBytes))
	}
	return out, nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}
