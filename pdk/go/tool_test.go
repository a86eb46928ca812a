//go:build !wasip1

package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type echoInput struct {
	Owner   string   `json:"owner" pattern:"^[a-z]+$"`
	State   string   `json:"state,omitempty" enum:"open,closed" default:"open"`
	PerPage int      `json:"per_page,omitempty" minimum:"1" maximum:"100" default:"30"`
	Labels  []string `json:"labels,omitempty"`
}

type echoOutput struct {
	Owner   string   `json:"owner"`
	State   string   `json:"state"`
	PerPage int      `json:"per_page"`
	Labels  []string `json:"labels,omitempty"`
	Tool    string   `json:"tool"`
}

var echoTool = Tool("test_echo", "Echoes its input.", func(ctx Context, in echoInput) (echoOutput, error) {
	return echoOutput{Owner: in.Owner, State: in.State, PerPage: in.PerPage, Labels: in.Labels, Tool: ctx.Tool()}, nil
}, ReadOnly())

// decodedError parses an error output.
func decodedError(t *testing.T, out []byte) Error {
	t.Helper()
	var e Error
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("error output %s is not JSON: %v", out, err)
	}
	return e
}

func TestToolDef_Run_input(t *testing.T) {
	tests := []struct {
		name       string
		input      string
		wantStatus uint32
		wantOut    string // for status 0
		wantCode   string // for status 1
		wantMsg    string // substring of the error message
		wantField  string // details.field
	}{
		{name: "valid input with defaults applied", input: `{"owner":"octo"}`,
			wantOut: `{"owner":"octo","state":"open","per_page":30,"tool":"test_echo"}`},
		{name: "explicit values win over defaults", input: `{"owner":"octo","state":"closed","per_page":5,"labels":["a"]}`,
			wantOut: `{"owner":"octo","state":"closed","per_page":5,"labels":["a"],"tool":"test_echo"}`},
		{name: "unknown field", input: `{"owner":"octo","bogus":1}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `unknown field "bogus"`, wantField: "bogus"},
		{name: "wrong type", input: `{"owner":"octo","per_page":"ten"}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "per_page": expected integer, got string`, wantField: "per_page"},
		{name: "wrong type in a list", input: `{"owner":"octo","labels":[1]}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "labels[0]": expected string, got integer`, wantField: "labels[0]"},
		{name: "missing required field", input: `{"state":"open"}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `missing required field "owner"`, wantField: "owner"},
		{name: "empty input misses the required field", input: ``, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `"owner"`},
		{name: "value outside the enum", input: `{"owner":"octo","state":"merged"}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "state": must be one of "open", "closed"; got "merged"`, wantField: "state"},
		{name: "value above the maximum", input: `{"owner":"octo","per_page":101}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "per_page": must be at most 100, got 101`, wantField: "per_page"},
		{name: "value below the minimum", input: `{"owner":"octo","per_page":0}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "per_page": must be at least 1, got 0`, wantField: "per_page"},
		{name: "value not matching the pattern", input: `{"owner":"Octo!"}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `field "owner": "Octo!" does not match the pattern ^[a-z]+$`, wantField: "owner"},
		{name: "not an object", input: `[1,2]`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `must be a JSON object`},
		{name: "null is not an object", input: `null`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `must be a JSON object`},
		{name: "trailing data", input: `{"owner":"octo"} {}`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `not valid JSON: invalid character '{' after top-level value`},
		{name: "invalid JSON", input: `{"owner":`, wantStatus: 1,
			wantCode: CodeInvalidArguments, wantMsg: `not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &TestHost{}
			status, out := h.Call(echoTool, []byte(tt.input))
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (output %s)", status, tt.wantStatus, out)
			}
			if status == statusOK {
				assertSameJSON(t, out, tt.wantOut)
				return
			}
			e := decodedError(t, out)
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error = %s %q, want %s containing %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
			}
			if tt.wantField != "" {
				details, _ := e.Details.(map[string]any)
				if details["field"] != tt.wantField {
					t.Errorf("details = %v, want field %q", e.Details, tt.wantField)
				}
			}
		})
	}
}

type nestedInput struct {
	Inner echoInput            `json:"inner"`
	List  []echoInput          `json:"list,omitempty"`
	Map   map[string]echoInput `json:"map,omitempty"`
	Ptr   *echoInput           `json:"ptr,omitempty"`
	Big   int32                `json:"big,omitempty" minimum:"-1e40" maximum:"1e40"`
	Flag  *bool                `json:"flag,omitempty" default:"true"`
}

var nestedTool = Tool("test_nested", "Echoes nested input.", func(_ Context, in nestedInput) (nestedInput, error) {
	return in, nil
})

func TestToolDef_Run_nestedInput(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantMsg   string
		wantField string
	}{
		{"missing field of a nested object", `{"inner":{}}`, `missing required field "inner.owner"`, "inner.owner"},
		{"bound in a list item", `{"inner":{"owner":"a"},"list":[{"owner":"b"},{"owner":"c","per_page":1000}]}`,
			`field "list[1].per_page": must be at most 100, got 1000`, "list[1].per_page"},
		{"enum in a map value", `{"inner":{"owner":"a"},"map":{"x":{"owner":"b","state":"zz"}}}`,
			`field "map.x.state": must be one of`, "map.x.state"},
		{"unknown field in a list item", `{"inner":{"owner":"a"},"list":[{"owner":"b","extra":true}]}`,
			`unknown field "list[0].extra"`, "list[0].extra"},
		{"number too large for the Go type", `{"inner":{"owner":"a","per_page":50},"big":1e30}`,
			`field "big": expected integer, got number 1e30`, "big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := (&TestHost{}).Call(nestedTool, []byte(tt.input))
			if status != statusError {
				t.Fatalf("status = %d, want 1 (output %s)", status, out)
			}
			e := decodedError(t, out)
			details, _ := e.Details.(map[string]any)
			if e.Code != CodeInvalidArguments || !strings.Contains(e.Message, tt.wantMsg) || details["field"] != tt.wantField {
				t.Errorf("error = %+v, want INVALID_ARGUMENTS containing %q for field %q", e, tt.wantMsg, tt.wantField)
			}
		})
	}
	t.Run("defaults apply inside nested objects", func(t *testing.T) {
		status, out := (&TestHost{}).Call(nestedTool, []byte(`{"inner":{"owner":"a"},"list":[{"owner":"b"}]}`))
		if status != statusOK {
			t.Fatalf("status = %d, output %s", status, out)
		}
		assertSameJSON(t, out, `{"inner":{"owner":"a","state":"open","per_page":30},"list":[{"owner":"b","state":"open","per_page":30}],"flag":true}`)
	})
	t.Run("defaults apply inside maps and pointers, never over given values", func(t *testing.T) {
		status, out := (&TestHost{}).Call(nestedTool, []byte(`{"inner":{"owner":"a","state":"closed"},"map":{"k":{"owner":"m"}},"ptr":{"owner":"p","per_page":7},"flag":false}`))
		if status != statusOK {
			t.Fatalf("status = %d, output %s", status, out)
		}
		assertSameJSON(t, out, `{"inner":{"owner":"a","state":"closed","per_page":30},"map":{"k":{"owner":"m","state":"open","per_page":30}},`+
			`"ptr":{"owner":"p","state":"open","per_page":7},"flag":false}`)
	})
}

type noInput struct{}

type unencodable struct {
	F float64 `json:"f"`
}

var errPlain = errors.New("plain failure")

func TestToolDef_Run_errors(t *testing.T) {
	tests := []struct {
		name     string
		handler  func(Context, noInput) (any, error)
		wantCode string
		wantMsg  string
	}{
		{"plain error becomes TOOL_ERROR", func(Context, noInput) (any, error) { return nil, errPlain },
			CodeToolError, "plain failure"},
		{"*Error keeps its code", func(Context, noInput) (any, error) { return nil, NotFound("repository %s not found", "o/r") },
			CodeNotFound, "repository o/r not found"},
		{"wrapped *Error keeps its code and the wrapper's message", func(Context, noInput) (any, error) {
			return nil, fmt.Errorf("listing issues: %w", RateLimited("slow down"))
		}, CodeRateLimited, "listing issues: RATE_LIMITED: slow down"},
		{"a code that is not upper snake case becomes TOOL_ERROR", func(Context, noInput) (any, error) {
			return nil, Errorf("not-a-code", "odd")
		}, CodeToolError, "odd"},
		{"an empty message gets one", func(Context, noInput) (any, error) { return nil, &Error{Code: CodeConflict} },
			CodeConflict, "tool failed with CONFLICT"},
		{"panic becomes TOOL_ERROR with the panic message", func(Context, noInput) (any, error) { panic("boom at line 3") },
			CodeToolError, "panic in tool test_fail: boom at line 3"},
		{"nil map write panic is recovered", func(Context, noInput) (any, error) {
			var m map[string]int
			m["x"] = 1
			return nil, nil
		}, CodeToolError, "assignment to entry in nil map"},
		{"output that cannot be encoded", func(Context, noInput) (any, error) { return unencodable{F: inf()}, nil },
			CodeToolError, "encoding the result of test_fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &TestHost{}
			status, out := h.Call(Tool("test_fail", "Fails.", tt.handler), []byte(`{}`))
			if status != statusError {
				t.Fatalf("status = %d, want 1 (output %s)", status, out)
			}
			e := decodedError(t, out)
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error = %s %q, want %s containing %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func inf() float64 {
	zero := 0.0
	return 1 / zero
}

func TestToolDef_Run_panicIsLogged(t *testing.T) {
	h := &TestHost{}
	h.Call(Tool("test_panic", "Panics.", func(Context, noInput) (noInput, error) { panic("kaboom") }), nil)
	logs := h.Logs()
	if len(logs) != 1 || logs[0].Level != "error" || !strings.Contains(logs[0].Message, "kaboom") ||
		!strings.Contains(logs[0].Message, "goroutine") {
		t.Errorf("logs = %+v, want one error record with the panic and its stack", logs)
	}
}

func TestToolDef_Run_typedNilErrorIsSuccess(t *testing.T) {
	h := &TestHost{}
	status, out := h.Call(Tool("test_nil", "Returns a typed nil error.", func(Context, noInput) (echoOutput, error) {
		var e *Error
		return echoOutput{Owner: "x"}, e
	}), nil)
	if status != statusOK {
		t.Fatalf("status = %d (output %s), want 0", status, out)
	}
}

func TestToolDef_Run_inputNotFromWbAlloc(t *testing.T) {
	h := &TestHost{}
	status, out := h.run(func() uint32 { return echoTool.Run(0xfffffff0, 4) })
	if status != statusError {
		t.Fatalf("status = %d, want 1", status)
	}
	if e := decodedError(t, out); e.Code != CodeToolError || !strings.Contains(e.Message, "not allocated by wb_alloc") {
		t.Errorf("error = %+v", e)
	}
}

func TestPinnedInputs(t *testing.T) {
	var p pinnedInputs
	if got := p.alloc(maxInputBytes + 1); got != 0 {
		t.Errorf("alloc over the cap = %d, want 0", got)
	}
	stale := p.alloc(8)
	ptr := p.alloc(16)
	if stale == 0 || ptr == 0 || stale == ptr {
		t.Fatalf("alloc returned %d and %d", stale, ptr)
	}
	if _, ok := p.take(ptr, 17); ok {
		t.Error("take accepted a size larger than the allocation")
	}
	// The failed take released everything, including ptr.
	if _, ok := p.take(ptr, 16); ok {
		t.Error("take found a buffer after it was released")
	}
	ptr = p.alloc(16)
	stale = p.alloc(4)
	buf, ok := p.take(ptr, 10)
	if !ok || len(buf) != 10 {
		t.Fatalf("take = %d bytes, %v", len(buf), ok)
	}
	if len(p.bufs) != 0 {
		t.Errorf("%d buffers still pinned after take, want 0 (stale %d)", len(p.bufs), stale)
	}
	if buf, ok := p.take(0, 0); !ok || buf != nil {
		t.Errorf("empty input = %v, %v", buf, ok)
	}
	if got := p.alloc(0); got == 0 {
		t.Error("alloc(0) returned 0")
	}
}

func TestToolError(t *testing.T) {
	tests := []struct {
		err      error
		wantCode string
		wantMsg  string
	}{
		{errPlain, CodeToolError, "plain failure"},
		{NotFound("gone"), CodeNotFound, "gone"},
		{fmt.Errorf("ctx: %w", Conflict("taken")), CodeConflict, "ctx: CONFLICT: taken"},
		{&Error{Code: "lower", Message: "m"}, CodeToolError, "m"},
		{&Error{Code: "9LIVES", Message: "m"}, CodeToolError, "m"},
		{&Error{Code: "A_1", Message: "m"}, "A_1", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			got := toolError(tt.err)
			if got.Code != tt.wantCode || got.Message != tt.wantMsg {
				t.Errorf("toolError = %s %q, want %s %q", got.Code, got.Message, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestError_WithDetails(t *testing.T) {
	base := NotFound("x")
	withDetails := base.WithDetails(map[string]int{"n": 1})
	if base.Details != nil {
		t.Error("WithDetails changed the original")
	}
	b, err := json.Marshal(withDetails)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, b, `{"code":"NOT_FOUND","message":"x","details":{"n":1}}`)
	b, _ = json.Marshal(base)
	assertSameJSON(t, b, `{"code":"NOT_FOUND","message":"x"}`)
}

func TestToolDef_Run_callsDoNotShareMemory(t *testing.T) {
	var kept []echoInput
	keep := Tool("test_keep", "Keeps its inputs.", func(_ Context, in echoInput) (echoOutput, error) {
		kept = append(kept, in)
		return echoOutput{Owner: in.Owner, Labels: in.Labels}, nil
	})
	big := strings.Repeat("x", maxSpareOutput+1)
	tests := []struct {
		input   string
		wantOut string
	}{
		{`{"owner":"first","labels":["one","two"]}`, `{"owner":"first","state":"","per_page":0,"labels":["one","two"],"tool":""}`},
		{`{"owner":"second","labels":["three"]}`, `{"owner":"second","state":"","per_page":0,"labels":["three"],"tool":""}`},
		{`{"owner":"third","labels":["` + big + `"]}`, `{"owner":"third","state":"","per_page":0,"labels":["` + big + `"],"tool":""}`},
		{`{"owner":"fourth","labels":["esc\"aped"]}`, `{"owner":"fourth","state":"","per_page":0,"labels":["esc\"aped"],"tool":""}`},
	}
	h := &TestHost{}
	for _, tt := range tests {
		status, out := h.Call(keep, []byte(tt.input))
		if status != statusOK || string(out) != tt.wantOut {
			t.Fatalf("input %.60s: status %d, output %.120s", tt.input, status, out)
		}
	}
	// Every value a handler kept is still what it received.
	want := []echoInput{
		{Owner: "first", State: "open", PerPage: 30, Labels: []string{"one", "two"}},
		{Owner: "second", State: "open", PerPage: 30, Labels: []string{"three"}},
		{Owner: "third", State: "open", PerPage: 30, Labels: []string{big}},
		{Owner: "fourth", State: "open", PerPage: 30, Labels: []string{`esc"aped`}},
	}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept inputs changed:\n got %.200v\nwant %.200v", kept, want)
	}
}

func TestToolDef_Run_inputTypes(t *testing.T) {
	type named map[string]int
	tests := []struct {
		name  string
		tool  *ToolDef
		input string
		want  string
	}{
		{"pointer to a struct", Tool("test_ptr", "P.", func(_ Context, in *echoInput) (*echoInput, error) { return in, nil }),
			`{"owner":"a"}`, `{"owner":"a","state":"open","per_page":30}`},
		{"a map", Tool("test_map", "M.", func(_ Context, in named) (named, error) { return in, nil }),
			`{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{"empty input to a map", Tool("test_map2", "M.", func(_ Context, in named) (named, error) { return in, nil }),
			``, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := (&TestHost{}).Call(tt.tool, []byte(tt.input))
			if status != statusOK || string(out) != tt.want {
				t.Errorf("status %d, output %s, want %s", status, out, tt.want)
			}
		})
	}
}
