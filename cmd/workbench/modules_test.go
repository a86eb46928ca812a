package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/servertest"
)

// waitReady polls /readyz until the server's plugins are loaded.
func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the server was not ready within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestModulesCommands runs every modules command against a real server
// running in-process, as an admin and as a user.
func TestModulesCommands(t *testing.T) {
	env := map[string]string{"DATA_DIR": filepath.Join(t.TempDir(), "data"), "LISTEN_ADDR": freeAddr(t), "BUILTIN_PLUGINS_DIR": t.TempDir()}
	plugins := t.TempDir()
	env["PLUGINS_DIR"] = plugins
	alpha := filepath.Join(plugins, "alpha.wasm")
	if err := os.WriteFile(alpha, servertest.EchoModule(t, "alpha", "1.0.0", "alpha_echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	beta := filepath.Join(t.TempDir(), "beta.wasm")
	if err := os.WriteFile(beta, servertest.EchoModule(t, "beta", "1.0.0", "beta_echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	notWasm := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notWasm, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	token := func(args ...string) string {
		code, stdout, stderr := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return lastLine(stdout)
	}
	admin := token("user", "add", "--email", "ops@example.com", "--admin")
	user := token("user", "add", "--email", "dev@example.com")

	serveOnce(t, env, func(base string) {
		waitReady(t, base)
		asAdmin := map[string]string{"WORKBENCH_TOKEN": admin}
		tests := []struct {
			name       string
			env        map[string]string
			args       []string
			wantCode   int
			wantOut    []string
			wantErr    string
			beforeFunc func()
		}{
			{name: "ls", env: asAdmin, args: []string{"modules", "ls"},
				wantOut: []string{"NAME", "alpha", "1.0.0", "PLUGINS_DIR", "workbench_v1"}},
			{name: "ls as JSON", env: asAdmin, args: []string{"modules", "ls", "--json"},
				wantOut: []string{`"name": "alpha"`, `"natives": [`}},
			{name: "inspect", env: asAdmin, args: []string{"modules", "inspect", "alpha"},
				wantOut: []string{`"exports": [`, `"alpha_echo"`, `"manifest": {`}},
			{name: "inspect unknown", env: asAdmin, args: []string{"modules", "inspect", "nope"},
				wantCode: exitFailure, wantErr: "NOT_FOUND"},
			{name: "reload a new file", env: asAdmin, args: []string{"modules", "reload", "alpha"},
				beforeFunc: func() {
					if err := os.WriteFile(alpha, servertest.EchoModule(t, "alpha", "2.0.0", "alpha_echo"), 0o644); err != nil {
						t.Fatal(err)
					}
				},
				wantOut: []string{"alpha 2.0.0", "replaced 1.0.0"}},
			{name: "load", env: asAdmin, args: []string{"modules", "load", beta}, wantOut: []string{"loaded beta 1.0.0"}},
			{name: "load not wasm", env: asAdmin, args: []string{"modules", "load", notWasm},
				wantCode: exitFailure, wantErr: "INVALID_MODULE: not WebAssembly"},
			{name: "unload", env: asAdmin, args: []string{"modules", "unload", "beta"}, wantOut: []string{"unloaded beta 1.0.0"}},
			{name: "a user", env: map[string]string{"WORKBENCH_TOKEN": user}, args: []string{"modules", "ls"},
				wantCode: exitFailure, wantErr: "FORBIDDEN"},
			{name: "no token", env: map[string]string{}, args: []string{"modules", "ls"},
				wantCode: exitFailure, wantErr: "WORKBENCH_TOKEN"},
			{name: "bad server", env: asAdmin, args: []string{"modules", "ls", "--server", "ftp://x"},
				wantCode: exitUsage, wantErr: "not an http(s) URL"},
			{name: "missing name", env: asAdmin, args: []string{"modules", "reload"}, wantCode: exitUsage, wantErr: "want NAME"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.beforeFunc != nil {
					tt.beforeFunc()
				}
				tt.env["WORKBENCH_SERVER"] = base
				code, stdout, stderr := runCLI(t, tt.env, tt.args...)
				if code != tt.wantCode {
					t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
				}
				for _, want := range tt.wantOut {
					if !strings.Contains(stdout, want) {
						t.Errorf("stdout lacks %q:\n%s", want, stdout)
					}
				}
				if !strings.Contains(stderr, tt.wantErr) {
					t.Errorf("stderr lacks %q:\n%s", tt.wantErr, stderr)
				}
			})
		}
	})
}
