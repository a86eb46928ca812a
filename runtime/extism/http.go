package extism

import (
	"context"
	"encoding/json"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
)

// httpRequestBody is the request of workbench_http_request: the ABI v1
// head (docs/abi.md, section 5) with the body inline as base64. Headers go
// to the host as they are.
type httpRequestBody struct {
	Method    string          `json:"method"`
	URL       string          `json:"url"`
	Headers   json.RawMessage `json:"headers,omitempty"`
	TimeoutMs int             `json:"timeoutMs"`
	Body      []byte          `json:"body"`
}

// httpResponse is the response of workbench_http_request: the ABI v1
// response head with the body inline as base64, or an error.
type httpResponse struct {
	Status  int                 `json:"status,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	URL     string              `json:"url,omitempty"`
	Body    []byte              `json:"body,omitempty"`
	Error   *failure.Error      `json:"error,omitempty"`
}

// httpRequest is the extism:host/user workbench_http_request host function:
// request JSON in, response JSON out, both Extism memory handles. Failures
// of the host function itself end the call.
func httpRequest(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	raw, err := cp.ReadBytes(stack[0])
	if err != nil {
		panic(&failure.Error{Code: failure.BadPointer, Message: httpImport + ": " + err.Error()})
	}
	b, err := json.Marshal(roundTrip(ctx, raw))
	if err != nil {
		panic(&failure.Error{Code: failure.BadOutput, Message: httpImport + ": " + err.Error()})
	}
	off, err := cp.WriteBytes(b)
	if err != nil {
		panic(&failure.Error{Code: failure.OutOfMemory, Message: httpImport + ": " + err.Error()})
	}
	stack[0] = off
}

// roundTrip decodes the request, runs it through the host's http_request
// (credential injection, egress policy, limits) and builds the response.
func roundTrip(ctx context.Context, raw []byte) *httpResponse {
	if len(raw) > runtime.MaxRequestHeadBytes+runtime.MaxInputBytes {
		return failed(failure.InvalidRequest, fmt.Sprintf("request of %d bytes is too large", len(raw)))
	}
	var req httpRequestBody
	if err := json.Unmarshal(raw, &req); err != nil {
		return failed(failure.InvalidRequest, "request is not valid: "+err.Error())
	}
	body := req.Body
	head, err := json.Marshal(struct {
		Method    string          `json:"method"`
		URL       string          `json:"url"`
		Headers   json.RawMessage `json:"headers,omitempty"`
		TimeoutMs int             `json:"timeoutMs"`
	}{req.Method, req.URL, req.Headers, req.TimeoutMs})
	if err != nil {
		return failed(failure.InvalidRequest, err.Error())
	}
	outHead, outBody, terr := runtime.HTTPRequest(ctx, head, body)
	if terr != nil {
		return &httpResponse{Error: terr}
	}
	resp := &httpResponse{Body: outBody}
	if err := json.Unmarshal(outHead, resp); err != nil {
		return failed(failure.InvalidRequest, err.Error())
	}
	return resp
}

func failed(code failure.Code, msg string) *httpResponse {
	return &httpResponse{Error: &failure.Error{Code: code, Message: msg}}
}
