package slacktest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// pdkDir is the AssemblyScript kit, whose asc builds the test modules.
const pdkDir = "../../pdk/assemblyscript"

var (
	cacheDir string // compilation cache shared by the tests
	buildDir string // AssemblyScript modules built by the tests

	asMu     sync.Mutex
	asBuilds = map[string][]byte{}
)

// TestMain shares one compilation cache and one build directory between
// the tests.
func TestMain(m *testing.M) {
	var err error
	if cacheDir, err = os.MkdirTemp("", "slacktest-cache-"); err != nil {
		panic(err)
	}
	if buildDir, err = os.MkdirTemp("", "slacktest-build-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(cacheDir)
	os.RemoveAll(buildDir)
	os.Exit(code)
}

// buildAS compiles an entry file of the kit (relative to pdkDir) with the
// kit's asconfig.json, once per test binary.
func buildAS(t testing.TB, entry string) []byte {
	t.Helper()
	asMu.Lock()
	defer asMu.Unlock()
	if b, ok := asBuilds[entry]; ok {
		return b
	}
	asc := filepath.Join(pdkDir, "node_modules", "assemblyscript", "bin", "asc.js")
	if _, err := os.Stat(asc); err != nil {
		t.Fatalf("%s is missing: run tools/test-deps.sh (make test does)", asc)
	}
	out := filepath.Join(buildDir, strings.NewReplacer("/", "_", ".", "_").Replace(entry)+".wasm")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "node_modules/assemblyscript/bin/asc.js", entry, "--config", "asconfig.json", "-o", out)
	cmd.Dir = pdkDir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc %s: %v\n%s", entry, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	asBuilds[entry] = b
	return b
}

// readWasm reads a built plugin.
func readWasm(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run make plugins", path)
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// loopbackResolver resolves the names of a test to 127.0.0.1 and refuses
// every other name, so nothing a plugin asks for leaves the machine. It
// records the names asked for.
type loopbackResolver struct {
	mu    sync.Mutex
	names map[string]bool
	asked []string
}

func newLoopbackResolver(names ...string) *loopbackResolver {
	r := &loopbackResolver{names: map[string]bool{}}
	for _, n := range names {
		r.names[n] = true
	}
	return r
}

func (r *loopbackResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	if r.names[host] {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
}

func (r *loopbackResolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// loopbackEgress returns an egress client that may dial only 127.0.0.1 on
// the given ports, resolving names through r.
func loopbackEgress(t testing.TB, r *loopbackResolver, ports ...string) *egress.Client {
	t.Helper()
	var allow []netip.AddrPort
	for _, p := range ports {
		ap, err := netip.ParseAddrPort("127.0.0.1:" + p)
		if err != nil {
			t.Fatal(err)
		}
		allow = append(allow, ap)
	}
	c := egress.NewClient(egress.Options{AllowAddrs: allow, Resolver: r})
	t.Cleanup(c.Close)
	return c
}

// logRecord is one record a plugin logged.
type logRecord struct {
	Level   slog.Level
	Message string
}

// logSink collects log records.
type logSink struct {
	mu      sync.Mutex
	records []logRecord
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, logRecord{r.Level, r.Message})
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

func (s *logSink) Records() []logRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]logRecord(nil), s.records...)
}

// newHost returns a runtime host closed at the end of the test.
func newHost(t testing.TB, cfg runtime.Config) *runtime.Host {
	t.Helper()
	cfg.CacheDir = cacheDir
	if cfg.Credentials == nil {
		cfg.Credentials = credential.NewMemory()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h, err := runtime.NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}
