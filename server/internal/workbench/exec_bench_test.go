package workbench_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/server/internal/workbench"
	"github.com/workbench-dev/workbench/server/internal/workbench/workspace"
	"github.com/workbench-dev/workbench/toolcall"
)

// BenchmarkService_exec is one workbench_exec call that reads a 4 KiB file
// with builtins (the WASI cat is not built yet); the baseline
// BenchmarkExecCommand_cat starts the host's cat on the same file with
// exec.Command, no sandbox.
func BenchmarkService_exec(b *testing.B) {
	dir := b.TempDir()
	s, err := workbench.New(workbench.Options{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	write, _ := json.Marshal(map[string]any{"path": "f.txt", "content": strings.Repeat("0123456789abcde\n", 256)})
	if _, err := s.Call(ctx, toolcall.Call{Tool: workbench.ToolWriteFile, UserID: "usr_bench", Input: write}); err != nil {
		b.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{"command": `while read -r l; do printf '%s\n' "$l"; done < f.txt`})
	for b.Loop() {
		if _, err := s.Call(ctx, toolcall.Call{Tool: workbench.ToolExec, UserID: "usr_bench", Input: input}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecCommand_cat(b *testing.B) {
	dir := b.TempDir()
	set, err := workspace.Open(dir, workspace.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	err = set.Use(context.Background(), "usr_bench", "default", true, func(_ context.Context, w *workspace.Workspace) error {
		return w.WriteFile("f.txt", []byte(strings.Repeat("0123456789abcde\n", 256)))
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command("cat", "f.txt")
		cmd.Dir = dir + "/usr_bench/default"
		if out, err := cmd.Output(); err != nil || len(out) != 4096 {
			b.Fatalf("cat: %d bytes, %v", len(out), err)
		}
	}
}
