package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// compileWAT compiles testdata/<name>.wat to out with wat2wasm.
func compileWAT(t *testing.T, name, out string) {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Fatal("wat2wasm not found: run `make test` (it installs Debian's wabt) or tools/test-deps.sh")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("wat2wasm", filepath.Join("testdata", name+".wat"), "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", name, err, b)
	}
}

// runningServer starts a server on 127.0.0.1:0 and stops it when the test ends.
type runningServer struct {
	srv    *Server
	logs   *lockedBuffer
	cancel context.CancelFunc
	done   chan error
	base   string

	stopped bool
}

func startServer(t *testing.T, cfg Config) *runningServer {
	t.Helper()
	cfg.ListenAddr = "127.0.0.1:0"
	logs := new(lockedBuffer)
	srv, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningServer{srv: srv, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { rs.done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-rs.done:
		t.Fatalf("Run ended before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not listen within 10s")
	}
	rs.base = "http://" + srv.Addr()
	t.Cleanup(func() { rs.stop(t) })
	return rs
}

// stop cancels Run and waits for it to return; it reports how long that
// took. Calls after the first do nothing.
func (rs *runningServer) stop(t *testing.T) time.Duration {
	t.Helper()
	if rs.stopped {
		return 0
	}
	rs.stopped = true
	start := time.Now()
	rs.cancel()
	select {
	case err := <-rs.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	return time.Since(start)
}

var testClient = &http.Client{Timeout: 5 * time.Second}

func (rs *runningServer) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := testClient.Get(rs.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET %s: Content-Type %q, want JSON", path, ct)
	}
	return resp.StatusCode, body
}

type health struct {
	Status  string `json:"status"`
	Plugins struct {
		Loading bool `json:"loading"`
		Loaded  int  `json:"loaded"`
		Failed  int  `json:"failed"`
	} `json:"plugins"`
}

func (rs *runningServer) health(t *testing.T) health {
	t.Helper()
	status, body := rs.get(t, "/healthz")
	if status != http.StatusOK {
		t.Fatalf("/healthz status %d: %s", status, body)
	}
	var h health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("/healthz body %s: %v", body, err)
	}
	if h.Status != "ok" {
		t.Errorf("/healthz status field %q", h.Status)
	}
	return h
}

func TestServer_Run(t *testing.T) {
	root := t.TempDir()
	builtin := filepath.Join(root, "builtin")
	compileWAT(t, "echo", filepath.Join(builtin, "echo", "echo.wasm"))
	broken := filepath.Join(builtin, "broken", "broken.wasm")
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("\x00asm but not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(root, "data", "nested")
	rs := startServer(t, Config{DataDir: dataDir, BuiltinPluginsDir: builtin})

	deadline := time.Now().Add(30 * time.Second)
	h := rs.health(t)
	for h.Plugins.Loading && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		h = rs.health(t)
	}
	if h.Plugins.Loading || h.Plugins.Loaded != 1 || h.Plugins.Failed != 1 {
		t.Errorf("plugins = %+v, want loading false, 1 loaded, 1 failed", h.Plugins)
	}

	status, body := rs.get(t, "/no/such/route")
	if status != http.StatusNotFound {
		t.Errorf("unknown route: status %d, want 404", status)
	}
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "NOT_FOUND" || !strings.Contains(e.Error.Message, "/no/such/route") {
		t.Errorf("unknown route body %s (%v), want a NOT_FOUND error naming the path", body, err)
	}

	for _, dir := range []string{dataDir, filepath.Join(dataDir, "wasm-cache")} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s mode %v, want 0700", dir, perm)
		}
	}

	logs := rs.logs.String()
	for _, want := range []string{
		"msg=\"loaded integration\" integration=echo version=0.1.0 tools=1",
		"msg=\"plugin failed to load\" path=" + broken,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}

	rs.stop(t)
	if _, err := testClient.Get(rs.base + "/healthz"); err == nil {
		t.Error("server still answers after Run returned")
	}
	if err := rs.srv.Run(context.Background()); !errors.Is(err, ErrAlreadyRun) {
		t.Errorf("second Run: %v, want ErrAlreadyRun", err)
	}
}

func TestServer_HealthzWhileLoading(t *testing.T) {
	root := t.TempDir()
	builtin := filepath.Join(root, "builtin")
	compileWAT(t, "spin", filepath.Join(builtin, "spin", "spin.wasm"))
	rs := startServer(t, Config{DataDir: filepath.Join(root, "data"), BuiltinPluginsDir: builtin})

	// The spin plugin's manifest never returns, so loading is still running.
	start := time.Now()
	h := rs.health(t)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("/healthz took %v while plugins load", elapsed)
	}
	if !h.Plugins.Loading || h.Plugins.Loaded != 0 {
		t.Errorf("plugins = %+v, want loading true, none loaded", h.Plugins)
	}
	// Shutdown stops the stuck load instead of waiting for its 30 s deadline.
	if took := rs.stop(t); took > 10*time.Second {
		t.Errorf("shutdown took %v with a plugin stuck loading", took)
	}
}

func TestNew_Errors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing plugins dir", Config{DataDir: root, PluginsDir: filepath.Join(root, "nope")}, "PLUGINS_DIR"},
		{"plugins dir is a file", Config{DataDir: root, PluginsDir: file}, "PLUGINS_DIR"},
		{"data dir under a file", Config{DataDir: filepath.Join(file, "data")}, "DATA_DIR"},
		{"bad surface", Config{DataDir: root, ToolSurface: "x"}, "MCP_TOOL_SURFACE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestServer_RunListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := New(context.Background(), Config{ListenAddr: ln.Addr().String(), DataDir: t.TempDir(), BuiltinPluginsDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = srv.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "LISTEN_ADDR") {
		t.Errorf("Run on a busy port = %v, want an error naming LISTEN_ADDR", err)
	}
	if srv.Addr() != "" {
		t.Errorf("Addr = %q after a failed listen", srv.Addr())
	}
}
