package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoPDK returns the repository's kit for lang, found from the test's
// working directory (cmd/workbench).
func repoPDK(t *testing.T, lang string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..", "pdk", lang)
}

// statusServer is a fake API on 127.0.0.1 answering GET /status.
func statusServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"up":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestPluginNew_Languages scaffolds, builds, inspects and calls a plugin in
// every language, the way an author would.
func TestPluginNew_Languages(t *testing.T) {
	api := statusServer(t)
	tests := []struct {
		lang      string
		name      string
		wantFiles []string
	}{
		{"go", "hello-go", []string{"go.mod", "main.go", "main_test.go"}},
		{"assemblyscript", "hello-as", []string{"package.json", "asconfig.json", "assembly/index.ts"}},
		{"c", "hello-c", []string{"Makefile", "plugin.c"}},
		{"rust", "hello-rust", []string{"Cargo.toml", "src/lib.rs"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), tt.name)
			ident := strings.ReplaceAll(tt.name, "-", "_")
			code, stdout, stderr := runCLI(t, nil, "plugin", "new", "--lang", tt.lang, "--pdk", repoPDK(t, tt.lang), "--dir", dir, tt.name)
			if code != 0 || !strings.Contains(stdout, "created "+dir) {
				t.Fatalf("new: exit code %d\n%s%s", code, stdout, stderr)
			}
			for _, f := range append(tt.wantFiles, ".gitignore", "README.md") {
				if !fileExists(filepath.Join(dir, f)) {
					t.Errorf("scaffold lacks %s", f)
				}
			}
			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil || !strings.Contains(string(readme), "workbench plugin call "+tt.name+".wasm "+ident+"_hello") {
				t.Errorf("README.md does not explain plugin call (%v):\n%s", err, readme)
			}

			code, stdout, stderr = runCLI(t, nil, "plugin", "build", dir)
			wasm := filepath.Join(dir, tt.name+".wasm")
			if code != 0 || !strings.HasPrefix(stdout, wasm+" (") {
				t.Fatalf("build: exit code %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = runCLI(t, nil, "plugin", "inspect", wasm)
			if code != 0 || !strings.Contains(stdout, "ABI v1: ok") || !strings.Contains(stdout, ident+"_status") {
				t.Errorf("inspect: exit code %d\n%s%s", code, stdout, stderr)
			}

			calls := []struct {
				args      []string
				wantCode  int
				wantOut   string // the result, compacted
				wantError string // the tool error code
			}{
				{[]string{wasm, ident + "_hello", `{"name":"x"}`}, 0, `{"greeting":"Hello, x!"}`, ""},
				{[]string{wasm, ident + "_hello", `{}`}, 1, "", "INVALID_ARGUMENTS"},
				{[]string{"--allow-private", "--base-url", api.URL, wasm, ident + "_status"}, 0, `{"up":true}`, ""},
				// The operator's base URL is exempt for its own integration;
				// a metadata address never is.
				{[]string{"--base-url", api.URL, wasm, ident + "_status"}, 0, `{"up":true}`, ""},
				{[]string{"--base-url", "http://169.254.169.254", wasm, ident + "_status"}, 1, "", "EGRESS_DENIED"},
			}
			for _, c := range calls {
				code, stdout, stderr := runCLI(t, nil, append([]string{"plugin", "call"}, c.args...)...)
				if code != c.wantCode {
					t.Errorf("call %v: exit code %d, want %d\n%s%s", c.args, code, c.wantCode, stdout, stderr)
					continue
				}
				var got bytes.Buffer
				if c.wantOut != "" && (json.Compact(&got, []byte(stdout)) != nil || got.String() != c.wantOut) {
					t.Errorf("call %v: stdout %q, want %s", c.args, stdout, c.wantOut)
				}
				if c.wantError != "" && !strings.Contains(stderr, `"code":"`+c.wantError+`"`) {
					t.Errorf("call %v: stderr %q, want a %s tool error", c.args, stderr, c.wantError)
				}
			}

			if tt.lang == "go" {
				cmd := exec.Command("go", "test", "-count=1", "./...")
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("go test in the scaffold: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestPluginNew_Errors(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"no name", []string{"--lang", "go"}, 2, "want exactly one argument, the integration name"},
		{"no language", []string{"demo"}, 2, `--lang "": want one of go|assemblyscript|c|rust`},
		{"unknown language", []string{"--lang", "cobol", "demo"}, 2, `--lang "cobol"`},
		{"bad name", []string{"--lang", "go", "Demo_1"}, 2, `name "Demo_1": want 2 to 40 lowercase letters`},
		{"folder not empty", []string{"--lang", "go", "--dir", full, "demo"}, 1, "exists and is not empty"},
		{"pdk of another language", []string{"--lang", "rust", "--pdk", repoPDK(t, "go"), "--dir", filepath.Join(t.TempDir(), "demo"), "demo"}, 1,
			"plugin kit not found: no src/lib.rs there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"plugin", "new"}, tt.args...)...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit code %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, tt.wantCode, tt.want)
			}
		})
	}
}

func TestPluginNew_DefaultPDK(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, _, stderr := runCLI(t, nil, "plugin", "new", "--lang", "c", "--dir", dir, "demo")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, include, _ := strings.Cut(string(mk), "include ")
	got, err := filepath.Abs(filepath.Join(dir, strings.TrimSpace(include)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(filepath.Join(repoPDK(t, "c"), "plugin.mk"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Makefile includes %s, want the repository's %s", got, want)
	}
}

func TestFindPDK(t *testing.T) {
	goLang, _ := findLanguage("go")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(repoPDK(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		flag    string
		wd      string
		want    string
		wantErr error
	}{
		{"found from a subfolder", "", wd, want, nil},
		{"flag", repoPDK(t, "go"), t.TempDir(), want, nil},
		{"outside the repository", "", t.TempDir(), "", errNoPDK},
		{"flag naming no kit", t.TempDir(), wd, "", errNoPDK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findPDK(goLang, tt.flag, tt.wd)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("findPDK = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "--pdk") {
				t.Errorf("error %q does not mention --pdk", err)
			}
		})
	}
}

func TestDetectLanguage(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"go", map[string]string{"go.mod": "module x\n"}, "go"},
		{"rust", map[string]string{"Cargo.toml": "[package]\n"}, "rust"},
		{"assemblyscript", map[string]string{"package.json": "{}", "asconfig.json": "{}"}, "assemblyscript"},
		{"package.json alone", map[string]string{"package.json": "{}"}, ""},
		{"c", map[string]string{"Makefile": "NAME := x\ninclude ../../pdk/c/plugin.mk\n"}, "c"},
		{"other Makefile", map[string]string{"Makefile": "all:\n\techo plugin.mk\n"}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := detectLanguage(dir)
			if err != nil || got != tt.want {
				t.Errorf("detectLanguage = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPluginBuild_ToolchainMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if code, _, stderr := runCLI(t, nil, "plugin", "new", "--lang", "rust", "--pdk", repoPDK(t, "rust"), "--dir", dir, "demo"); code != 0 {
		t.Fatalf("new: exit code %d: %s", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "rustc")
	code, _, stderr := runCLI(t, map[string]string{"RUSTC": missing}, "plugin", "build", dir)
	if want := "toolchain missing: Rust plugins need " + missing; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit code %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}
