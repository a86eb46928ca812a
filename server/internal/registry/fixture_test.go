package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/workbench-dev/workbench/runtime"
)

// fixtureDir holds the .wasm files compiled from testdata for this test binary.
var fixtureDir string

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		fmt.Fprintln(os.Stderr, "registry tests need wat2wasm: run `make test` (it installs Debian's wabt) or `tools/test-deps.sh`")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "registry-fixtures-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var echoTemplate = template.Must(template.ParseFiles(filepath.Join("testdata", "echo.wat.tmpl")))

// echoManifest is the manifest of an echo fixture: auth none, one echo tool per slug.
func echoManifest(name string, slugs ...string) []byte {
	type tool struct {
		Slug        string          `json:"slug"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	m := struct {
		ABI         int               `json:"abi"`
		Name        string            `json:"name"`
		Version     string            `json:"version"`
		Description string            `json:"description"`
		Auth        map[string]string `json:"auth"`
		Tools       []tool            `json:"tools"`
	}{ABI: 1, Name: name, Version: "1.0.0", Description: "Echo fixture " + name + ".", Auth: map[string]string{"mode": "none"}}
	for _, s := range slugs {
		m.Tools = append(m.Tools, tool{Slug: s, Description: "Echoes its input.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// watString escapes bytes for a WAT string literal.
func watString(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\%02x`, c)
		}
	}
	return sb.String()
}

// echoPlugin writes an echo plugin named name with the given tool slugs to
// dir/rel and returns its path.
func echoPlugin(t testing.TB, dir, rel, name string, slugs ...string) string {
	t.Helper()
	manifest := echoManifest(name, slugs...)
	var src bytes.Buffer
	err := echoTemplate.Execute(&src, struct {
		Manifest    string
		ManifestLen int
		Exports     []string
	}{watString(manifest), len(manifest), slugs})
	if err != nil {
		t.Fatal(err)
	}
	return watFile(t, src.Bytes(), filepath.Join(dir, rel))
}

// watFixture compiles testdata/<name>.wat to dir/rel and returns its path.
func watFixture(t testing.TB, name, dir, rel string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	return watFile(t, src, filepath.Join(dir, rel))
}

func watFile(t testing.TB, src []byte, out string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(fixtureDir, "*.wat")
	if err != nil {
		t.Fatal(err)
	}
	watPath := f.Name()
	_, err = f.Write(src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("wat2wasm", watPath, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", out, err, b)
	}
	return out
}

// newTestHost returns a runtime host closed at the end of the test.
func newTestHost(t testing.TB) *runtime.Host {
	t.Helper()
	ctx := context.Background()
	h, err := runtime.NewHost(ctx, runtime.Config{CacheDir: filepath.Join(fixtureDir, "wasm-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

// mustLoad loads sources and fails the test on a load error.
func mustLoad(t testing.TB, loader Loader, sources ...Source) *Snapshot {
	t.Helper()
	s, err := Load(context.Background(), loader, sources)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
