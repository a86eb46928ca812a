package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// fakeClient records what a plugin sends back to its MCP client.
type fakeClient struct {
	logs      []string
	elicited  []ElicitRequest
	answer    ElicitResult
	sampled   []string
	sampleErr error
	elicitErr error
}

func (c *fakeClient) Log(level slog.Level, msg string) {
	c.logs = append(c.logs, level.String()+" "+msg)
}

func (c *fakeClient) Elicit(_ context.Context, req ElicitRequest) (ElicitResult, error) {
	c.elicited = append(c.elicited, req)
	return c.answer, c.elicitErr
}

func (c *fakeClient) Sample(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	c.sampled = append(c.sampled, string(req))
	if c.sampleErr != nil {
		return nil, c.sampleErr
	}
	return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"yes"},"model":"m"}`), nil
}

func TestPlugin_Call_talkBack(t *testing.T) {
	p := loadHostile(t, Config{})
	call := func(c Client, tool, input string) (string, *ToolError) {
		out, err := p.Call(context.Background(), Call{Tool: tool, UserID: "u1", Input: []byte(input), Client: c})
		var te *ToolError
		errors.As(err, &te)
		return string(out), te
	}
	elicitReq := `{"message":"Delete repo octo/x?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}`

	c := &fakeClient{answer: ElicitResult{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}}
	out, te := call(c, "fixture_elicit", elicitReq)
	if te != nil || out != `{"action":"accept","content":{"confirm":true}}` || len(c.elicited) != 1 || c.elicited[0].Message != "Delete repo octo/x?" {
		t.Fatalf("elicit: %s %v %+v", out, te, c.elicited)
	}
	out, te = call(c, "fixture_sample", `{"messages":[],"maxTokens":10}`)
	if te != nil || !strings.Contains(out, `"text":"yes"`) || c.sampled[0] != `{"messages":[],"maxTokens":10}` {
		t.Fatalf("sample: %s %v %v", out, te, c.sampled)
	}
	if _, te := call(c, "fixture_log", `{}`); te != nil || len(c.logs) != 1 || c.logs[0] != "INFO hello from wasm" {
		t.Fatalf("log forwarded: %v %v", te, c.logs)
	}

	tests := []struct {
		name, tool, input string
		client            Client
		code, msg         string
	}{
		{"no client", "fixture_elicit", elicitReq, nil, "UNSUPPORTED", "no client"},
		{"client without elicitation", "fixture_elicit", elicitReq, &fakeClient{elicitErr: ErrUnsupported}, "UNSUPPORTED", "did not declare"},
		{"client without sampling", "fixture_sample", `{"messages":[]}`, &fakeClient{sampleErr: ErrUnsupported}, "UNSUPPORTED", "did not declare"},
		{"sampling fails", "fixture_sample", `{"messages":[]}`, &fakeClient{sampleErr: errors.New("model overloaded")}, "CLIENT_ERROR", "model overloaded"},
		{"elicit without schema", "fixture_elicit", `{"message":"hi"}`, c, "INVALID_REQUEST", "requestedSchema"},
		{"elicit with unknown field", "fixture_elicit", `{"message":"hi","requestedSchema":{},"x":1}`, c, "INVALID_REQUEST", "requestedSchema"},
		{"sample not an object", "fixture_sample", `[1]`, c, "INVALID_REQUEST", "params object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, te := call(tt.client, tt.tool, tt.input)
			if te == nil || te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %+v, want %s containing %q", te, tt.code, tt.msg)
			}
			if tt.msg == "did not declare" && !strings.Contains(string(te.Details), `"requiredCapabilities"`) {
				t.Fatalf("details %s do not name the required capability", te.Details)
			}
		})
	}
}
