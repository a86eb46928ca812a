package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/roundstate"
	"github.com/workbench-dev/workbench/toolcall"
)

// roundClient is the toolcall.Client of a 2026-07-28 tools/call, prompts/get
// or resources/read (input-required results, SEP-2322). The protocol has no
// server-to-client requests, so the plugin's elicit, sample and input
// imports are answered from what the client sent with the request: the
// answers of earlier rounds sealed in its requestState and the new
// inputResponses. A request without an answer is noted and ends the call
// (toolcall.ErrInputRequired); the endpoint then answers with an
// input-required result carrying every request noted and a new
// requestState holding the answers the call used, and the client calls
// again with its answers. Tools run again from the start on every round.
type roundClient struct {
	*sessionClient // Log and Supports

	binding string                       // who asked what, with which arguments
	answers map[string]roundstate.Answer // what the client has answered so far

	mu      sync.Mutex
	used    map[string]roundstate.Answer // answers this round's run used
	missing sdk.InputRequestMap          // requests it has no answer for
}

var _ toolcall.Client = (*roundClient)(nil)

// clientFor returns the toolcall.Client of a request: a roundClient for a
// 2026-07-28 request, whose requestState must be valid (a JSON-RPC invalid
// params error otherwise), and a sessionClient for a 2025-era session.
// binding names the request (see bindingOf).
func (e *Endpoint) clientFor(sc *sessionClient, binding string, responses sdk.InputResponseMap, state string) (toolcall.Client, *roundClient, error) {
	if !isNewEra(sc.ss) {
		return sc, nil, nil
	}
	answers := map[string]roundstate.Answer{}
	if state != "" {
		var err error
		if answers, err = e.states.Open(state, binding); err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if answers == nil {
			answers = map[string]roundstate.Answer{}
		}
	}
	for key, r := range responses {
		if _, ok := answers[key]; ok {
			continue // an earlier round's answer stands
		}
		method := answerMethod(r)
		if method == "" {
			continue // unknown answers are ignored (SEP-2322)
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q]: %v", key, err)}
		}
		answers[key] = roundstate.Answer{Method: method, Result: b}
	}
	rc := &roundClient{sessionClient: sc, binding: binding, answers: answers, used: map[string]roundstate.Answer{}}
	return rc, rc, nil
}

// answerMethod is the method an input response answers, or "".
func answerMethod(r sdk.InputResponse) string {
	switch r.(type) {
	case *sdk.ElicitResult:
		return toolcall.MethodElicit
	case *sdk.CreateMessageResult, *sdk.CreateMessageWithToolsResult:
		return toolcall.MethodSample
	case *sdk.ListRootsResult:
		return toolcall.MethodListRoots
	}
	return ""
}

// Ask answers from the client's answers to the same key and method; it
// notes every request without one and then returns ErrInputRequired.
func (c *roundClient) Ask(_ context.Context, reqs []toolcall.InputRequest) (map[string]json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]json.RawMessage, len(reqs))
	for _, r := range reqs {
		if a, ok := c.answers[r.Key]; ok && a.Method == r.Method {
			out[r.Key] = a.Result
			c.used[r.Key] = a
			continue
		}
		ir, err := sdkInputRequest(r)
		if err != nil {
			return nil, err
		}
		if c.missing == nil {
			c.missing = sdk.InputRequestMap{}
		}
		c.missing[r.Key] = ir
	}
	if len(c.missing) > 0 {
		return nil, fmt.Errorf("%d input requests unanswered: %w", len(c.missing), toolcall.ErrInputRequired)
	}
	return out, nil
}

// inputRequired returns the requests of an input-required result and its
// sealed state, or ok false when the call did not end for want of answers.
// code is the code the call failed with.
func (c *roundClient) inputRequired(states *roundstate.Sealer, code failure.Code) (reqs sdk.InputRequestMap, state string, ok bool, err error) {
	if c == nil || code != failure.InputRequired {
		return nil, "", false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.missing) == 0 {
		return nil, "", false, nil
	}
	if state, err = states.Seal(c.binding, c.used); err != nil {
		return nil, "", false, err
	}
	return c.missing, state, true, nil
}

// bindingOf names a request for its requestState: the user, the method,
// the tool, prompt or resource, and the arguments (canonical JSON, so that
// key order and spacing do not matter, and absent arguments equal {}).
func bindingOf(user, method, name string, args any) string {
	b, err := json.Marshal(args)
	if raw, ok := args.(json.RawMessage); ok {
		b, err = raw, nil
	}
	if err == nil && len(b) > 0 {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			if c, err := json.Marshal(v); err == nil {
				b = c
			}
		}
	}
	if len(b) == 0 || string(b) == "null" {
		b = []byte("{}") // no arguments are empty arguments
	}
	return fmt.Sprintf("%q %q %q %s", user, method, name, b)
}
