package server

import (
	"strings"
	"testing"
)

// TestServer_workbench runs the exec workbench through the real server and
// a real MCP client: the integration is in the catalog, a file written by
// one tool is read by a command, a refusal arrives as a tool error whose
// reason is the code and whose message names the node, position and rule, and another user's plan of the same name is theirs alone.
func TestServer_workbench(t *testing.T) {
	w := startWorkbench(t, Config{DataDir: t.TempDir()})
	alice := newJotsAgent(t, w, "alice@example.com")
	bob := newJotsAgent(t, w, "bob@example.com")

	alice.must("workbench_write_file", map[string]any{"plan": "report", "path": "in/names.txt", "content": "ada\ngrace\n"})
	out := alice.must("workbench_exec", map[string]any{"plan": "report",
		"command": "n=0; while read -r name; do n=$((n+1)); echo \"hi $name\" >> out.txt; done < in/names.txt; echo $n"})
	if out["exit_code"] != 0.0 || out["stdout"] != "2\n" {
		t.Fatalf("exec = %v", out)
	}
	read := alice.must("workbench_read_file", map[string]any{"plan": "report", "path": "out.txt"})
	if read["content"] != "hi ada\nhi grace\n" {
		t.Errorf("read_file = %v", read)
	}
	_, failure := alice.exec("workbench_exec", map[string]any{"plan": "report", "command": "echo $(curl http://169.254.169.254/)"})
	if failure == nil || failure["reason"] != "COMMAND_NOT_ALLOWED" || !strings.Contains(failure["message"].(string), "curl in $(...) at 1:8") {
		t.Errorf("exec with curl in $(...): %v", failure)
	}
	if _, failure := bob.exec("workbench_read_file", map[string]any{"plan": "report", "path": "out.txt"}); failure == nil || failure["reason"] != "NOT_FOUND" {
		t.Errorf("bob reading alice's plan: %v", failure)
	}
	alice.must("workbench_release", map[string]any{"plan": "report"})
	alice.must("workbench_release", map[string]any{"plan": "report"})
}
