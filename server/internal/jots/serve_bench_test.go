package jots_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// BenchmarkServe_4KiB measures requests per second for one 4 KiB file
// through the jots handler (Fiber over fasthttp, store-backed with the
// production recheck interval) against Go's http.FileServer serving the
// same bytes from an fstest.MapFS, both over real loopback HTTP with a
// keep-alive client, interleaved request by request in the same run. It
// reports both rates and jots/fileserver (the goal is at least 0.9). The
// second case rereads the jot's row on every request (Recheck < 0), the
// cost of seeing other replicas' changes at once.
func BenchmarkServe_4KiB(b *testing.B) {
	for _, bc := range []struct {
		name    string
		recheck time.Duration
	}{{"recheck=1s", 0}, {"recheck=every-request", -1}} {
		b.Run(bc.name, func(b *testing.B) { benchServe(b, bc.recheck) })
	}
}

func benchServe(b *testing.B, recheck time.Duration) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	st := openStore(b)
	ctx := context.Background()
	u, err := st.CreateUser(ctx, store.NewUser{Email: "bench@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	svc, base := serve(b, st, func(o *jots.Options) { o.Recheck = recheck })
	out, err := svc.Call(ctx, callDeploy(u.ID))
	if err != nil {
		b.Fatal(err)
	}
	upload := between(string(out), `"uploadUrl":"`, `"`)
	data, err := tarballBuild("file.txt", string(body))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(mustRequest(b, http.MethodPut, upload, bytes.NewReader(data)))
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("upload: %v %v", resp, err)
	}
	resp.Body.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	fsrv := &http.Server{Handler: http.FileServer(http.FS(fstest.MapFS{"file.txt": {Data: body, ModTime: time.Now()}})), ReadHeaderTimeout: 10 * time.Second}
	go fsrv.Serve(ln)
	b.Cleanup(func() { fsrv.Close() })

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	jotURL, fsURL := base+"/j/bench/file.txt", "http://"+ln.Addr().String()+"/file.txt"
	buf := make([]byte, 8<<10)
	fetch := func(url string) time.Duration {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.ReadFull(resp.Body, buf)
		resp.Body.Close()
		if resp.StatusCode != 200 || n != len(body) {
			b.Fatalf("GET %s: %d, %d bytes", url, resp.StatusCode, n)
		}
		return time.Since(start)
	}
	fetch(jotURL)
	fetch(fsURL)
	var jotTime, fsTime time.Duration
	b.ResetTimer()
	for range b.N {
		jotTime += fetch(jotURL)
		fsTime += fetch(fsURL)
	}
	b.StopTimer()
	jotRate, fsRate := float64(b.N)/jotTime.Seconds(), float64(b.N)/fsTime.Seconds()
	b.ReportMetric(jotRate, "jots-req/s")
	b.ReportMetric(fsRate, "fileserver-req/s")
	b.ReportMetric(jotRate/fsRate, "jots/fileserver")
}

func callDeploy(userID string) runtimeCall {
	return runtimeCall{Tool: jots.ToolDeploy, UserID: userID, Input: []byte(`{"name":"bench","access":"public"}`)}
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(after, to)
	return v
}

func mustRequest(b testing.TB, method, url string, body io.Reader) *http.Request {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		b.Fatal(err)
	}
	return req
}
