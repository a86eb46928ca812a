package atlassianjiratest

import (
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/toolcall"
)

// echo64 is the 64-byte input of the round-trip benchmarks.
const echo64 = `{"id":12345,"name":"workbench","tags":["a","b"],"ok":true,"x":1}`

// echo16K is a 16 KiB input: one long string, as in an issue description.
var echo16K = `{"description":"` + strings.Repeat("lorem ipsum ", 16384/12-2) + `"}`

// BenchmarkConformance_Echo64 measures a 64 B echo through the Rust
// conformance plugin on a warm instance (wb_alloc, parse, schema check,
// serialize, output_set), next to the same decode and encode done natively
// in Go: the baseline of the same run. The 16 KiB case shows how the cost
// grows with the payload.
func BenchmarkConformance_Echo64(b *testing.B) {
	if len(echo64) != 64 {
		b.Fatalf("echo64 is %d bytes", len(echo64))
	}
	c := newConfFixture(b)
	ctx := context.Background()
	for _, in := range []struct{ name, input string }{{"64B", echo64}, {"16KiB", echo16K}} {
		call := toolcall.Call{Tool: "conf_rust_echo", UserID: userID, Input: []byte(in.input)}
		b.Run("wasm-rust-"+in.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.plugin.Call(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.plugin.Stats().MemoryPages)*64, "KiB-instance-memory")
		})
		b.Run("native-go-"+in.name, func(b *testing.B) {
			for b.Loop() {
				var v any
				if err := json.Unmarshal([]byte(in.input), &v); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlugin_Load measures loading each Rust module into a fresh host
// without a compilation cache: compile, instantiate once, read and check
// the manifest.
func BenchmarkPlugin_Load(b *testing.B) {
	modules := []struct {
		name string
		wasm []byte
	}{
		{"conformance", conformanceWasm(b)},
		{"atlassian-jira", jiraWasm(b)},
	}
	ctx := context.Background()
	for _, m := range modules {
		b.Run(m.name, func(b *testing.B) {
			b.ReportMetric(float64(len(m.wasm))/1024, "KiB-module")
			for b.Loop() {
				host, err := runtime.NewHost(ctx, runtime.Config{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := host.Load(ctx, m.wasm); err != nil {
					b.Fatal(err)
				}
				host.Close(ctx)
			}
		})
	}
}

// BenchmarkPlugin_Instantiate measures a call that needs a new instance
// (every iteration is a new user, so no pooled instance fits), with the
// module already compiled, and reports the memory each idle instance holds.
// The pool keeps its default bound (256 idle instances per plugin), so
// long runs also pay for closing the least recently used instance.
func BenchmarkPlugin_Instantiate(b *testing.B) {
	ctx := context.Background()
	modules := []struct {
		name, integration, tool, input string
		wasm                           []byte
	}{
		{"conformance", "conf-rust", "conf_rust_echo", echo64, conformanceWasm(b)},
		// A Jira call that fails inside the plugin before any HTTP.
		{"atlassian-jira", "atlassian-jira", "atlassian_jira_get_issue", `{"issue_key":"../x"}`, jiraWasm(b)},
	}
	for _, m := range modules {
		b.Run(m.name, func(b *testing.B) {
			host, err := runtime.NewHost(ctx, runtime.Config{
				CacheDir:    cacheDir,
				Credentials: credential.NewMemory(),
				Egress:      egress.NewClient(egress.Options{}),
			})
			if err != nil {
				b.Fatal(err)
			}
			defer host.Close(ctx)
			p, err := host.Load(ctx, m.wasm)
			if err != nil {
				b.Fatal(err)
			}
			heapBefore := liveHeap()
			n := 0
			for b.Loop() {
				n++
				_, err := p.Call(ctx, toolcall.Call{Tool: m.tool, UserID: fmt.Sprintf("user-%d", n), Input: []byte(m.input)})
				if m.integration == "conf-rust" && err != nil {
					b.Fatal(err)
				}
			}
			st := p.Stats()
			if st.InstancesIdle > 0 {
				b.ReportMetric(float64(st.MemoryPages)*64/float64(st.InstancesIdle), "KiB-linear-memory/instance")
				b.ReportMetric(float64(liveHeap()-heapBefore)/1024/float64(st.InstancesIdle), "KiB-host-heap/instance")
			}
		})
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	goruntime.GC()
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
