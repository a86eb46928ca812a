package workbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/workbench"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
	"github.com/workbench-dev/workbench/toolcall"
)

const user = "usr_alice"

func newService(t *testing.T, limits workspace.Limits) (*workbench.Service, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := workbench.New(workbench.Options{Root: dir, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// call runs tool with args as user and decodes the result into a map.
func call(t *testing.T, s *workbench.Service, userID, tool string, args any) (map[string]any, error) {
	t.Helper()
	input, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Call(context.Background(), toolcall.Call{Tool: tool, UserID: userID, Input: input})
	if err != nil {
		var fe *failure.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%s: error %T %v is not a *failure.Error", tool, err, err)
		}
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func mustCall(t *testing.T, s *workbench.Service, tool string, args any) map[string]any {
	t.Helper()
	m, err := call(t, s, user, tool, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return m
}

func wantFailure(t *testing.T, err error, code failure.Code, mention string) {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	if !strings.Contains(fe.Message, mention) {
		t.Errorf("message %q does not mention %q", fe.Message, mention)
	}
}

type execWant struct {
	exit           int
	stdout         string // exact
	stderrContains string
}

func TestService_Call_exec(t *testing.T) {
	s, dir := newService(t, workspace.Limits{})
	mustCall(t, s, workbench.ToolWriteFile, map[string]any{"plan": "p", "path": "in.txt", "content": "one\ntwo\n"})
	ws := filepath.Join(dir, user, "p")
	if err := os.Symlink("/", filepath.Join(ws, "root")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../..", filepath.Join(ws, "up")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, stdin string
		want                 execWant
	}{
		{"echo", "echo hello", "", execWant{0, "hello\n", ""}},
		{"stdin", "read -r a; echo got $a", "line\n", execWant{0, "got line\n", ""}},
		{"write then read", "echo data > out.txt && read -r x < out.txt && echo $x", "", execWant{0, "data\n", ""}},
		{"read loop over a file", "n=0; while read -r l; do n=$((n+1)); done < in.txt; echo $n", "", execWant{0, "2\n", ""}},
		{"exit code", "exit 3", "", execWant{3, "", ""}},
		{"false", "false", "", execWant{1, "", ""}},
		{"set -e stops", "set -e; false; echo after", "", execWant{1, "", ""}},
		{"or list", "false || echo rescued", "", execWant{0, "rescued\n", ""}},
		{"and list", "true && echo both", "", execWant{0, "both\n", ""}},
		{"negation", "! false && echo negated", "", execWant{0, "negated\n", ""}},
		{"pipeline status is the last", "false | true; echo $?", "", execWant{0, "0\n", ""}},
		{"pipefail", "set -o pipefail; false | true; echo $?", "", execWant{0, "1\n", ""}},
		{"here-doc to a file", "printf '%s\\n' a b > two.txt; read -r f < two.txt; echo $f", "", execWant{0, "a\n", ""}},
		{"stderr redirect", "echo oops >&2", "", execWant{0, "", "oops"}},
		{"glob sees the workspace", "echo *.txt", "", execWant{0, "in.txt out.txt two.txt\n", ""}},
		{"glob of / matches nothing", "echo /*", "", execWant{0, "/*\n", ""}},
		{"pwd is virtual", "pwd; echo $HOME", "", execWant{0, "/workspace\n/workspace\n", ""}},
		{"environment is empty", "echo \"[$PATH][$SHELL][${AWS_SECRET_ACCESS_KEY:-}]\"", "", execWant{0, "[][][]\n", ""}},
		{"test sees workspace files", "[ -f in.txt ] && [ ! -e /etc/passwd ] && echo ok", "", execWant{0, "ok\n", ""}},
		{"dev null", "echo gone > /dev/null; echo kept", "", execWant{0, "kept\n", ""}},

		// Hostile lines that pass the static check and are stopped at run time.
		{"read /etc through a variable", "d=/etc; read -r x < $d/passwd", "", execWant{1, "", "outside the workspace"}},
		{"write /tmp through a variable", "d=/tmp; echo x > $d/wb-escape", "", execWant{1, "", "outside the workspace"}},
		{"interpreter FIFO name in /tmp", "d=/tmp; echo x > $d/sh-interp-1", "", execWant{1, "", "outside the workspace"}},
		{"cd above the workspace", "cd .. && echo escaped", "", execWant{1, "", "no such file"}},
		{"cd through link to /", "cd root && echo escaped", "", execWant{1, "", "no such file"}},
		{"read through link to /", "read -r x < root/etc/passwd", "", execWant{1, "", "outside the workspace"}},
		{"write through link to /", "echo x > root/tmp/wb-escape", "", execWant{1, "", "outside the workspace"}},
		{"write through relative link", "echo x > up/wb-escape", "", execWant{1, "", "outside the workspace"}},
		{"glob through link to /", "echo root/e*", "", execWant{0, "root/e*\n", ""}},
		{"arithmetic never runs a value", "a='x[$(echo pwned > pwned)]'; echo $((a)); [ -e pwned ] && echo ran", "", execWant{1, "0\n", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"plan": "p", "command": tt.command}
			if tt.stdin != "" {
				args["stdin"] = tt.stdin
			}
			m := mustCall(t, s, workbench.ToolExec, args)
			if int(m["exit_code"].(float64)) != tt.want.exit || m["stdout"] != tt.want.stdout {
				t.Errorf("exec(%q) = exit %v stdout %q stderr %q; want exit %d stdout %q", tt.command, m["exit_code"], m["stdout"], m["stderr"], tt.want.exit, tt.want.stdout)
			}
			if !strings.Contains(m["stderr"].(string), tt.want.stderrContains) {
				t.Errorf("exec(%q): stderr %q does not contain %q", tt.command, m["stderr"], tt.want.stderrContains)
			}
		})
	}
	for _, p := range []string{"/tmp/wb-escape", "/tmp/sh-interp-1", filepath.Join(dir, "wb-escape")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written outside the workspace", p)
		}
	}
}

func TestService_Call_execRefused(t *testing.T) {
	s, _ := newService(t, workspace.Limits{})
	tests := []struct {
		command string
		code    failure.Code
		mention string
	}{
		{"echo $(curl http://x)", failure.CommandNotAllowed, "curl in $(...) at 1:8"},
		{"cat in.txt", failure.CommandNotAllowed, "rule not-available"},
		{"echo x > /etc/passwd", failure.CommandNotAllowed, "rule path-outside-workspace"},
		{"bash -c id", failure.CommandNotAllowed, "rule nested-shell"},
		{"pbcopy < f", failure.NeedsComputerUse, "pbcopy"},
		{"echo (", failure.InvalidArguments, "rule syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			_, err := call(t, s, user, workbench.ToolExec, map[string]any{"command": tt.command})
			wantFailure(t, err, tt.code, tt.mention)
		})
	}
}

func TestService_Call_execLimits(t *testing.T) {
	s, _ := newService(t, workspace.Limits{MaxBytes: 64})
	m := mustCall(t, s, workbench.ToolExec, map[string]any{"command": "s=0123456789abcdef; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do s=$s$s; done; echo $s"})
	if m["truncated"] != true || len(m["stdout"].(string)) != 256<<10 {
		t.Errorf("a 512 KiB stdout: truncated %v, kept %d bytes; want true and 256 KiB", m["truncated"], len(m["stdout"].(string)))
	}
	m = mustCall(t, s, workbench.ToolExec, map[string]any{"command": "s=0123456789abcdef; s=$s$s$s$s$s; echo $s > big"})
	if !strings.Contains(m["stderr"].(string), "WORKBENCH_MAX_BYTES") || m["exit_code"].(float64) != 1 {
		t.Errorf("a write over the byte quota: exit %v, stderr %q; want 1 and WORKBENCH_MAX_BYTES named", m["exit_code"], m["stderr"])
	}
	m = mustCall(t, s, workbench.ToolExec, map[string]any{"command": "while true; do :; done", "timeout_seconds": 1})
	if m["timed_out"] != true || m["exit_code"].(float64) != 124 {
		t.Errorf("an endless loop: %v; want timed_out and exit 124", m)
	}
	_, err := call(t, s, user, workbench.ToolExec, map[string]any{"command": "echo", "timeout_seconds": 301})
	wantFailure(t, err, failure.InvalidArguments, "timeout_seconds")
}

func TestService_Call_files(t *testing.T) {
	s, _ := newService(t, workspace.Limits{})
	mustCall(t, s, workbench.ToolWriteFile, map[string]any{"path": "docs/a.md", "content": "héllo wörld"})
	mustCall(t, s, workbench.ToolWriteFile, map[string]any{"path": "bin.dat", "content": "AAEC/w==", "encoding": "base64"})
	for i := range 5 {
		mustCall(t, s, workbench.ToolWriteFile, map[string]any{"path": "many/f" + string(rune('a'+i)), "content": "x"})
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want map[string]any // fields of the result
	}{
		{"read text", workbench.ToolReadFile, map[string]any{"path": "docs/a.md"},
			map[string]any{"content": "héllo wörld", "binary": false, "truncated": false, "size": 13.0}},
		{"read with a budget", workbench.ToolReadFile, map[string]any{"path": "docs/a.md", "limit": 4},
			map[string]any{"content": "hél", "truncated": true, "next_offset": 4.0}},
		{"read from an offset", workbench.ToolReadFile, map[string]any{"path": "docs/a.md", "offset": 4},
			map[string]any{"content": "lo wörld", "truncated": false}},
		{"read binary as metadata", workbench.ToolReadFile, map[string]any{"path": "bin.dat"},
			map[string]any{"binary": true, "content_type": "application/octet-stream", "size": 4.0}},
		{"read binary as base64", workbench.ToolReadFile, map[string]any{"path": "bin.dat", "base64": true},
			map[string]any{"binary": true, "content_base64": "AAEC/w=="}},
		{"list the top", workbench.ToolList, map[string]any{},
			map[string]any{"total": 3.0, "truncated": false, "limit": 100.0}},
		{"list a page", workbench.ToolList, map[string]any{"path": "many", "offset": 1, "limit": 2},
			map[string]any{"total": 5.0, "truncated": true, "next_offset": 3.0, "limit": 2.0}},
		{"list the last page", workbench.ToolList, map[string]any{"path": "many", "offset": 4, "limit": 2},
			map[string]any{"total": 5.0, "truncated": false}},
		{"list clamps the limit", workbench.ToolList, map[string]any{"path": "many", "limit": 1000},
			map[string]any{"limit": 100.0}},
		{"list with a query", workbench.ToolList, map[string]any{"query": "doc"},
			map[string]any{"total": 1.0}},
		{"delete", workbench.ToolDelete, map[string]any{"path": "many"},
			map[string]any{"deleted": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustCall(t, s, tt.tool, tt.args)
			for k, v := range tt.want {
				if m[k] != v {
					t.Errorf("%s(%v)[%s] = %v, want %v", tt.tool, tt.args, k, m[k], v)
				}
			}
		})
	}
	m := mustCall(t, s, workbench.ToolList, map[string]any{"path": "docs"})
	entries := m["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["name"] != "a.md" || entries[0].(map[string]any)["type"] != "file" {
		t.Errorf("list docs = %v", entries)
	}
}

func TestService_Call_refusals(t *testing.T) {
	s, _ := newService(t, workspace.Limits{MaxPlans: 1})
	mustCall(t, s, workbench.ToolWriteFile, map[string]any{"path": "a", "content": "x"})
	tests := []struct {
		name    string
		user    string
		tool    string
		args    map[string]any
		code    failure.Code
		mention string
	}{
		{"absolute path", user, workbench.ToolReadFile, map[string]any{"path": "/etc/passwd"}, failure.PathNotAllowed, "/etc/passwd"},
		{"climbing path", user, workbench.ToolWriteFile, map[string]any{"path": "../x", "content": ""}, failure.PathNotAllowed, "'..'"},
		{"bad plan", user, workbench.ToolList, map[string]any{"plan": "../bob"}, failure.InvalidArguments, "plan"},
		{"missing plan", user, workbench.ToolReadFile, map[string]any{"plan": "nope", "path": "a"}, failure.NotFound, "nope"},
		{"another user's plan", "usr_bob", workbench.ToolReadFile, map[string]any{"path": "a"}, failure.NotFound, "default"},
		{"missing file", user, workbench.ToolDelete, map[string]any{"path": "b"}, failure.NotFound, "b"},
		{"plan quota", user, workbench.ToolWriteFile, map[string]any{"plan": "second", "path": "a", "content": ""}, failure.LimitExceeded, "WORKBENCH_MAX_PLANS"},
		{"unknown field", user, workbench.ToolList, map[string]any{"recursive": true}, failure.InvalidArguments, "recursive"},
		{"bad encoding", user, workbench.ToolWriteFile, map[string]any{"path": "a", "content": "", "encoding": "hex"}, failure.InvalidArguments, "hex"},
		{"unknown tool", user, "workbench_teleport", map[string]any{}, failure.UnknownTool, "workbench_teleport"},
		{"no user", "", workbench.ToolList, map[string]any{}, failure.InvalidArguments, "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, s, tt.user, tt.tool, tt.args)
			wantFailure(t, err, tt.code, tt.mention)
		})
	}
}

func TestService_Call_release(t *testing.T) {
	s, dir := newService(t, workspace.Limits{})
	m := mustCall(t, s, workbench.ToolRelease, map[string]any{"plan": "never"})
	if m["released"] != true {
		t.Errorf("releasing a plan that never existed: %v", m)
	}
	mustCall(t, s, workbench.ToolWriteFile, map[string]any{"path": "a", "content": "x"})
	mustCall(t, s, workbench.ToolRelease, map[string]any{})
	if _, err := os.Stat(filepath.Join(dir, user, "default")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the released workspace is still there: %v", err)
	}
	_, err := call(t, s, user, workbench.ToolReadFile, map[string]any{"path": "a"})
	wantFailure(t, err, failure.NotFound, "default")
}

// TestService_Call_releaseWhileRunning releases a plan while a command
// loops in it: the command stops with CANCELED and the workspace is gone.
func TestService_Call_releaseWhileRunning(t *testing.T) {
	s, dir := newService(t, workspace.Limits{})
	result := make(chan error, 1)
	go func() {
		_, err := call(t, s, user, workbench.ToolExec, map[string]any{"plan": "busy", "command": "echo > started; while true; do :; done", "timeout_seconds": 120})
		result <- err
	}()
	// The command writes "started" once it runs.
	for {
		if _, err := os.Stat(filepath.Join(dir, user, "busy", "started")); err == nil {
			break
		}
		select {
		case err := <-result:
			t.Fatalf("the command ended before the release: %v", err)
		default:
		}
	}
	mustCall(t, s, workbench.ToolRelease, map[string]any{"plan": "busy"})
	wantFailure(t, <-result, failure.Canceled, "released")
	if _, err := os.Stat(filepath.Join(dir, user, "busy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the released workspace is still there: %v", err)
	}
}

func TestManifest(t *testing.T) {
	m := workbench.Manifest(workspace.Limits{})
	if m.Name != "workbench" || len(m.Tools) != 6 {
		t.Fatalf("manifest %s with %d tools", m.Name, len(m.Tools))
	}
	for _, tool := range m.Tools {
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Errorf("%s: input schema: %v", tool.Slug, err)
		}
		if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
			t.Errorf("%s: output schema: %v", tool.Slug, err)
		}
	}
}
