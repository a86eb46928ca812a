package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// payload64 is 64 bytes of JSON, the round-trip size of the ABI goals.
var payload64 = []byte(`{"owner":"workbench-dev","repo":"workbench","number":4242,"x":1}`)

// nativeEcho does in Go what the echo tool does plus the host's own checks:
// validate the input, parse it to check it is an object, copy it, validate
// the output.
//
//go:noinline
func nativeEcho(in []byte) ([]byte, error) {
	if !json.Valid(in) {
		return nil, errors.New("invalid input")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(in, &obj); err != nil {
		return nil, err
	}
	out := append([]byte(nil), in...)
	if !json.Valid(out) {
		return nil, errors.New("invalid output")
	}
	return out, nil
}

// BenchmarkEcho64B is the 64 B round trip of the AssemblyScript conformance
// plugin on a warm instance, against the same work done natively.
func BenchmarkEcho64B(b *testing.B) {
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
	b.Run("assemblyscript", func(b *testing.B) {
		f := newConfFixture(b)
		ctx := context.Background()
		call := toolcall.Call{Tool: "conf_assemblyscript_echo", UserID: "u1", Input: payload64}
		for b.Loop() {
			if _, err := f.plugin.Call(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(f.plugin.Stats().MemoryPages)*64, "KiB-instance-memory")
	})
}

// BenchmarkCompile loads (compiles, probes the manifest of) the built Slack
// plugin and the conformance plugin with an empty compilation cache and
// with a warm one.
func BenchmarkCompile(b *testing.B) {
	modules := map[string][]byte{
		"slack":       plugintest.ReadWasm(b, slackWasmPath),
		"conformance": buildAS(b, conformanceEntry),
	}
	ctx := context.Background()
	for name, wasm := range modules {
		b.Run(name+"/cold", func(b *testing.B) {
			for b.Loop() {
				h, err := runtime.NewHost(ctx, runtime.Config{CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := h.Load(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				h.Close(ctx)
			}
			b.ReportMetric(float64(len(wasm)), "module-bytes")
		})
		b.Run(name+"/warm-cache", func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				h, err := runtime.NewHost(ctx, runtime.Config{CacheDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := h.Load(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				h.Close(ctx)
			}
		})
	}
}

// BenchmarkInstantiate measures a call by a new user, which instantiates a
// module for that user, and the Go heap and linear memory an idle instance
// keeps.
func BenchmarkInstantiate(b *testing.B) {
	f := newConfFixture(b)
	ctx := context.Background()
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		// Users stay below the pool's per-plugin cap of 256, so every
		// instance is kept and its memory counted.
		call := toolcall.Call{Tool: "conf_assemblyscript_echo", UserID: fmt.Sprint("user-", n%200, "-", n/200), Input: payload64}
		if _, err := f.plugin.Call(ctx, call); err != nil {
			b.Fatal(err)
		}
		n++
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	st := f.plugin.Stats()
	if idle := st.InstancesIdle; idle > 0 {
		b.ReportMetric(float64(st.MemoryPages)*64/float64(idle), "KiB-linear-memory/instance")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(idle), "heap-B/instance")
	}
}
