package newrelictest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/toolcall"
)

// echo64 is the 64-byte input of the round-trip benchmark.
const echo64 = `{"payload":"01234567890123456789012345678901234567890123456789"}`

// BenchmarkConformance_Echo64 measures a 64-byte echo through the C
// conformance plugin on a warm instance, against a native baseline in the
// same run: the same JSON decoded and encoded again in Go.
func BenchmarkConformance_Echo64(b *testing.B) {
	if len(echo64) != 64 {
		b.Fatalf("input is %d bytes", len(echo64))
	}
	b.Run("native-go", func(b *testing.B) {
		for b.Loop() {
			var v any
			if err := json.Unmarshal([]byte(echo64), &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("c-wasm", func(b *testing.B) {
		p := loadPlugin(b, buildConformance(b), hostOptions{})
		ctx := context.Background()
		call := toolcall.Call{Tool: "conf_c_echo", UserID: userID, Input: []byte(echo64)}
		for b.Loop() {
			if _, err := p.Call(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(p.Stats().MemoryPages)*64, "KiB-instance-memory")
	})
}

// BenchmarkConformance_CompileAndLoad measures compiling the module without
// a cache and reading its manifest on a first instance: what loading a
// plugin costs.
func BenchmarkConformance_CompileAndLoad(b *testing.B) {
	for _, tc := range []struct {
		name string
		wasm func(testing.TB) []byte
	}{
		{"conf-c", buildConformance},
		{"newrelic", readNewRelicWasm},
	} {
		b.Run(tc.name, func(b *testing.B) {
			wasm := tc.wasm(b)
			ctx := context.Background()
			b.ReportMetric(float64(len(wasm))/1024, "KiB-module")
			for b.Loop() {
				host, err := runtime.NewHost(ctx, runtime.Config{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := host.Load(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				host.Close(ctx)
			}
		})
	}
}

// BenchmarkConformance_Instantiate measures a call that needs a new
// instance: every iteration is a new user, and instances are pooled per
// user, so each call instantiates the module, runs _initialize and then the
// tool. The memory metric is one instance's linear memory.
func BenchmarkConformance_Instantiate(b *testing.B) {
	for _, tc := range []struct {
		name, tool, input string
		wasm              func(testing.TB) []byte
	}{
		{"conf-c", "conf_c_echo", echo64, buildConformance},
		{"newrelic", "newrelic_get_entity", `{"guid":"!"}`, readNewRelicWasm}, // fails in the plugin, before any HTTP
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := loadPlugin(b, tc.wasm(b), hostOptions{})
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				_, err := p.Call(ctx, toolcall.Call{Tool: tc.tool, UserID: "user-" + strconv.Itoa(i), Input: []byte(tc.input)})
				if err != nil && tc.name == "conf-c" {
					b.Fatal(err)
				}
			}
			if _, err := p.Call(ctx, toolcall.Call{Tool: tc.tool, UserID: "solo", Input: []byte(tc.input)}); err != nil && tc.name == "conf-c" {
				b.Fatal(err)
			}
			s := p.Stats()
			if s.InstancesIdle > 0 {
				b.ReportMetric(float64(s.MemoryPages)*64/float64(s.InstancesIdle), "KiB-per-instance")
			}
		})
	}
}

// BenchmarkPlugin_NRQL measures a full newrelic_run_nrql call on a warm
// instance: the GraphQL request through the host's egress to the fake on
// loopback, and the response parsed and written back.
func BenchmarkPlugin_NRQL(b *testing.B) {
	f := newNRFixture(b)
	query := "SELECT count(*) FROM Transaction"
	f.fake.SetNRQLResult(accountID, query, []map[string]any{{"count": 1}})
	ctx := context.Background()
	call := toolcall.Call{Tool: "newrelic_run_nrql", UserID: userID, Input: []byte(`{"account_id":1234567,"query":"` + query + `"}`)}
	for b.Loop() {
		if _, err := f.plugin.Call(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
	f.fake.ClearRequests()
	b.ReportMetric(float64(f.plugin.Stats().MemoryPages)*64, "KiB-instance-memory")
}
