package registry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"text/template"

	"github.com/workbench-dev/workbench/internal/wattest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/server/servertest"
)

// fixtureDir holds the runtime's compilation cache for this test binary.
var fixtureDir string

func TestMain(m *testing.M) {
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

// echoManifest is the manifest of an echo fixture, version 1.0.0: auth
// none, one echo tool per slug.
func echoManifest(name string, slugs ...string) []byte {
	return versionedManifest(name, "1.0.0", slugs...)
}

// versionedManifest is echoManifest with another version.
func versionedManifest(name, version string, slugs ...string) []byte {
	return servertest.EchoManifest(name, version, slugs...)
}

// echoPlugin writes an echo plugin named name with the given tool slugs to
// dir/rel and returns its path.
func echoPlugin(t testing.TB, dir, rel, name string, slugs ...string) string {
	t.Helper()
	return versionedPlugin(t, dir, rel, name, "1.0.0", slugs...)
}

// versionedPlugin is echoPlugin with another version.
func versionedPlugin(t testing.TB, dir, rel, name, version string, slugs ...string) string {
	t.Helper()
	manifest := versionedManifest(name, version, slugs...)
	var src bytes.Buffer
	err := echoTemplate.Execute(&src, struct {
		Manifest    string
		ManifestLen int
		Exports     []string
	}{wattest.Escape(string(manifest)), len(manifest), slugs})
	if err != nil {
		t.Fatal(err)
	}
	return wattest.CompileTo(t, src.Bytes(), filepath.Join(dir, rel))
}

// watFixture compiles testdata/<name>.wat to dir/rel and returns its path.
func watFixture(t testing.TB, name, dir, rel string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	return wattest.CompileTo(t, src, filepath.Join(dir, rel))
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
// newRegistry returns a registry without natives.
func newRegistry(t testing.TB, natives ...*Integration) *Registry {
	t.Helper()
	r, err := New(nil, natives...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustLoad(t testing.TB, loader Loader, sources ...Source) *Snapshot {
	t.Helper()
	s, err := newRegistry(t).Load(context.Background(), loader, sources)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
