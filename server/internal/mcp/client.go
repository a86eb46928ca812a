package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/workbench-dev/workbench/toolcall"
)

// sessionClient lets a plugin talk back to the MCP client of its call: log
// records become notifications/message, and on a 2025-era session input
// requests (elicitation, sampling, roots) become requests to the client,
// each only when the client declared the capability. A 2026-07-28 request
// cannot carry server-to-client requests: its direct tool calls, prompts
// and resource reads use a roundClient instead, and everywhere else (the
// meta-tool execute_tools) Ask fails with CLIENT_ERROR.
type sessionClient struct {
	ctx  context.Context
	ss   *sdk.ServerSession
	caps *sdk.ClientCapabilities // the request's, which is the session's in the 2025 era
}

var _ toolcall.Client = (*sessionClient)(nil)

// errNoRoundTrip is Ask's failure where a 2026-07-28 request cannot end
// with an input-required result.
var errNoRoundTrip = errors.New("the 2026-07-28 protocol sends input requests only in the result of a direct tool call, prompts/get or resources/read; call the tool directly")

// Log forwards a plugin log record; the SDK drops it below the level the
// client set with logging/setLevel.
func (c *sessionClient) Log(level slog.Level, msg string) {
	_ = c.ss.Log(c.ctx, &sdk.LoggingMessageParams{Level: mcpLevel(level), Logger: "plugin", Data: msg})
}

func mcpLevel(l slog.Level) sdk.LoggingLevel {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	default:
		return "debug"
	}
}

// Supports reports whether the client declared the capability of method.
func (c *sessionClient) Supports(method string) bool {
	return supports(c.caps, method)
}

func supports(caps *sdk.ClientCapabilities, method string) bool {
	if caps == nil {
		return false
	}
	switch method {
	case toolcall.MethodElicit:
		return caps.Elicitation != nil
	case toolcall.MethodSample:
		return caps.Sampling != nil
	case toolcall.MethodListRoots:
		return caps.RootsV2 != nil
	}
	return false
}

// Ask sends the requests to the client one after the other, in order.
func (c *sessionClient) Ask(ctx context.Context, reqs []toolcall.InputRequest) (map[string]json.RawMessage, error) {
	if isNewEra(c.ss) {
		return nil, errNoRoundTrip
	}
	out := make(map[string]json.RawMessage, len(reqs))
	for _, r := range reqs {
		ir, err := sdkInputRequest(r)
		if err != nil {
			return nil, err
		}
		var res any
		switch p := ir.(type) {
		case *sdk.ElicitParams:
			res, err = c.ss.Elicit(ctx, p)
		case *sdk.CreateMessageParams:
			res, err = c.ss.CreateMessage(ctx, p)
		case *sdk.CreateMessageWithToolsParams:
			res, err = c.ss.CreateMessageWithTools(ctx, p)
		case *sdk.ListRootsParams:
			res, err = c.ss.ListRoots(ctx, p)
		}
		if err != nil {
			return nil, err
		}
		if out[r.Key], err = json.Marshal(res); err != nil {
			return nil, fmt.Errorf("%s result: %w", r.Method, err)
		}
	}
	return out, nil
}

// isNewEra reports whether a session serves a 2026-07-28 (or later)
// request, which has no way to send requests to the client.
func isNewEra(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= newEra
}

// sdkInputRequest decodes a plugin's input request into the SDK's params.
// Elicitation without a mode is a form; sampling takes single or listed
// content.
func sdkInputRequest(r toolcall.InputRequest) (sdk.InputRequest, error) {
	switch r.Method {
	case toolcall.MethodElicit:
		var p sdk.ElicitParams
		if err := json.Unmarshal(r.Params, &p); err != nil {
			return nil, fmt.Errorf("elicitation request %q: %w", r.Key, err)
		}
		if p.Mode == "" {
			p.Mode = "form"
			if p.URL != "" {
				p.Mode = "url"
			}
		}
		return &p, nil
	case toolcall.MethodSample:
		var p sdk.CreateMessageParams
		if err := json.Unmarshal(r.Params, &p); err == nil {
			return &p, nil
		}
		var pt sdk.CreateMessageWithToolsParams
		if err := json.Unmarshal(r.Params, &pt); err != nil {
			return nil, fmt.Errorf("sampling request %q: %w", r.Key, err)
		}
		return &pt, nil
	case toolcall.MethodListRoots:
		return &sdk.ListRootsParams{}, nil
	}
	return nil, fmt.Errorf("input request %q: unknown method %q", r.Key, r.Method)
}
