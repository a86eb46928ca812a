package runtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/workbench-dev/workbench/runtime/interrupt/interrupttest"
)

// TestInterrupt_differential calls every export of every module of the
// runtime's tests and of the built-in plugins before and after the
// interrupt rewrite (package interrupttest). The kits' conformance plugins
// are not compared yet.
//
// Under -race only the hand-written fixtures are compared: the Go-built
// modules take minutes there (instantiating them copies megabytes through
// instrumented code), and the comparison checks the rewrite, not
// concurrency. make test runs this test without -race too.
func TestInterrupt_differential(t *testing.T) {
	if raceEnabled {
		t.Run("hostile.wat", func(t *testing.T) {
			interrupttest.Compare(t, wat(t, "hostile", fixtureManifest()), payload64)
		})
		return
	}
	modules := map[string]func(t *testing.T) []byte{
		"hostile.wat":       func(t *testing.T) []byte { return wat(t, "hostile", fixtureManifest()) },
		"manifest_http.wat": func(t *testing.T) []byte { return wat(t, "manifest_http", "") },
		"badimports.wat":    func(t *testing.T) []byte { return wat(t, "badimports", "") },
		"goecho":            func(t *testing.T) []byte { return goPlugin(t, filepath.Join("testdata", "goecho")) },
		"extismecho":        func(t *testing.T) []byte { return goPlugin(t, filepath.Join("testdata", "extismecho")) },
		"goplugin": func(t *testing.T) []byte {
			return goPlugin(t, filepath.Join("..", "cmd", "workbench", "testdata", "goplugin"))
		},
	}
	builtins, _ := filepath.Glob(filepath.Join("..", "plugins-wasm", "*", "*.wasm"))
	for _, path := range builtins {
		modules[filepath.Base(path)] = func(t *testing.T) []byte {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	if len(builtins) == 0 {
		t.Log("no built-in plugin is built (make plugins): comparing the test fixtures only")
	}
	for name, wasm := range modules {
		t.Run(name, func(t *testing.T) {
			interrupttest.Compare(t, wasm(t), payload64)
		})
	}
}
