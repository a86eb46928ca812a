package proxy

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkService_Handle measures the latency the proxy adds: each
// iteration makes one call straight to the fake upstream and one through
// the proxy (token lookup in SQLite, credential injection, egress dial
// rules, audit queue), over kept-alive connections, and reports the p50 of
// both and their difference ("added-p50-µs"; goal: at most 150).
func BenchmarkService_Handle(b *testing.B) {
	f := newFixture(b, Limits{})
	m := f.mint(f.alice.ID, "hub")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	direct, _ := http.NewRequest("GET", f.up.URL+"/hub/user", nil)
	direct.Header.Set("Authorization", "Bearer "+hubToken)
	proxied, _ := http.NewRequest("GET", f.base+"/c/hub/user", nil)
	proxied.Header.Set("Authorization", "Bearer "+m.Token)
	call := func(req *http.Request) time.Duration {
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	for range 50 { // warm both connection pools
		call(direct)
		call(proxied)
	}
	var d, p []time.Duration
	b.ResetTimer()
	for b.Loop() {
		d = append(d, call(direct))
		p = append(p, call(proxied))
	}
	b.StopTimer()
	p50 := func(s []time.Duration) time.Duration { slices.Sort(s); return s[len(s)/2] }
	dp, pp := p50(d), p50(p)
	b.ReportMetric(float64(dp.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pp.Microseconds()), "proxied-p50-µs")
	b.ReportMetric(float64((pp - dp).Microseconds()), "added-p50-µs")
}
