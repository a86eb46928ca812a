package newrelictest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPDK_NativeUnitTests compiles the C kit with its unit tests
// (pdk/c/test/workbench_test.c) for this machine with gcc, under
// AddressSanitizer and UndefinedBehaviorSanitizer, and runs them: the JSON
// reader and writer, the arena, the input check, the manifest and the ABI
// glue against a fake host.
func TestPDK_NativeUnitTests(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "workbench_test")
	args := []string{"-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
		"-o", bin, "../../pdk/c/workbench.c", "../../pdk/c/test/workbench_test.c", "-lm"}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("native unit tests failed: %v", err)
	}
	m := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`).FindStringSubmatch(string(out))
	if m == nil || m[2] != "0" || m[1] == "0" {
		t.Fatalf("native unit tests did not report a clean run: %q", out)
	}
}
