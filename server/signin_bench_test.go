package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BenchmarkSignInFlood sends 32 concurrent wrong-password sign-ins, each
// from its own address (the server trusts loopback as a proxy and reads
// X-Forwarded-For) and for its own email, so that no rate limit applies and
// only the bound on password hashing stands between the flood and the
// host's memory. It reports the process's peak RSS during the flood
// (peak-MiB) and the refused share (busy-%). The baseline in the same run
// allows 32 hashes at once, as the server did before the bound.
func BenchmarkSignInFlood(b *testing.B) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		b.Skip("peak RSS needs Linux's /proc/self/clear_refs")
	}
	for _, concurrency := range []int{goruntime.NumCPU(), 32} {
		name := fmt.Sprintf("bound=%d", concurrency)
		if concurrency == 32 {
			name = "baseline_unbounded"
		}
		b.Run(name, func(b *testing.B) {
			base := startFloodServer(b, concurrency)
			var peak, busy, total int
			for b.Loop() {
				goruntime.GC()
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak RSS: %v", err)
				}
				statuses := flood(b, base, 32)
				peak = max(peak, peakRSSMiB(b))
				busy += statuses[http.StatusServiceUnavailable]
				total += 32
			}
			b.ReportMetric(float64(peak), "peak-MiB")
			b.ReportMetric(100*float64(busy)/float64(total), "busy-%")
		})
	}
}

func startFloodServer(b *testing.B, concurrency int) string {
	cfg, err := ConfigFromEnv(func(k string) string {
		return map[string]string{"TRUSTED_PROXIES": "127.0.0.1", "PASSWORD_HASH_CONCURRENCY": strconv.Itoa(concurrency)}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg.ListenAddr, cfg.DataDir, cfg.BuiltinPluginsDir = "127.0.0.1:0", b.TempDir(), b.TempDir()
	cfg.Announce = io.Discard
	s, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-s.Ready()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return "http://" + s.Addr()
}

// flood posts n wrong-password sign-ins at once and counts their statuses.
func flood(b *testing.B, base string, n int) map[int]int {
	type signIn struct {
		client *http.Client
		token  string
	}
	forms := make([]signIn, n)
	for i := range forms {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(base + "/login")
		if err != nil {
			b.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := csrfInput.FindSubmatch(page)
		if m == nil {
			b.Fatalf("no CSRF token on the sign-in page: %s", page)
		}
		forms[i] = signIn{client: client, token: string(m[1])}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for i, f := range forms {
		wg.Go(func() {
			form := url.Values{"csrf": {f.token}, "email": {fmt.Sprintf("nobody%d@example.com", i)}, "password": {"guess"}}
			req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
			resp, err := f.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusUnauthorized]+statuses[http.StatusServiceUnavailable] != n {
		b.Fatalf("statuses %v: want only 401 and 503", statuses)
	}
	return statuses
}

// peakRSSMiB reads the process's peak resident set (VmHWM) since the last
// reset through clear_refs.
func peakRSSMiB(b *testing.B) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
