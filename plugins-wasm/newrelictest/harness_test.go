package newrelictest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

const (
	// newrelicWasm is the plugin `make plugins` builds.
	newrelicWasm = "../newrelic/newrelic.wasm"
	// conformanceDir holds the C kit's conformance plugin, built by the tests.
	conformanceDir = "../../pdk/c/conformance"

	apiKey = "NRAK-TESTKEY0123456789ABCDEFGHIJ"
	userID = "u1"
)

var (
	cacheDir string
	tmpDir   string

	conformanceOnce  sync.Once
	conformanceBytes []byte
	conformanceErr   error
)

// TestMain shares one compilation cache and one build directory between
// the tests.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "newrelictest-")
	if err != nil {
		panic(err)
	}
	tmpDir = dir
	cacheDir = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildConformance compiles pdk/c/conformance to conf-c.wasm with clang
// (through the kit's plugin.mk), once per run.
func buildConformance(t testing.TB) []byte {
	t.Helper()
	conformanceOnce.Do(func() {
		out := filepath.Join(tmpDir, "conf-c.wasm")
		cmd := exec.Command("make", "--no-print-directory", "-C", conformanceDir, "OUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			conformanceErr = errors.New("building the C conformance plugin (run `make test-deps` for clang, lld and wasi-libc): " + err.Error() + "\n" + string(b))
			return
		}
		conformanceBytes, conformanceErr = os.ReadFile(out)
	})
	if conformanceErr != nil {
		t.Fatal(conformanceErr)
	}
	return conformanceBytes
}

func readNewRelicWasm(t testing.TB) []byte {
	t.Helper()
	return plugintest.ReadWasm(t, newrelicWasm)
}

// hostOptions configures loadPlugin.
type hostOptions struct {
	settings runtime.MapSettings
	creds    *credential.Memory
	resolver egress.Resolver
	logs     *plugintest.Logs
}

// loadPlugin loads wasm into a fresh host with the given options.
func loadPlugin(t testing.TB, wasm []byte, o hostOptions) *runtime.Plugin {
	t.Helper()
	var logger *slog.Logger
	if o.logs != nil {
		logger = slog.New(o.logs)
	}
	return plugintest.Load(t, wasm, plugintest.HostConfig{
		CacheDir:    cacheDir,
		Credentials: o.creds,
		Egress:      egress.Options{AllowPrivate: true, Resolver: o.resolver},
		Settings:    o.settings,
		Logger:      logger,
	})
}

// decode unmarshals raw into a generic value.
func decode(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// canonical re-encodes JSON so two documents compare by content.
func canonical(t *testing.T, raw string) string {
	t.Helper()
	b, err := json.Marshal(decode(t, []byte(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// contains reports whether s holds every part.
func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
