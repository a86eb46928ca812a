package main

import (
	"strings"
	"testing"
)

// TestAppCommands adds, lists and removes custom apps against both stores:
// names unique per user, integration names refused, another user's app out
// of reach, a manual app's token never printed.
func TestAppCommands(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t)
			env["ENCRYPTION_KEY"] = strings.Repeat("ab", 32)
			for _, email := range []string{"alice@example.com", "bob@example.com"} {
				if code, _, stderr := runCLI(t, env, "user", "add", "--email", email); code != 0 {
					t.Fatalf("user add %s: exit %d, %s", email, code, stderr)
				}
			}
			alice := []string{"--email", "alice@example.com"}
			steps := []struct {
				name       string
				args       []string
				wantCode   int
				wantStdout string
				wantStderr string
			}{
				{"add", append([]string{"app", "add", "--name", "everything", "--url", "http://127.0.0.1:3001/mcp"}, alice...), 0, "added app everything (app_", ""},
				{"add manual", append([]string{"app", "add", "--name", "linear", "--url", "https://mcp.linear.app/mcp", "--auth", "manual", "--bearer", "lin_secret"}, alice...), 0, "auth manual", ""},
				{"same name", append([]string{"app", "add", "--name", "everything", "--url", "http://127.0.0.1:3002/mcp"}, alice...), 1, "", "the app name is taken"},
				{"integration name", append([]string{"app", "add", "--name", "jots", "--url", "https://example.com/mcp"}, alice...), 1, "", "the name of an integration"},
				{"bad name", append([]string{"app", "add", "--name", "My_App", "--url", "https://example.com/mcp"}, alice...), 1, "", "invalid argument"},
				{"file URL", append([]string{"app", "add", "--name", "files", "--url", "file:///etc/passwd"}, alice...), 1, "", "scheme"},
				{"manual without bearer", append([]string{"app", "add", "--name", "nobearer", "--url", "https://example.com/mcp", "--auth", "manual"}, alice...), 1, "", "needs a bearer token"},
				{"unknown user", []string{"app", "add", "--email", "carol@example.com", "--name", "x1", "--url", "https://example.com/mcp"}, 1, "", "no such user"},
				{"missing url", append([]string{"app", "add", "--name", "x1"}, alice...), 2, "", "want --email, --name, --url"},
				{"bob removes alice's app", []string{"app", "rm", "--email", "bob@example.com", "--name", "everything"}, 1, "", "no such app"},
				{"bob lists nothing", []string{"app", "ls", "--email", "bob@example.com"}, 0, "NAME  AUTH  URL\n", ""},
				{"remove", append([]string{"app", "rm", "--name", "linear"}, alice...), 0, "removed app linear of alice@example.com", ""},
				{"remove again", append([]string{"app", "rm", "--name", "linear"}, alice...), 1, "", "no such app"},
			}
			for _, s := range steps {
				code, stdout, stderr := runCLI(t, env, s.args...)
				if code != s.wantCode || !strings.Contains(stdout, s.wantStdout) || !strings.Contains(stderr, s.wantStderr) {
					t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", s.name, code, stdout, stderr, s.wantCode, s.wantStdout, s.wantStderr)
				}
				if strings.Contains(stdout+stderr, "lin_secret") {
					t.Fatalf("%s: the bearer token was printed", s.name)
				}
			}
			code, stdout, _ := runCLI(t, env, append([]string{"app", "ls"}, alice...)...)
			if code != 0 || stdout != "NAME        AUTH  URL\neverything  none  http://127.0.0.1:3001/mcp\n" {
				t.Fatalf("app ls: exit %d, %q", code, stdout)
			}
		})
	}
}
