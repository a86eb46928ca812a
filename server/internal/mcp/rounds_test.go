package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/roundstate"
	"github.com/workbench-dev/workbench/toolcall"
)

func TestBindingOf(t *testing.T) {
	args := json.RawMessage(`{"a":1,"b":[1,2]}`)
	base := bindingOf("u1", "tools/call", "t", args)
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"key order and spacing", base, bindingOf("u1", "tools/call", "t", json.RawMessage(` {"b": [1, 2], "a": 1}`)), true},
		{"map arguments", base, bindingOf("u1", "tools/call", "t", map[string]any{"b": []int{1, 2}, "a": 1}), true},
		{"absent arguments are empty", bindingOf("u1", "tools/call", "t", json.RawMessage(nil)), bindingOf("u1", "tools/call", "t", json.RawMessage(`{}`)), true},
		{"nil prompt arguments are empty", bindingOf("u1", "prompts/get", "p", map[string]string(nil)), bindingOf("u1", "prompts/get", "p", map[string]string{}), true},
		{"other value", base, bindingOf("u1", "tools/call", "t", json.RawMessage(`{"a":2,"b":[1,2]}`)), false},
		{"big numbers stay exact", bindingOf("u1", "tools/call", "t", json.RawMessage(`{"a":12345678901234567891}`)),
			bindingOf("u1", "tools/call", "t", json.RawMessage(`{"a":12345678901234567890}`)), false},
		{"other user", base, bindingOf("u2", "tools/call", "t", args), false},
		{"other method", base, bindingOf("u1", "prompts/get", "t", args), false},
		{"name cannot spill into user", base, bindingOf(`u1" "tools/call`, "t", "", args), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.a == tt.b) != tt.same {
				t.Fatalf("%s vs %s: same = %v, want %v", tt.a, tt.b, tt.a == tt.b, tt.same)
			}
		})
	}
}

func TestRoundClient_Ask(t *testing.T) {
	states, err := roundstate.New(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc := &roundClient{binding: "b", used: map[string]roundstate.Answer{}, answers: map[string]roundstate.Answer{
		"name":  {Method: toolcall.MethodElicit, Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)},
		"roots": {Method: toolcall.MethodElicit, Result: json.RawMessage(`{"action":"decline"}`)}, // answers the wrong kind
	}}
	elicit := json.RawMessage(`{"message":"Name?","requestedSchema":{"type":"object"}}`)
	res, err := rc.Ask(context.Background(), []toolcall.InputRequest{{Key: "name", Method: toolcall.MethodElicit, Params: elicit}})
	if err != nil || string(res["name"]) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Fatalf("answered: %s %v", res, err)
	}
	if _, _, ok, _ := rc.inputRequired(states, failure.InputRequired); ok {
		t.Fatal("nothing is missing yet")
	}
	_, err = rc.Ask(context.Background(), []toolcall.InputRequest{
		{Key: "roots", Method: toolcall.MethodListRoots, Params: json.RawMessage(`{}`)},
		{Key: "ask", Method: toolcall.MethodSample, Params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`)},
	})
	if !errors.Is(err, toolcall.ErrInputRequired) {
		t.Fatalf("missing answers: %v", err)
	}
	if _, _, ok, _ := rc.inputRequired(states, "TIMEOUT"); ok {
		t.Fatal("a call that failed otherwise is no input-required result")
	}
	reqs, state, ok, err := rc.inputRequired(states, failure.InputRequired)
	if !ok || err != nil || len(reqs) != 2 {
		t.Fatalf("inputRequired = %v %v %v", reqs, ok, err)
	}
	if _, isRoots := reqs["roots"].(*sdk.ListRootsParams); !isRoots {
		t.Fatalf("roots request = %T", reqs["roots"])
	}
	if p, isSample := reqs["ask"].(*sdk.CreateMessageParams); !isSample || p.MaxTokens != 5 {
		t.Fatalf("sampling request = %#v", reqs["ask"])
	}
	carried, err := states.Open(state, "b")
	if err != nil || len(carried) != 1 || carried["name"].Method != toolcall.MethodElicit {
		t.Fatalf("the state carries the used answers only: %v %v", carried, err)
	}
	if _, err := states.Open(state, "other"); !errors.Is(err, roundstate.ErrInvalid) {
		t.Fatalf("state of another binding: %v", err)
	}
}
