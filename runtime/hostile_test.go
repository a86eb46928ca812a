package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

func callErr(t *testing.T, p *Plugin, tool, user, input string) *failure.Error {
	t.Helper()
	out, err := p.Call(context.Background(), toolcall.Call{Tool: tool, UserID: user, Input: []byte(input)})
	var te *failure.Error
	if !errors.As(err, &te) {
		t.Fatalf("%s: want a *failure.Error, got output %s and error %v", tool, out, err)
	}
	return te
}

func callOK(t *testing.T, p *Plugin, tool, user, input string) string {
	t.Helper()
	out, err := p.Call(context.Background(), toolcall.Call{Tool: tool, UserID: user, Input: []byte(input)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return string(out)
}

func TestPlugin_Call_echoAndStructuredError(t *testing.T) {
	p := loadHostile(t, Config{})
	if got := callOK(t, p, "fixture_echo", "u1", `{"hello":"world"}`); got != `{"hello":"world"}` {
		t.Fatalf("echo = %s", got)
	}
	te := callErr(t, p, "fixture_fail", "u1", `{}`)
	if te.Code != "NOT_FOUND" || te.Message != "nothing here" || string(te.Details) != `{"id":7}` {
		t.Fatalf("fail = %+v", te)
	}
	if te := callErr(t, p, "fixture_nope", "u1", `{}`); te.Code != failure.UnknownTool {
		t.Fatalf("unknown tool = %+v", te)
	}
	if te := callErr(t, p, "fixture_echo", "u1", `{"broken"`); te.Code != failure.InvalidArguments {
		t.Fatalf("bad JSON input = %+v", te)
	}
}

// TestPlugin_Call_hostile runs every misbehaviour of testdata/hostile.wat and
// checks that each ends in a precise error and that the plugin keeps working.
func TestPlugin_Call_hostile(t *testing.T) {
	p := loadHostile(t, Config{Settings: MapSettings{"fixture": {"base_url": "https://api.test"}}})
	tests := []struct {
		tool string
		code failure.Code
		msg  string
	}{
		{"fixture_loop", failure.Timeout, "deadline"},
		{"fixture_trap", failure.Trap, "unreachable"},
		{"fixture_oom", failure.OutOfMemory, "64 pages"},
		{"fixture_exit", failure.Trap, "exited with code 3"},
		{"fixture_big", failure.OutputTooLarge, "4096 bytes is over the limit of 1024"},
		{"fixture_bad_json", failure.BadOutput, "not valid JSON"},
		{"fixture_bad_status", failure.BadOutput, "status 7"},
		{"fixture_no_output", failure.BadOutput, "without calling output_set"},
		{"fixture_bad_output_set", failure.BadPointer, "output_set"},
		{"fixture_bad_result_read", failure.BadPointer, "result_read"},
		{"fixture_bad_log", failure.BadPointer, "log"},
		{"fixture_bad_config_get", failure.BadPointer, "config_get"},
		{"fixture_bad_progress", failure.BadPointer, "progress"},
		{"fixture_bad_http_head", failure.BadPointer, "http_request request"},
		{"fixture_bad_http_body", failure.BadPointer, "http_request body"},
		{"fixture_len_overflow", failure.OutputTooLarge, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			input := `{}`
			if tt.tool == "fixture_bad_http_body" {
				input = `{"url":"https://api.test/"}`
			}
			te := callErr(t, p, tt.tool, "u1", input)
			if te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, tt.code, tt.msg)
			}
			// The plugin still serves the same user afterwards.
			if got := callOK(t, p, "fixture_echo", "u1", `[1]`); got != `[1]` {
				t.Fatalf("echo after %s = %s", tt.tool, got)
			}
		})
	}
	st := p.Stats()
	if st.ErrorsByCode[failure.BadPointer] != 7 || st.ErrorsByCode[failure.Timeout] != 1 {
		t.Fatalf("errors by code = %v", st.ErrorsByCode)
	}
	// The recent errors name the tools in call order, without messages.
	if len(st.Recent) != len(tests) || st.Recent[0].Tool != "fixture_loop" || st.Recent[len(tests)-1].Code != failure.OutputTooLarge {
		t.Fatalf("recent errors = %+v", st.Recent)
	}
	if p.ABI() != ImportModule || st.MaxPages == 0 || st.MaxPages > st.MemoryPages || st.PoolUsers != 1 {
		t.Fatalf("ABI %q, max pages %d of %d, pool users %d", p.ABI(), st.MaxPages, st.MemoryPages, st.PoolUsers)
	}
}

func TestPlugin_Call_memoryCap(t *testing.T) {
	p := loadHostile(t, Config{}) // the manifest asks for 64 pages
	if got := p.Limits().MemoryPages; got != 64 {
		t.Fatalf("memory limit = %d pages, want the manifest's 64", got)
	}
	out := callOK(t, p, "fixture_grow", "u1", `{}`)
	var pages int
	if err := json.Unmarshal([]byte(out), &pages); err != nil {
		t.Fatal(err)
	}
	if pages > 64 || pages < 56 {
		t.Fatalf("grew to %d pages; want the cap of 64 to stop it in its last 16-page step", pages)
	}
	if got := callOK(t, p, "fixture_echo", "u1", `{}`); got != `{}` {
		t.Fatalf("echo after grow = %s", got)
	}
}

func TestPlugin_Call_memoryCeilingCutsRequest(t *testing.T) {
	ceiling := CeilingLimits
	ceiling.MemoryPages = 32
	p := loadHostile(t, Config{Ceiling: ceiling})
	if got := p.Limits().MemoryPages; got != 32 {
		t.Fatalf("memory limit = %d, want the operator ceiling 32", got)
	}
	out := callOK(t, p, "fixture_grow", "u1", `{}`)
	if out != "32" && out != "24" {
		t.Fatalf("grew to %s pages under a ceiling of 32", out)
	}
}

// TestPlugin_Call_noCrossUserLeak: the fixture returns the previous input it
// saw on its instance; another user must never see it.
func TestPlugin_Call_noCrossUserLeak(t *testing.T) {
	p := loadHostile(t, Config{})
	if got := callOK(t, p, "fixture_leak", "alice", `{"secret":"alice-1"}`); got != "null" {
		t.Fatalf("first call = %s", got)
	}
	// Alice's warm instance remembers her input: the fixture is honest.
	if got := callOK(t, p, "fixture_leak", "alice", `{"secret":"alice-2"}`); got != `{"secret":"alice-1"}` {
		t.Fatalf("alice's second call = %s, want her own previous input", got)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("user-%d", i%5)
			out, err := p.Call(context.Background(), toolcall.Call{Tool: "fixture_leak", UserID: user, Input: []byte(`{"secret":"` + user + `"}`)})
			if err != nil {
				t.Error(err)
				return
			}
			if bytes.Contains(out, []byte("alice")) || (string(out) != "null" && !bytes.Contains(out, []byte(user))) {
				t.Errorf("%s saw %s", user, out)
			}
		}()
	}
	wg.Wait()
}

func TestPlugin_Call_timeoutThenBusy(t *testing.T) {
	p := loadHostile(t, Config{}) // fixture_loop: 300 ms deadline, one call at a time
	started := make(chan struct{})
	done := make(chan *failure.Error)
	go func() {
		close(started)
		_, err := p.Call(context.Background(), toolcall.Call{Tool: "fixture_loop", UserID: "u1"})
		done <- err.(*failure.Error)
	}()
	<-started
	time.Sleep(50 * time.Millisecond) // let the first call take the only slot
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, toolcall.Call{Tool: "fixture_loop", UserID: "u2"})
	if te, ok := err.(*failure.Error); !ok || te.Code != failure.Busy {
		t.Fatalf("second call = %v, want BUSY", err)
	}
	if te := <-done; te.Code != failure.Timeout {
		t.Fatalf("first call = %+v, want TIMEOUT", te)
	}
}

func TestPlugin_Call_cancel(t *testing.T) {
	p := loadHostile(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err := p.Call(ctx, toolcall.Call{Tool: "fixture_loop", UserID: "u1"})
	if te, ok := err.(*failure.Error); !ok || te.Code != failure.Canceled {
		t.Fatalf("canceled call = %v, want CANCELED", err)
	}
}

func TestPlugin_Call_sandbox(t *testing.T) {
	t.Setenv("WORKBENCH_SECRET_PROBE", "must-not-leak")
	p := loadHostile(t, Config{})
	var got []int
	if err := json.Unmarshal([]byte(callOK(t, p, "fixture_sandbox", "u1", `{}`)), &got); err != nil {
		t.Fatal(err)
	}
	const errnoBadf = 8
	if got[0] != errnoBadf || got[1] == 0 {
		t.Fatalf("fd 3 prestat errno %d, path_open errno %d; want EBADF and a failed open (no preopened directory)", got[0], got[1])
	}
	if got[2] != 0 || got[3] != 0 {
		t.Fatalf("the plugin sees %d environment variables and %d arguments; want none", got[2], got[3])
	}
}

func TestPlugin_Call_configLogProgress(t *testing.T) {
	var logs bytes.Buffer
	cfg := Config{
		Settings: MapSettings{"fixture": {"base_url": "https://api.test/v2", "region": "EU"}},
		Logger:   slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	p := loadHostile(t, cfg)
	for key, want := range map[string]string{
		"base_url": `"https://api.test/v2"`,
		"region":   `"EU"`,
		"unknown":  "null",
		"api_key":  "null", // secret fields are never readable
	} {
		if got := callOK(t, p, "fixture_config", "u1", `"`+key+`"`); got != want {
			t.Errorf("config_get(%s) = %s, want %s", key, got, want)
		}
	}
	callOK(t, p, "fixture_log", "u1", `{}`)
	if !strings.Contains(logs.String(), `"msg":"hello from wasm"`) || !strings.Contains(logs.String(), `"plugin":"fixture"`) {
		t.Fatalf("log record missing: %s", logs.String())
	}
	var reports []toolcall.Progress
	_, err := p.Call(context.Background(), toolcall.Call{Tool: "fixture_progress", UserID: "u1", Progress: func(pr toolcall.Progress) { reports = append(reports, pr) }})
	if err != nil {
		t.Fatal(err)
	}
	// The second report comes within the rate limit but is final, so it passes.
	want := []toolcall.Progress{{Done: 1, Total: 2, Message: "half way"}, {Done: 2, Total: 2, Message: "done"}}
	if fmt.Sprint(reports) != fmt.Sprint(want) {
		t.Fatalf("progress = %v, want %v", reports, want)
	}
}

func TestPlugin_Close_waitsForCalls(t *testing.T) {
	p := loadHostile(t, Config{})
	errc := make(chan error)
	go func() {
		_, err := p.Call(context.Background(), toolcall.Call{Tool: "fixture_loop", UserID: "u1"})
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if te, ok := (<-errc).(*failure.Error); !ok || te.Code != failure.Timeout {
		t.Fatalf("in-flight call should run to its own deadline, got %v", te)
	}
	if te := callErr(t, p, "fixture_echo", "u1", `{}`); te.Code != failure.PluginClosed {
		t.Fatalf("call after close = %+v", te)
	}
}
