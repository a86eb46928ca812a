package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// upstreamTool returns a tool function that GETs url and returns the JSON
// body, the work a plugin's HTTP tool does.
func upstreamTool(client *http.Client, url string) func(ctx context.Context) (json.RawMessage, error) {
	return func(ctx context.Context) (json.RawMessage, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("upstream: %d %v", resp.StatusCode, err)
		}
		return body, nil
	}
}

// fakeUpstream answers GET /echo with a small JSON body after delay.
func fakeUpstream(tb testing.TB, delay time.Duration) string {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/echo" {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":"hello"}`)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/echo"
}

// workbenchWithUpstream serves one tool, bench_fetch, that calls the fake
// upstream, through the Workbench endpoint.
func workbenchWithUpstream(tb testing.TB, upstream, era string) *sdk.ClientSession {
	tb.Helper()
	fetch := upstreamTool(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, upstream)
	in := registry.Native(mcptest.Manifest("bench", manifest.ModeNone, mcptest.Tool("bench_fetch", "Fetch", "Fetches the upstream.", "")),
		mcptest.NewFuncs(map[string]mcptest.ToolFunc{
			"bench_fetch": func(ctx context.Context, _ toolcall.Call) (json.RawMessage, error) { return fetch(ctx) },
		}))
	e := start(tb, mcp.Options{Catalog: mcptest.NewSource(in)})
	return connect(tb, e.url, aliceToken, era, nil)
}

// goSDKWithUpstream serves the same tool from a bare go-sdk server over
// net/http with default options (stateless for the 2026-07-28 era): the
// baseline.
func goSDKWithUpstream(tb testing.TB, upstream, era string) *sdk.ClientSession {
	tb.Helper()
	fetch := upstreamTool(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, upstream)
	srv := sdk.NewServer(&sdk.Implementation{Name: "baseline", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "fetch", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			body, err := fetch(ctx)
			if err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	opts := &sdk.StreamableHTTPOptions{Stateless: era == newEra}
	hs := &http.Server{Handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	tb.Cleanup(func() { hs.Close() })
	return connect(tb, "http://"+ln.Addr().String()+"/mcp", aliceToken, era, nil)
}

// executions returns an execute_tools argument running bench_fetch n times.
func executions(n int) map[string]any {
	list := make([]map[string]any, n)
	for i := range list {
		list[i] = map[string]any{"tool": "bench_fetch", "arguments": map[string]any{}}
	}
	return map[string]any{"executions": list}
}

// callOK calls a tool and fails unless it succeeded.
func callOK(tb testing.TB, cs *sdk.ClientSession, name string, args any) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError {
		tb.Fatalf("%s failed: %+v", name, res.Content[0])
	}
}

// BenchmarkExecuteTools_RoundTrip measures one execute_tools call of one
// tool that calls a fake upstream, over loopback, against the same tool on
// a bare go-sdk server in the same run, in each protocol era. The goal is at
// most 1.3x. In the 2025-11-25 era Workbench keeps every SSE event for
// resumability (an event store), which the bare server does not.
func BenchmarkExecuteTools_RoundTrip(b *testing.B) {
	upstream := fakeUpstream(b, 0)
	p50 := func(cs *sdk.ClientSession, name string, args any) time.Duration {
		const n = 400
		samples := make([]time.Duration, n)
		for i := range samples {
			start := time.Now()
			callOK(b, cs, name, args)
			samples[i] = time.Since(start)
		}
		slices.Sort(samples)
		return samples[n/2]
	}
	for _, era := range []string{legacyEra, newEra} {
		b.Run(era, func(b *testing.B) {
			wb := workbenchWithUpstream(b, upstream, era)
			base := goSDKWithUpstream(b, upstream, era)
			for range 50 { // warm connections and caches
				callOK(b, wb, "execute_tools", executions(1))
				callOK(b, base, "fetch", map[string]any{})
			}
			for b.Loop() {
				callOK(b, wb, "execute_tools", executions(1))
			}
			b.StopTimer()
			// Interleave the two so that load on the machine hits both alike.
			var wbP50, baseP50 time.Duration
			for range 3 {
				wbP50 += p50(wb, "execute_tools", executions(1))
				baseP50 += p50(base, "fetch", map[string]any{})
			}
			b.ReportMetric(float64(wbP50.Microseconds())/3, "workbench-p50-µs")
			b.ReportMetric(float64(baseP50.Microseconds())/3, "go-sdk-p50-µs")
			b.ReportMetric(float64(wbP50)/float64(baseP50), "ratio")
		})
	}
}

// BenchmarkExecuteTools_Concurrent measures the wall time of one
// execute_tools call of 50 executions whose upstream waits 50 ms each. The
// goal is under 80 ms.
func BenchmarkExecuteTools_Concurrent(b *testing.B) {
	wb := workbenchWithUpstream(b, fakeUpstream(b, 50*time.Millisecond), newEra)
	args := executions(50)
	callOK(b, wb, "execute_tools", args) // open the upstream connections
	var walls []time.Duration
	for b.Loop() {
		start := time.Now()
		callOK(b, wb, "execute_tools", args)
		walls = append(walls, time.Since(start))
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Milliseconds()), "wall-p50-ms")
}
