package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/workbench-dev/workbench/internal/wattest"
	"github.com/workbench-dev/workbench/server/servertest"
)

// fixtures holds the .wasm files compiled from testdata for this test binary.
var fixtures = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "workbench-cli-")
	if err == nil {
		err = buildFixtures(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli test fixtures:", err)
		os.Exit(1)
	}
	code := servertest.Run(m) // stops the Postgres cluster some tests start
	os.RemoveAll(dir)
	os.Exit(code)
}

// fetchAuth are the auth blocks of the fetch fixture variants.
var fetchAuth = map[string]string{
	"oauthy": `{"mode":"oauth2","oauth2":{"authorizeUrl":"https://auth.example.com/authorize","tokenUrl":"https://auth.example.com/token","scopes":["read"]}}`,
	"keyed": `{"mode":"apikey","apikey":{"fields":[{"name":"api_key","label":"API key","secret":true,"required":true}],` +
		`"placement":{"in":"header","name":"X-Api-Key","value":"{api_key}"}}}`,
}

func buildFixtures(dir string) error {
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "fetch.wat.tmpl"))
	if err != nil {
		return err
	}
	for name, auth := range fetchAuth {
		manifest := fmt.Sprintf(`{"abi":1,"name":%q,"version":"1.2.3","title":"Fetch %s","description":"Fetches /whoami.",`+
			`"baseUrl":"https://api.%s.example","auth":%s,"tools":[`+
			`{"slug":"%s_whoami","description":"Who am I.","inputSchema":{"type":"object"},"annotations":{"readOnly":true}},`+
			`{"slug":"%s_fail","description":"Always fails.","inputSchema":{"type":"object"}}]}`,
			name, name, name, auth, name, name)
		var src bytes.Buffer
		err := tmpl.Execute(&src, struct {
			Manifest    string
			ManifestLen int
			Prefix      string
		}{wattest.Escape(manifest), len(manifest), name})
		if err != nil {
			return err
		}
		if fixtures[name], err = buildFixture(src.Bytes(), filepath.Join(dir, name+".wasm")); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "no_manifest.wat"))
	if err != nil {
		return err
	}
	fixtures["no_manifest"], err = buildFixture(src, filepath.Join(dir, "no_manifest.wasm"))
	return err
}

// buildFixture compiles WAT source into the wasm file out and returns out.
func buildFixture(src []byte, out string) (string, error) {
	wasm, err := wattest.Build(src)
	if err != nil {
		return "", err
	}
	return out, os.WriteFile(out, wasm, 0o644)
}

// runCLI runs the CLI in-process with the given environment.
func runCLI(t *testing.T, envVars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return envVars[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRun_Usage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no command", nil, 2, "", "Usage: workbench <command>"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"unknown plugin subcommand", []string{"plugin", "frob"}, 2, "", `unknown command "plugin frob"`},
		{"plugin alone", []string{"plugin"}, 2, "", `unknown command "plugin"`},
		{"later commands are not stubbed", []string{"modules", "rollback", "x"}, 2, "", `unknown command "modules rollback"`},
		{"user add without an email", []string{"user", "add"}, 2, "", "want --email and no arguments"},
		{"user add with an argument", []string{"user", "add", "--email", "a@example.com", "extra"}, 2, "", "want --email and no arguments"},
		{"token revoke without an id", []string{"token", "revoke", "--email", "a@example.com"}, 2, "", "want --email and exactly one TOKEN_ID"},
		{"migrate with an argument", []string{"migrate", "now"}, 2, "", `unexpected argument "now"`},
		{"keys rotate with an argument", []string{"keys", "rotate", "now"}, 2, "", `unexpected argument "now"`},
		{"migrate with a bad env", []string{"migrate"}, 1, "", "MCP_TOOL_SURFACE"},
		{"help for user", []string{"help", "user"}, 0, "Usage: workbench user login-link --email E", ""},
		{"help", []string{"help"}, 0, "plugin inspect [--json] FILE.wasm", ""},
		{"--help", []string{"--help"}, 0, "Commands:", ""},
		{"help for a command", []string{"help", "plugin", "call"}, 0, "-allow-private", ""},
		{"help for a group", []string{"help", "plugin"}, 0, "Usage: workbench plugin build DIR", ""},
		{"help for an unknown command", []string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{"serve with an argument", []string{"serve", "now"}, 2, "", `unexpected argument "now"`},
		{"serve with a bad env", []string{"serve"}, 1, "", "MCP_TOOL_SURFACE"},
		{"build without a folder", []string{"plugin", "build"}, 2, "", "want exactly one argument"},
		{"inspect without a file", []string{"plugin", "inspect"}, 2, "", "want exactly one argument"},
		{"inspect with an unknown flag", []string{"plugin", "inspect", "--yaml", "x.wasm"}, 2, "", "flag provided but not defined: -yaml"},
		{"inspect -h", []string{"plugin", "inspect", "-h"}, 0, "", "Usage: workbench plugin inspect"},
		{"call without a tool", []string{"plugin", "call", "x.wasm"}, 2, "", "want FILE.wasm TOOL [JSON]"},
		{"call with bad JSON", []string{"plugin", "call", "x.wasm", "t", "{nope"}, 2, "", "is not valid JSON"},
		{"call with a bad field", []string{"plugin", "call", "--field", "novalue", "x.wasm", "t"}, 2, "", `field "novalue" is not name=value`},
		{"call with a missing file", []string{"plugin", "call", "missing.wasm", "t"}, 1, "", "missing.wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, map[string]string{"MCP_TOOL_SURFACE": "sideways"}, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
			if tt.wantStdout == "" && stdout != "" {
				t.Errorf("unexpected stdout %q", stdout)
			}
		})
	}
}

func TestPluginInspect(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"good", []string{fixtures["oauthy"]}, 0, []string{
			"integration  oauthy 1.2.3 (Fetch oauthy)",
			"auth         oauth2",
			"base URL     https://api.oauthy.example (override with OAUTHY_BASE_URL)",
			"memory       min 3 pages (64 KiB each), no maximum",
			"tools (2):",
			"oauthy_whoami  read-only  Who am I.",
			"workbench_v1.http_request (i32, i32, i32, i32) -> (i64)",
			"exports (4):",
			"oauthy_fail (i32, i32) -> (i32)",
			"ABI v1: ok",
		}},
		{"flag after the file", []string{fixtures["keyed"], "--json"}, 0, []string{`"abiOk": true`, `"name": "keyed"`}},
		{"bad", []string{fixtures["no_manifest"]}, 1, []string{"ABI v1: 1 problem(s)", `does not export "manifest"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"plugin", "inspect"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.wantCode, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestPluginInspect_JSON(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "plugin", "inspect", "--json", fixtures["no_manifest"])
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	var got struct {
		File     string   `json:"file"`
		ABIOK    bool     `json:"abiOk"`
		Size     int      `json:"size"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	info, err := os.Stat(fixtures["no_manifest"])
	if err != nil {
		t.Fatal(err)
	}
	if got.File != fixtures["no_manifest"] || got.ABIOK || got.Size != int(info.Size()) || len(got.Problems) != 1 || !strings.Contains(got.Problems[0], `"manifest"`) {
		t.Errorf("report = %+v", got)
	}
}

// whoamiServer is a fake upstream on 127.0.0.1 that reports the credential
// headers it received.
func whoamiServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/whoami" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"authorization": r.Header.Get("Authorization"),
			"apiKey":        r.Header.Get("X-Api-Key"),
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPluginCall(t *testing.T) {
	upstream := whoamiServer(t)
	type whoami struct {
		Authorization string `json:"authorization"`
		APIKey        string `json:"apiKey"`
	}
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantResult *whoami
		wantError  string // the tool error code printed on stderr
		wantStderr string
	}{
		{
			name:       "oauth2 token flag",
			args:       []string{"--allow-private", "--base-url", upstream.URL, "--token", "tok-123", fixtures["oauthy"], "oauthy_whoami"},
			wantResult: &whoami{Authorization: "Bearer tok-123"},
		},
		{
			name:       "oauth2 token from the environment, base URL from a setting",
			env:        map[string]string{tokenEnv: "env-tok"},
			args:       []string{"--allow-private", "--setting", "base_url=" + upstream.URL, fixtures["oauthy"], "oauthy_whoami", "{}"},
			wantResult: &whoami{Authorization: "Bearer env-tok"},
		},
		{
			name:       "base URL from <NAME>_BASE_URL",
			env:        map[string]string{"OAUTHY_BASE_URL": upstream.URL},
			args:       []string{"--allow-private", "--token", "t", fixtures["oauthy"], "oauthy_whoami"},
			wantResult: &whoami{Authorization: "Bearer t"},
		},
		{
			name:       "apikey field",
			args:       []string{"--allow-private", "--base-url", upstream.URL, "--field", "api_key=k-9", fixtures["keyed"], "keyed_whoami"},
			wantResult: &whoami{APIKey: "k-9"},
		},
		{
			// The operator's base URL is exempt from the private-address
			// rule for its own integration, without --allow-private.
			name:       "operator base URL on loopback",
			args:       []string{"--base-url", upstream.URL, "--token", "t", fixtures["oauthy"], "oauthy_whoami"},
			wantResult: &whoami{Authorization: "Bearer t"},
		},
		{
			// Metadata and link-local addresses are refused even then.
			name:      "metadata base URL refused",
			args:      []string{"--base-url", "http://169.254.169.254", "--token", "t", fixtures["oauthy"], "oauthy_whoami"},
			wantCode:  1,
			wantError: "EGRESS_DENIED",
		},
		{
			name:      "tool error",
			args:      []string{fixtures["oauthy"], "oauthy_fail", `{"x":1}`},
			wantCode:  1,
			wantError: "TEAPOT",
		},
		{
			name:      "unknown tool",
			args:      []string{fixtures["oauthy"], "oauthy_nope"},
			wantCode:  1,
			wantError: "UNKNOWN_TOOL",
		},
		{
			name:       "token for an apikey plugin",
			args:       []string{"--token", "t", fixtures["keyed"], "keyed_whoami"},
			wantCode:   1,
			wantStderr: "--token is for oauth2 plugins; keyed uses apikey",
		},
		{
			name:       "undeclared field",
			args:       []string{"--field", "password=x", fixtures["keyed"], "keyed_whoami"},
			wantCode:   1,
			wantStderr: "--field password: keyed declares no such field (fields: api_key)",
		},
		{
			name:       "not a plugin",
			args:       []string{fixtures["no_manifest"], "x_y"},
			wantCode:   1,
			wantStderr: `does not export "manifest"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.env, append([]string{"plugin", "call"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if tt.wantResult != nil {
				var got whoami
				if err := json.Unmarshal([]byte(stdout), &got); err != nil {
					t.Fatalf("stdout is not the result JSON: %v\n%s", err, stdout)
				}
				if got != *tt.wantResult {
					t.Errorf("upstream saw %+v, want %+v", got, *tt.wantResult)
				}
			}
			if tt.wantError != "" {
				if stdout != "" {
					t.Errorf("stdout %q, want nothing on a tool error", stdout)
				}
				var te struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				}
				last := strings.TrimSpace(stderr)
				last = last[strings.LastIndex(last, "\n")+1:]
				if err := json.Unmarshal([]byte(last), &te); err != nil || te.Code != tt.wantError || te.Message == "" {
					t.Errorf("stderr %q, want a %s tool error as JSON", stderr, tt.wantError)
				}
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestPluginCall_ToolErrorDetails(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "plugin", "call", fixtures["oauthy"], "oauthy_fail")
	if code != 1 {
		t.Fatalf("exit code %d", code)
	}
	want := `{"code":"TEAPOT","message":"short and stout","details":{"spout":1}}`
	if strings.TrimSpace(stderr) != want {
		t.Errorf("stderr = %q, want %s", stderr, want)
	}
}

func TestPluginBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is not on PATH")
	}
	dir := filepath.Join(t.TempDir(), "goplugin")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "goplugin"))); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "plugin", "build", dir)
	if code != 0 {
		t.Fatalf("build: exit code %d\n%s", code, stderr)
	}
	wasm := filepath.Join(dir, "goplugin.wasm")
	if !strings.HasPrefix(stdout, wasm+" (") {
		t.Errorf("build stdout %q, want the output path", stdout)
	}

	code, stdout, stderr = runCLI(t, nil, "plugin", "inspect", wasm)
	if code != 0 || !strings.Contains(stdout, "ABI v1: ok") || !strings.Contains(stdout, "_initialize () -> ()") {
		t.Errorf("inspect: exit code %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, nil, "plugin", "call", wasm, "goplugin_echo", `{"hello":["wasm"]}`)
	if code != 0 {
		t.Fatalf("call: exit code %d\n%s", code, stderr)
	}
	if want := "{\n  \"hello\": [\n    \"wasm\"\n  ]\n}\n"; stdout != want {
		t.Errorf("call stdout %q, want %q", stdout, want)
	}
}

func TestPluginBuild_Errors(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "file.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"go.mod": "module example.com/broken\n\ngo 1.24\n", "main.go": "package main\n\nfunc main() { undefined() }\n"} {
		if err := os.WriteFile(filepath.Join(broken, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		dir  string
		want string
	}{
		{"unknown language", empty, "unknown plugin language: no go.mod, Cargo.toml, package.json with asconfig.json, or Makefile including plugin.mk"},
		{"not a folder", file, "is not a folder"},
		{"missing", filepath.Join(empty, "nope"), "no such file"},
		{"compile error", broken, "undefined: undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, "plugin", "build", tt.dir)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit code %d, stderr %q; want 1 and %q", code, stderr, tt.want)
			}
		})
	}
}
