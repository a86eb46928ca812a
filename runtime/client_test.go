package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// fakeClient records what a plugin sends back to its MCP client and
// answers from fixed results by method.
type fakeClient struct {
	logs     []string
	asked    []toolcall.InputRequest
	lacks    map[string]bool            // methods whose capability is missing
	answers  map[string]json.RawMessage // by method
	err      error
	answered int // answers given before err (toolcall.ErrInputRequired)
}

func (c *fakeClient) Log(level slog.Level, msg string) {
	c.logs = append(c.logs, level.String()+" "+msg)
}

func (c *fakeClient) Supports(method string) bool { return !c.lacks[method] }

func (c *fakeClient) Ask(_ context.Context, reqs []toolcall.InputRequest) (map[string]json.RawMessage, error) {
	c.asked = append(c.asked, reqs...)
	if c.err != nil {
		return nil, c.err
	}
	out := map[string]json.RawMessage{}
	for _, r := range reqs {
		if a, ok := c.answers[r.Method]; ok {
			out[r.Key] = a
		}
	}
	return out, nil
}

func answering() *fakeClient {
	return &fakeClient{answers: map[string]json.RawMessage{
		toolcall.MethodElicit:    json.RawMessage(`{"action":"accept","content":{"confirm":true},"_meta":{"x":1}}`),
		toolcall.MethodSample:    json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"yes"},"model":"m"}`),
		toolcall.MethodListRoots: json.RawMessage(`{"roots":[{"uri":"file:///r"}]}`),
	}}
}

func TestPlugin_Call_talkBack(t *testing.T) {
	p := loadHostile(t, Config{})
	call := func(c toolcall.Client, tool, input string) (string, *failure.Error) {
		out, err := p.Call(context.Background(), toolcall.Call{Tool: tool, UserID: "u1", Input: []byte(input), Client: c})
		var te *failure.Error
		errors.As(err, &te)
		return string(out), te
	}
	elicitReq := `{"message":"Delete repo octo/x?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}`

	c := answering()
	out, te := call(c, "fixture_elicit", elicitReq)
	if te != nil || out != `{"action":"accept","content":{"confirm":true}}` || len(c.asked) != 1 ||
		c.asked[0].Key != "elicit-1" || c.asked[0].Method != toolcall.MethodElicit || !strings.Contains(string(c.asked[0].Params), "Delete repo octo/x?") {
		t.Fatalf("elicit: %s %v %+v", out, te, c.asked)
	}
	out, te = call(c, "fixture_sample", `{"messages":[],"maxTokens":10}`)
	if te != nil || !strings.Contains(out, `"text":"yes"`) || c.asked[1].Key != "sample-1" || string(c.asked[1].Params) != `{"messages":[],"maxTokens":10}` {
		t.Fatalf("sample: %s %v %+v", out, te, c.asked)
	}
	out, te = call(c, "fixture_input", `{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}},"roots":{"method":"roots/list"},"ask":{"method":"sampling/createMessage","params":{"messages":[]}}}`)
	var got map[string]json.RawMessage
	if te != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 3 || !strings.Contains(string(got["roots"]), "file:///r") {
		t.Fatalf("input: %s %v", out, te)
	}
	if keys := fmt.Sprint(c.asked[2].Key, c.asked[3].Key, c.asked[4].Key); keys != "askrootswho" || string(c.asked[3].Params) != "{}" {
		t.Fatalf("input asked %+v, want the keys in order and roots/list params {}", c.asked[2:])
	}
	if _, te := call(c, "fixture_log", `{}`); te != nil || len(c.logs) != 1 || c.logs[0] != "INFO hello from wasm" {
		t.Fatalf("log forwarded: %v %v", te, c.logs)
	}

	eleven := map[string]any{}
	for i := range 11 {
		eleven[fmt.Sprintf("k%d", i)] = map[string]string{"method": "roots/list"}
	}
	tooMany, _ := json.Marshal(eleven)
	tests := []struct {
		name, tool, input string
		client            toolcall.Client
		code              failure.Code
		msg, details      string
	}{
		{"no client", "fixture_elicit", elicitReq, nil, failure.Unsupported, "no client", ""},
		{"client without elicitation", "fixture_elicit", elicitReq, &fakeClient{lacks: map[string]bool{toolcall.MethodElicit: true}}, failure.Unsupported, "did not declare", `{"requiredCapabilities":{"elicitation":{}}}`},
		{"client without sampling", "fixture_sample", `{"messages":[]}`, &fakeClient{lacks: map[string]bool{toolcall.MethodSample: true}}, failure.Unsupported, "did not declare", `{"requiredCapabilities":{"sampling":{}}}`},
		{"input without roots and sampling", "fixture_input", `{"a":{"method":"roots/list"},"b":{"method":"sampling/createMessage","params":{}},"c":{"method":"roots/list"}}`,
			&fakeClient{lacks: map[string]bool{toolcall.MethodSample: true, toolcall.MethodListRoots: true}}, failure.Unsupported, "did not declare", `{"requiredCapabilities":{"roots":{},"sampling":{}}}`},
		{"sampling fails", "fixture_sample", `{"messages":[]}`, &fakeClient{err: errors.New("model overloaded")}, failure.ClientError, "model overloaded", ""},
		{"client answers nothing", "fixture_sample", `{"messages":[]}`, &fakeClient{}, failure.ClientError, "no result object", ""},
		{"elicit answer not an elicitation result", "fixture_elicit", elicitReq, &fakeClient{answers: map[string]json.RawMessage{toolcall.MethodElicit: json.RawMessage(`{"roots":[]}`)}}, failure.ClientError, "not an elicitation result", ""},
		{"elicit without schema", "fixture_elicit", `{"message":"hi"}`, c, failure.InvalidRequest, "requestedSchema", ""},
		{"elicit with unknown field", "fixture_elicit", `{"message":"hi","requestedSchema":{},"x":1}`, c, failure.InvalidRequest, "requestedSchema", ""},
		{"sample not an object", "fixture_sample", `[1]`, c, failure.InvalidRequest, "params object", ""},
		{"input empty", "fixture_input", `{}`, c, failure.InvalidRequest, "at least one", ""},
		{"input bad key", "fixture_input", `{"a b":{"method":"roots/list"}}`, c, failure.InvalidRequest, `"a b"`, ""},
		{"input unknown method", "fixture_input", `{"a":{"method":"tools/call"}}`, c, failure.InvalidRequest, "tools/call", ""},
		{"input params not an object", "fixture_input", `{"a":{"method":"roots/list","params":[1]}}`, c, failure.InvalidRequest, "params must be an object", ""},
		{"input unknown field", "fixture_input", `{"a":{"method":"roots/list","id":1}}`, c, failure.InvalidRequest, "at least one", ""},
		{"input over the per-call limit", "fixture_input", string(tooMany), c, failure.TooManyRequests, "at most 10", ""},
		{"input key asked twice", "fixture_input_twice", `{"a":{"method":"roots/list"}}`, c, failure.InvalidRequest, `"a" was already asked`, ""},
		{"refused key is not asked", "fixture_input_twice", `{"a":{"method":"roots/list"}}`, &fakeClient{lacks: map[string]bool{toolcall.MethodListRoots: true}}, failure.Unsupported, "did not declare", `{"requiredCapabilities":{"roots":{}}}`},
		{"input required ends the call", "fixture_input", `{"a":{"method":"roots/list"}}`, &fakeClient{err: fmt.Errorf("round 1: %w", toolcall.ErrInputRequired)}, failure.InputRequired, "answer input requests", ""},
		{"elicit input required", "fixture_elicit", elicitReq, &fakeClient{err: toolcall.ErrInputRequired}, failure.InputRequired, "answer input requests", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, te := call(tt.client, tt.tool, tt.input)
			if te == nil || te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %+v, want %s containing %q", te, tt.code, tt.msg)
			}
			if string(te.Details) != tt.details {
				t.Fatalf("details %s, want %s", te.Details, tt.details)
			}
		})
	}
	// The instances ended by INPUT_REQUIRED were discarded; calls go on.
	if out, te := call(answering(), "fixture_sample", `{"messages":[]}`); te != nil || !strings.Contains(out, "yes") {
		t.Fatalf("after input required: %s %v", out, te)
	}
}
