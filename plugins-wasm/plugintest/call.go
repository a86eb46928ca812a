package plugintest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// CallTimeout bounds one tool call made through Call.
const CallTimeout = 30 * time.Second

// Call runs tool as user with input, within CallTimeout. progress may be
// nil.
func Call(p *runtime.Plugin, user, tool, input string, progress func(toolcall.Progress)) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	return p.Call(ctx, toolcall.Call{Tool: tool, UserID: user, Input: []byte(input), Progress: progress})
}

// CallInto runs a tool that must succeed and decodes its output into out.
func CallInto(t testing.TB, p *runtime.Plugin, user, tool, input string, out any) {
	t.Helper()
	raw, err := Call(p, user, tool, input, nil)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, input, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s output %s: %v", tool, raw, err)
	}
}

// ToolError runs a tool that must fail and returns its error.
func ToolError(t testing.TB, p *runtime.Plugin, user, tool, input string) *failure.Error {
	t.Helper()
	out, err := Call(p, user, tool, input, nil)
	var te *failure.Error
	if !errors.As(err, &te) {
		t.Fatalf("%s(%s) = %s, %v; want a *failure.Error", tool, input, out, err)
	}
	return te
}

// AsToolError returns err, which a call that gave out returned, as a
// *failure.Error, or fails the test.
func AsToolError(t testing.TB, out json.RawMessage, err error) *failure.Error {
	t.Helper()
	var te *failure.Error
	if !errors.As(err, &te) {
		t.Fatalf("got %s, %v; want a *failure.Error", out, err)
	}
	return te
}
