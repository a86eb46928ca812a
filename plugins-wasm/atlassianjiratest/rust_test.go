package atlassianjiratest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rustc is Debian's compiler (tools/test-deps.sh installs it); RUSTC
// overrides it, as in tools/build-plugins.sh.
func rustc() string {
	if r := os.Getenv("RUSTC"); r != "" {
		return r
	}
	return "/usr/bin/rustc"
}

// run runs a command with a deadline and fails the test with its output
// when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestRust_UnitTests compiles the Rust PDK's and the plugin's unit tests
// natively with rustc --test and runs them: the JSON parser and
// serializer, the schema check, the manifest, HTTP through the test host,
// ADF conversion and Jira error mapping.
func TestRust_UnitTests(t *testing.T) {
	if _, err := os.Stat(rustc()); err != nil {
		t.Fatalf("%s: %v (run make test-deps to install the Rust toolchain)", rustc(), err)
	}
	dir := t.TempDir()
	pdkSrc := filepath.Join("..", "..", "pdk", "rust", "src", "lib.rs")
	pluginSrc := filepath.Join("..", "atlassian-jira", "src", "lib.rs")
	rlib := filepath.Join(dir, "libworkbench.rlib")
	run(t, rustc(), "--edition", "2021", "--crate-type=rlib", "--crate-name", "workbench", "-D", "warnings", pdkSrc, "-o", rlib)
	suites := []struct {
		name string
		args []string
	}{
		{"pdk", []string{"--crate-name", "workbench", pdkSrc}},
		{"atlassian-jira", []string{"--crate-name", "atlassian_jira", "--extern", "workbench=" + rlib, pluginSrc}},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			bin := filepath.Join(dir, s.name+"-tests")
			args := append([]string{"--edition", "2021", "--test", "-D", "warnings", "-o", bin}, s.args...)
			run(t, rustc(), args...)
			out := run(t, bin)
			if !strings.Contains(out, "test result: ok.") || strings.Contains(out, " 0 passed") {
				t.Errorf("%s tests did not pass:\n%s", s.name, out)
			}
		})
	}
}
