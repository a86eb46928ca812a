package plugintest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

var (
	wasmMu    sync.Mutex
	wasmFiles = map[string][]byte{}
)

// ReadWasm returns the built plugin at path, read once per test binary. A
// missing file fails the test telling to run make plugins.
func ReadWasm(t testing.TB, path string) []byte {
	t.Helper()
	wasmMu.Lock()
	defer wasmMu.Unlock()
	if b, ok := wasmFiles[path]; ok {
		return b
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run make plugins", path)
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	wasmFiles[path] = b
	return b
}

// HostConfig is what a test host is built from. Zero fields take the
// runtime's defaults; a nil Credentials is an empty credential.Memory.
type HostConfig struct {
	// CacheDir is the compilation cache the tests of a binary share.
	CacheDir    string
	Credentials *credential.Memory
	Settings    runtime.MapSettings
	// Egress configures the host's egress client.
	Egress egress.Options
	Logger *slog.Logger
}

// NewHost returns a runtime host built from cfg. The host and its egress
// client are closed when the test ends.
func NewHost(t testing.TB, cfg HostConfig) *runtime.Host {
	t.Helper()
	if cfg.Credentials == nil {
		cfg.Credentials = credential.NewMemory()
	}
	client := egress.NewClient(cfg.Egress)
	t.Cleanup(client.Close)
	host, err := runtime.NewHost(context.Background(), runtime.Config{
		CacheDir:    cfg.CacheDir,
		Credentials: cfg.Credentials,
		Egress:      client,
		Settings:    cfg.Settings,
		Logger:      cfg.Logger,
	})
	if err != nil {
		t.Fatalf("new host: %v", err)
	}
	t.Cleanup(func() { host.Close(context.Background()) })
	return host
}

// Load loads wasm into a new host built from cfg and fails the test if the
// runtime refuses it.
func Load(t testing.TB, wasm []byte, cfg HostConfig) *runtime.Plugin {
	t.Helper()
	p, err := NewHost(t, cfg).Load(context.Background(), wasm)
	if err != nil {
		t.Fatalf("load plugin: %v", err)
	}
	return p
}
