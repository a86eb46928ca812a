package wattest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ErrNoWat2wasm reports that wat2wasm is not on PATH.
var ErrNoWat2wasm = errors.New("wat2wasm not found: run make test (it installs wabt)")

// compiled is one cache entry: the outcome of compiling one WAT source.
type compiled struct {
	once sync.Once
	wasm []byte
	err  error
}

// cache holds compiled sources by the SHA-256 of their text, for the life
// of the test binary.
var cache sync.Map // [sha256.Size]byte -> *compiled

// Build compiles WAT source into wasm bytes. Results, failures included,
// are cached by content for the life of the test binary. It is for code
// without a testing.TB, such as TestMain; tests use Compile.
func Build(src []byte) ([]byte, error) {
	v, _ := cache.LoadOrStore(sha256.Sum256(src), &compiled{})
	c := v.(*compiled)
	c.once.Do(func() { c.wasm, c.err = run(src) })
	if c.err != nil {
		return nil, c.err
	}
	return bytes.Clone(c.wasm), nil
}

// run writes src to a temporary file and compiles it with wat2wasm.
func run(src []byte) ([]byte, error) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		return nil, ErrNoWat2wasm
	}
	dir, err := os.MkdirTemp("", "wattest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "fixture.wat"), filepath.Join(dir, "fixture.wasm")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		return nil, err
	}
	if b, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wat2wasm: %w\n%s", err, b)
	}
	return os.ReadFile(out)
}

// Compile compiles WAT source into wasm bytes, failing the test if
// wat2wasm is missing or rejects the source.
func Compile(t testing.TB, src []byte) []byte {
	t.Helper()
	wasm, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// CompileFile compiles the WAT file at path, with every {{KEY}} of vars
// replaced by its value first, failing the test on any error.
func CompileFile(t testing.TB, path string, vars map[string]string) []byte {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	wasm, err := Build([]byte(strings.NewReplacer(pairs...).Replace(string(src))))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return wasm
}

// CompileTo compiles WAT source into the wasm file out, creating its
// folder, and returns out. It fails the test on any error.
func CompileTo(t testing.TB, src []byte, out string) string {
	t.Helper()
	wasm := Compile(t, src)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Escape returns s as the body of a WAT string literal: printable ASCII
// other than `"` and `\` as is, every other byte as a \hh escape.
func Escape(s string) string {
	var sb strings.Builder
	for _, c := range []byte(s) {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\%02x`, c)
		}
	}
	return sb.String()
}
