package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/workbench-dev/workbench/runtime/credential"
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
	b.Run("wasm-small", func(b *testing.B) {
		p := loadHostile(b, Config{})
		ctx := context.Background()
		call := Call{Tool: "fixture_echo", UserID: "u1", Input: payload64}
		for b.Loop() {
			if _, err := p.Call(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIsolation compares the two ways of keeping users apart: a warm
// per-user pool (what the runtime does) and a fresh instance per call.
func BenchmarkIsolation(b *testing.B) {
	ctx := context.Background()
	p := loadHostile(b, Config{})
	b.Run("per-user-pool", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := p.Call(ctx, Call{Tool: "fixture_echo", UserID: fmt.Sprint("u", i%4), Input: payload64}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh-instance", func(b *testing.B) {
		st := &callState{plugin: p, tool: p.tools["fixture_echo"]}
		cctx := context.WithValue(ctx, callStateKey{}, st)
		for b.Loop() {
			in, err := instantiate(ctx, p.rt, p.compiled, p.logger, "u1")
			if err != nil {
				b.Fatal(err)
			}
			if _, terr := runExport(cctx, in, st, "fixture_echo", payload64); terr != nil {
				b.Fatal(terr)
			}
			in.close(ctx)
		}
	})
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
		call := Call{Tool: "fixture_http", UserID: "u1", Input: []byte(request("GET", url, nil))}
		for b.Loop() {
			if _, err := p.Call(context.Background(), call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstantiate measures creating one instance of the small fixture
// and the memory an idle instance holds.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	p := loadHostile(b, Config{})
	var keep []*instance
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		in, err := instantiate(ctx, p.rt, p.compiled, p.logger, "u1")
		if err != nil {
			b.Fatal(err)
		}
		keep = append(keep, in)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "heap-B/instance")
	for _, in := range keep {
		in.close(ctx)
	}
}
