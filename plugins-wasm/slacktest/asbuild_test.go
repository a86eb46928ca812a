package slacktest

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// loopbackEgress returns egress options that may dial only 127.0.0.1 on
// the given ports, resolving names through r.
func loopbackEgress(t testing.TB, r *loopbackResolver, ports ...string) egress.Options {
	t.Helper()
	var allow []netip.AddrPort
	for _, p := range ports {
		ap, err := netip.ParseAddrPort("127.0.0.1:" + p)
		if err != nil {
			t.Fatal(err)
		}
		allow = append(allow, ap)
	}
	return egress.Options{AllowAddrs: allow, Resolver: r}
}
