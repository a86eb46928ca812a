package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/interrupt"
	"github.com/workbench-dev/workbench/toolcall"
)

// payload64 is 64 bytes of JSON, the round-trip size of the ABI goals.
var payload64 = []byte(`{"owner":"workbench-dev","repo":"workbench","number":4242,"x":1}`)

// nativeEcho does in Go what the echo fixture does plus the host's own
// checks: validate the input, copy it, validate the output.
//
//go:noinline
func nativeEcho(in []byte) ([]byte, error) {
	if !json.Valid(in) {
		return nil, fmt.Errorf("invalid")
	}
	out := append([]byte(nil), in...)
	if !json.Valid(out) {
		return nil, fmt.Errorf("invalid")
	}
	return out, nil
}

// BenchmarkCall64B compares a 64 B round trip through a small (WAT) plugin
// with the same work done natively.
func BenchmarkCall64B(b *testing.B) {
	if len(payload64) != 64 {
		b.Fatalf("payload is %d bytes", len(payload64))
	}
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			if _, err := nativeEcho(payload64); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, m := range benchModules {
		b.Run("wasm-"+m.name, func(b *testing.B) {
			p := m.load(b)
			ctx := context.Background()
			call := toolcall.Call{Tool: m.tool, UserID: "u1", Input: payload64}
			for b.Loop() {
				if _, err := p.Call(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchModules are the two kinds of plugin the benchmarks compare: a small
// hand-written module (the size of a C, AssemblyScript or Rust plugin) and a
// Go plugin built with the Go PDK, and a Go plugin without the PDK.
var benchModules = []struct {
	name, tool string
	load       func(b *testing.B) *Plugin
}{
	{"small", "fixture_echo", func(b *testing.B) *Plugin { return loadHostile(b, Config{}) }},
	{"go", "goecho_echo", func(b *testing.B) *Plugin { return loadGo(b, filepath.Join("testdata", "goecho")) }},
	// The smallest Go plugin, written against the ABI without the PDK: the
	// floor of a Go plugin's call.
	{"go-raw", "goplugin_echo", func(b *testing.B) *Plugin {
		return loadGo(b, filepath.Join("..", "cmd", "workbench", "testdata", "goplugin"))
	}},
	// A Go plugin built with the Extism Go PDK, loaded through go-sdk.
	{"extism", "extismecho_echo", func(b *testing.B) *Plugin { return loadGo(b, filepath.Join("testdata", "extismecho")) }},
}

func loadGo(b *testing.B, dir string) *Plugin {
	p, err := newTestHost(b, Config{}).Load(context.Background(), goPlugin(b, dir))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// goPlugin builds a Go plugin folder once per test binary.
func goPlugin(b testing.TB, dir string) []byte {
	goPlugins.Lock()
	defer goPlugins.Unlock()
	if wasm, ok := goPlugins.built[dir]; ok {
		return wasm
	}
	out := filepath.Join(b.TempDir(), "plugin.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", dir, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	goPlugins.built[dir] = wasm
	return wasm
}

var goPlugins = struct {
	sync.Mutex
	built map[string][]byte
}{built: map[string][]byte{}}

// BenchmarkIsolation compares the two ways of keeping users apart: a warm
// per-user pool (what the runtime does) and a fresh instance per call.
func BenchmarkIsolation(b *testing.B) {
	ctx := context.Background()
	for _, m := range benchModules {
		p := m.load(b)
		b.Run(m.name+"/per-user-pool", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := p.Call(ctx, toolcall.Call{Tool: m.tool, UserID: fmt.Sprint("u", i%4), Input: payload64}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(m.name+"/fresh-instance", func(b *testing.B) {
			st := &callState{plugin: p, tool: p.tools[m.tool]}
			cctx := context.WithValue(ctx, callStateKey{}, st)
			for b.Loop() {
				in, err := p.newInstance(ctx, "u1")
				if err != nil {
					b.Fatal(err)
				}
				if _, terr := runGuest(cctx, in, st, p.tools[m.tool].ExportName(), payload64); terr != nil {
					b.Fatal(terr)
				}
				in.close(ctx)
			}
		})
	}
}

// BenchmarkHTTPRequest compares http_request through the plugin host with a
// plain http.Client call to the same local upstream.
func BenchmarkHTTPRequest(b *testing.B) {
	api := newUpstream(b, nil)
	url := "http://api.test:" + api.port() + "/bench"
	b.Run("plain-http-client", func(b *testing.B) {
		c := &http.Client{}
		for b.Loop() {
			resp, err := c.Get(api.URL + "/bench")
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("plugin-http_request", func(b *testing.B) {
		creds := credential.NewMemory()
		creds.Set("u1", "fixture", &credential.Credential{Fields: map[string]string{"api_key": "k"}})
		cfg := egressConfig(creds, MapSettings{"fixture": {"base_url": "http://api.test:" + api.port()}}, fakeResolver{"api.test": "127.0.0.1"}, api)
		p := loadHostile(b, cfg, "api.test")
		call := toolcall.Call{Tool: "fixture_http", UserID: "u1", Input: []byte(request("GET", url, nil))}
		for b.Loop() {
			if _, err := p.Call(context.Background(), call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstantiate measures creating one instance (with _initialize
// for the Go plugin) and the heap an idle instance holds.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	for _, m := range benchModules {
		b.Run(m.name, func(b *testing.B) {
			p := m.load(b)
			var keep []*instance
			var before, after goruntime.MemStats
			goruntime.GC()
			goruntime.ReadMemStats(&before)
			for b.Loop() {
				in, err := p.newInstance(ctx, "u1")
				if err != nil {
					b.Fatal(err)
				}
				keep = append(keep, in)
			}
			goruntime.GC()
			goruntime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "heap-B/instance")
			for _, in := range keep {
				in.close(ctx)
			}
		})
	}
}

// BenchmarkCompileGitHub compiles the built github plugin with an empty
// compilation cache and with a warm on-disk one (a restarted server).
func BenchmarkCompileGitHub(b *testing.B) {
	wasm, err := os.ReadFile(filepath.Join("..", "plugins-wasm", "github", "github.wasm"))
	if err != nil {
		b.Fatalf("%v: run `make plugins` first (make bench does)", err)
	}
	ctx := context.Background()
	load := func(b *testing.B, dir string) {
		h, err := NewHost(ctx, Config{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Load(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		h.Close(ctx)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			load(b, b.TempDir())
		}
	})
	b.Run("from-disk-cache", func(b *testing.B) {
		dir := b.TempDir()
		load(b, dir)
		for b.Loop() {
			load(b, dir)
		}
	})
}

// loopIterations is the length of the loop of BenchmarkGuestLoop.
const loopIterations = 10_000_000

// nativeSum is testdata/loop.wat's loop_sum in Go.
//
//go:noinline
func nativeSum(n int32) int32 {
	var acc int32
	for ; n != 0; n-- {
		acc += n
	}
	return acc
}

// BenchmarkGuestLoop compares a 10-million-iteration loop in Go with the
// same loop in wasm: with the interrupt check (what plugins run), without
// any check, and with wazero's WithCloseOnContextDone (what they ran
// before). The metric is the cost of one iteration.
func BenchmarkGuestLoop(b *testing.B) {
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			nativeSum(loopIterations)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/loopIterations, "ns/iteration")
	})
	src := wat(b, "loop", "")
	rewritten, err := interrupt.Inject(src, InterruptImport)
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name        string
		wasm        []byte
		closeOnDone bool
	}{
		{"wasm-interrupt-check", rewritten, false},
		{"wasm-no-check", src, false},
		{"wasm-close-on-context-done", src, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(tt.closeOnDone))
			defer rt.Close(ctx)
			if _, err := hostModule(rt).Instantiate(ctx); err != nil {
				b.Fatal(err)
			}
			mod, err := rt.Instantiate(ctx, tt.wasm)
			if err != nil {
				b.Fatal(err)
			}
			fn := mod.ExportedFunction("loop_sum")
			for b.Loop() {
				if _, err := fn.Call(ctx, loopIterations, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/loopIterations, "ns/iteration")
		})
	}
}

// BenchmarkRunawayStop measures how long after its deadline a runaway call
// returns, with 2 x GOMAXPROCS runaway loops at once; the metrics are the
// median and the 99th percentile over every call.
func BenchmarkRunawayStop(b *testing.B) {
	const timeout = 20 * time.Millisecond
	p := loadRunaway(b, timeout)
	n := 2 * goruntime.GOMAXPROCS(0)
	var late []time.Duration
	var mu sync.Mutex
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				start := time.Now()
				p.Call(context.Background(), toolcall.Call{Tool: "runaway_loop", UserID: fmt.Sprint("u", i)})
				mu.Lock()
				late = append(late, time.Since(start)-timeout)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2].Microseconds()), "µs-late-p50")
	b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "µs-late-p99")
}

// BenchmarkInject measures the interrupt rewrite of a large Go plugin and
// of a C plugin (built by make plugins).
func BenchmarkInject(b *testing.B) {
	for _, name := range []string{"github", "newrelic"} {
		wasm, err := os.ReadFile(filepath.Join("..", "plugins-wasm", name, name+".wasm"))
		if err != nil {
			b.Fatalf("%v: run `make plugins` first (make bench does)", err)
		}
		b.Run(fmt.Sprintf("%s-%dKiB", name, len(wasm)/1024), func(b *testing.B) {
			b.SetBytes(int64(len(wasm)))
			for b.Loop() {
				if _, err := interrupt.Inject(wasm, InterruptImport); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
