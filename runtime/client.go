package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// ElicitRequest is what the elicit import asks the user.
type ElicitRequest struct {
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// elicitResult is the elicit import's result: Action is accept, decline or
// cancel; Content holds the accepted values.
type elicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Limits of the talk-back imports per call.
const (
	maxTalkBackRequestBytes = 64 << 10
	maxTalkBacksPerCall     = 10
	maxTalkBackResultBytes  = 1 << 20
)

// inputKey is the form of an input request's key.
var inputKey = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// capabilityOf is the client capability an input request method needs.
func capabilityOf(method string) string {
	switch method {
	case toolcall.MethodElicit:
		return "elicitation"
	case toolcall.MethodSample:
		return "sampling"
	default:
		return "roots"
	}
}

// talkBack runs the elicit or sample import: it decodes the request, asks
// the client and returns the result JSON, or a *failure.Error.
func (st *callState) talkBack(ctx context.Context, kind string, req []byte) ([]byte, *failure.Error) {
	if len(req) > maxTalkBackRequestBytes {
		return nil, toolError(failure.InvalidRequest, fmt.Sprintf("%s request of %d bytes is over the limit of %d", kind, len(req), maxTalkBackRequestBytes))
	}
	ir := toolcall.InputRequest{Key: fmt.Sprintf("%s-%d", kind, st.talkBacks+1), Params: bytes.Clone(req)}
	switch kind {
	case "elicit":
		var r ElicitRequest
		dec := json.NewDecoder(bytes.NewReader(req))
		dec.DisallowUnknownFields()
		if derr := dec.Decode(&r); derr != nil || r.Message == "" || !isJSONObject(r.RequestedSchema) {
			return nil, toolError(failure.InvalidRequest, `elicit needs {"message": "...", "requestedSchema": {...}}`)
		}
		ir.Method = toolcall.MethodElicit
	case "sample":
		if !isJSONObject(req) {
			return nil, toolError(failure.InvalidRequest, "sample needs the params object of sampling/createMessage")
		}
		ir.Method = toolcall.MethodSample
	}
	res, terr := st.ask(ctx, kind, []toolcall.InputRequest{ir})
	if terr != nil {
		return nil, terr
	}
	out := res[ir.Key]
	if kind == "elicit" {
		// The elicit result keeps the shape ABI v1 promised: action and content.
		var r elicitResult
		if err := json.Unmarshal(out, &r); err != nil || (r.Action != "accept" && r.Action != "decline" && r.Action != "cancel") {
			return nil, toolError(failure.ClientError, "elicit: the client's answer is not an elicitation result")
		}
		out, _ = json.Marshal(r)
	}
	return out, nil
}

// wireInputRequest is one entry of the input import's request.
type wireInputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// input runs the input import: a map of keyed requests in, a map of
// results by the same keys out.
func (st *callState) input(ctx context.Context, req []byte) ([]byte, *failure.Error) {
	if len(req) > maxTalkBackRequestBytes {
		return nil, toolError(failure.InvalidRequest, fmt.Sprintf("input request of %d bytes is over the limit of %d", len(req), maxTalkBackRequestBytes))
	}
	var wire map[string]wireInputRequest
	dec := json.NewDecoder(bytes.NewReader(req))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wire); err != nil || len(wire) == 0 {
		return nil, toolError(failure.InvalidRequest, `input needs {"<key>": {"method": "...", "params": {...}}, ...} with at least one request`)
	}
	reqs := make([]toolcall.InputRequest, 0, len(wire))
	for key, w := range wire {
		if !inputKey.MatchString(key) {
			return nil, toolError(failure.InvalidRequest, fmt.Sprintf("input key %q must be 1 to 64 letters, digits, '_', '.', ':' or '-'", key))
		}
		params := bytes.TrimSpace(w.Params)
		if len(params) == 0 || bytes.Equal(params, []byte("null")) {
			params = []byte("{}")
		}
		switch {
		case w.Method != toolcall.MethodElicit && w.Method != toolcall.MethodSample && w.Method != toolcall.MethodListRoots:
			return nil, toolError(failure.InvalidRequest, fmt.Sprintf("input %q: method %q is not %s, %s or %s", key, w.Method, toolcall.MethodElicit, toolcall.MethodSample, toolcall.MethodListRoots))
		case !isJSONObject(params):
			return nil, toolError(failure.InvalidRequest, fmt.Sprintf("input %q: params must be an object", key))
		}
		reqs = append(reqs, toolcall.InputRequest{Key: key, Method: w.Method, Params: bytes.Clone(params)})
	}
	slices.SortFunc(reqs, func(a, b toolcall.InputRequest) int { return cmp.Compare(a.Key, b.Key) })
	res, terr := st.ask(ctx, "input", reqs)
	if terr != nil {
		return nil, terr
	}
	answers := make(map[string]json.RawMessage, len(reqs))
	for _, r := range reqs {
		answers[r.Key] = res[r.Key]
	}
	out, err := json.Marshal(answers)
	if err != nil || len(out) > maxTalkBackResultBytes {
		return nil, toolError(failure.ClientError, fmt.Sprintf("input results of %d bytes are over the limit of %d", len(out), maxTalkBackResultBytes))
	}
	return out, nil
}

// ask checks the call's limits and the client's capabilities, then asks
// the client. An ErrInputRequired from the client ends the call.
func (st *callState) ask(ctx context.Context, kind string, reqs []toolcall.InputRequest) (map[string]json.RawMessage, *failure.Error) {
	st.talkBacks += len(reqs)
	if st.talkBacks > maxTalkBacksPerCall {
		return nil, toolError(failure.TooManyRequests, fmt.Sprintf("a call may make at most %d elicit, sample and input requests", maxTalkBacksPerCall))
	}
	for _, r := range reqs {
		if st.asked[r.Key] {
			return nil, toolError(failure.InvalidRequest, fmt.Sprintf("input key %q was already asked in this call", r.Key))
		}
	}
	if st.client == nil {
		return nil, toolError(failure.Unsupported, fmt.Sprintf("%s is not available: no client is attached to this call", kind))
	}
	var missing []string
	for _, r := range reqs {
		if c := capabilityOf(r.Method); !st.client.Supports(r.Method) && !slices.Contains(missing, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		te := toolError(failure.Unsupported, fmt.Sprintf("%s is not available: the client did not declare the capability", kind))
		// The MCP capabilities the call needs, for the client's error (SEP-2575).
		caps := map[string]struct{}{}
		for _, c := range missing {
			caps[c] = struct{}{}
		}
		te.Details, _ = json.Marshal(map[string]any{"requiredCapabilities": caps})
		return nil, te
	}
	// A key is asked once per call, so that it means the same question in
	// every round; a request refused above was never asked.
	if st.asked == nil {
		st.asked = map[string]bool{}
	}
	for _, r := range reqs {
		st.asked[r.Key] = true
	}
	res, err := st.client.Ask(ctx, reqs)
	switch {
	case errors.Is(err, toolcall.ErrInputRequired):
		// The plugin never sees this: the call ends here, and the client
		// calls again with the answers (the tool runs again from the start).
		panic(&abort{toolError(failure.InputRequired, "the client must answer input requests first")})
	case ctx.Err() != nil:
		return nil, toolError(failure.Canceled, kind+" ended with the call")
	case err != nil:
		return nil, toolError(failure.ClientError, kind+" failed: "+err.Error())
	}
	size := 0
	for _, r := range reqs {
		out, ok := res[r.Key]
		if !ok || !isJSONObject(out) {
			return nil, toolError(failure.ClientError, fmt.Sprintf("%s: the client gave no result object for %q", kind, r.Key))
		}
		size += len(out)
	}
	if size > maxTalkBackResultBytes {
		return nil, toolError(failure.ClientError, fmt.Sprintf("%s result of %d bytes is over the limit of %d", kind, size, maxTalkBackResultBytes))
	}
	return res, nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}
