package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/runtime"
)

// sessionClient lets a plugin talk back to the MCP client of its call: log
// records become notifications/message, elicit and sample become requests
// to the client, each only when the client declared the capability.
type sessionClient struct {
	ctx context.Context
	ss  *sdk.ServerSession
}

var _ runtime.Client = (*sessionClient)(nil)

func (c *sessionClient) capabilities() *sdk.ClientCapabilities {
	if p := c.ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

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

// Elicit asks the user through a form elicitation.
func (c *sessionClient) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	if caps := c.capabilities(); caps == nil || caps.Elicitation == nil {
		return runtime.ElicitResult{}, runtime.ErrUnsupported
	}
	res, err := c.ss.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: req.Message, RequestedSchema: req.RequestedSchema})
	if err != nil {
		return runtime.ElicitResult{}, err
	}
	out := runtime.ElicitResult{Action: res.Action}
	if res.Content != nil {
		if out.Content, err = json.Marshal(res.Content); err != nil {
			return runtime.ElicitResult{}, fmt.Errorf("elicitation content: %w", err)
		}
	}
	return out, nil
}

// Sample forwards a sampling/createMessage request.
func (c *sessionClient) Sample(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	if caps := c.capabilities(); caps == nil || caps.Sampling == nil {
		return nil, runtime.ErrUnsupported
	}
	var params sdk.CreateMessageParams
	if err := json.Unmarshal(request, &params); err != nil {
		return nil, fmt.Errorf("sampling request: %w", err)
	}
	res, err := c.ss.CreateMessage(ctx, &params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}
