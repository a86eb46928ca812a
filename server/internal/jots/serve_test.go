package jots_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server/internal/jots"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball/tarballtest"
	"github.com/workbench-dev/workbench/server/internal/store"
	"github.com/workbench-dev/workbench/server/internal/store/storetest"
)

var site = []entry{
	{Name: "index.html", Body: "<!doctype html><h1>home</h1>"},
	{Name: "app.js", Body: "console.log(1)"},
	{Name: "style.css", Body: "body{}"},
	{Name: "data/points.json", Body: `{"points":[1,2,3]}`},
	{Name: "docs/index.html", Body: "<h1>docs</h1>"},
	{Name: "big.bin", Body: strings.Repeat("0123456789", 1000)},
	{Name: "notes", Body: "plain words"},
	{Name: "sp ace.txt", Body: "spaced"},
}

func TestService_serve(t *testing.T) {
	f := newFixture(t, nil)
	f.publish("site", nil, site...)
	tests := []struct {
		name    string
		method  string
		path    string
		headers []string
		status  int
		ctype   string
		body    string
		header  map[string]string
	}{
		{"index by default", "GET", "/j/site/", nil, 200, "text/html; charset=utf-8", site[0].Body, map[string]string{"Cache-Control": "no-cache", "Accept-Ranges": "bytes"}},
		{"redirect to the slash", "GET", "/j/site?x=1", nil, 301, "", "", map[string]string{"Location": "/j/site/?x=1"}},
		{"javascript", "GET", "/j/site/app.js", nil, 200, "text/javascript; charset=utf-8", site[1].Body, nil},
		{"css", "GET", "/j/site/style.css", nil, 200, "text/css; charset=utf-8", site[2].Body, nil},
		{"json", "GET", "/j/site/data/points.json", nil, 200, "application/json", site[3].Body, map[string]string{"Access-Control-Allow-Origin": ""}},
		{"directory index", "GET", "/j/site/docs/", nil, 200, "text/html; charset=utf-8", site[4].Body, nil},
		{"directory without slash", "GET", "/j/site/docs", nil, 301, "", "", map[string]string{"Location": "/j/site/docs/"}},
		{"sniffed type", "GET", "/j/site/notes", nil, 200, "text/plain; charset=utf-8", "plain words", nil},
		{"escaped path", "GET", "/j/site/sp%20ace.txt", nil, 200, "text/plain; charset=utf-8", "spaced", nil},
		{"missing file", "GET", "/j/site/nope.html", nil, 404, "text/plain; charset=utf-8", "", nil},
		{"missing jot", "GET", "/j/ghost/", nil, 404, "text/plain; charset=utf-8", "", nil},
		{"bad name", "GET", "/j/Bad_Name/", nil, 404, "text/plain; charset=utf-8", "", nil},
		{"encoded traversal", "GET", "/j/site/%2e%2e/%2e%2e/api", nil, 404, "text/plain; charset=utf-8", "", nil},
		{"encoded slash traversal", "GET", "/j/site/..%2f..%2fapi", nil, 404, "text/plain; charset=utf-8", "", nil},
		{"head", "HEAD", "/j/site/app.js", nil, 200, "text/javascript; charset=utf-8", "", map[string]string{"Content-Length": "14"}},
		{"method not allowed", "DELETE", "/j/site/app.js", nil, 405, "text/plain; charset=utf-8", "", map[string]string{"Allow": "GET, HEAD, OPTIONS, POST"}},
		{"post on a public jot", "POST", "/j/site/", nil, 405, "text/plain; charset=utf-8", "", nil},
		{"range", "GET", "/j/site/big.bin", []string{"Range", "bytes=10-19"}, 206, "application/octet-stream", "0123456789", map[string]string{"Content-Range": "bytes 10-19/10000"}},
		{"suffix range", "GET", "/j/site/big.bin", []string{"Range", "bytes=-5"}, 206, "application/octet-stream", "56789", map[string]string{"Content-Range": "bytes 9995-9999/10000"}},
		{"open range", "GET", "/j/site/big.bin", []string{"Range", "bytes=9998-"}, 206, "application/octet-stream", "89", nil},
		{"unsatisfiable range", "GET", "/j/site/big.bin", []string{"Range", "bytes=20000-"}, 416, "text/plain; charset=utf-8", "", map[string]string{"Content-Range": "bytes */10000"}},
		{"several ranges: whole file", "GET", "/j/site/big.bin", []string{"Range", "bytes=0-1,5-6"}, 200, "application/octet-stream", site[5].Body, nil},
		{"if-range stale: whole file", "GET", "/j/site/big.bin", []string{"Range", "bytes=0-1", "If-Range", `"old"`}, 200, "application/octet-stream", site[5].Body, nil},
		{"if-range fresh", "GET", "/j/site/big.bin", []string{"Range", "bytes=0-1", "If-Range", `"` + sha(site[5].Body) + `"`}, 206, "application/octet-stream", "01", nil},
		{"if-none-match", "GET", "/j/site/app.js", []string{"If-None-Match", `"x", W/"` + sha(site[1].Body) + `"`}, 304, "", "", map[string]string{"ETag": `"` + sha(site[1].Body) + `"`}},
		{"if-none-match other", "GET", "/j/site/app.js", []string{"If-None-Match", `"other"`}, 200, "text/javascript; charset=utf-8", site[1].Body, nil},
		{"if-modified-since future", "GET", "/j/site/app.js", []string{"If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, 304, "", "", nil},
		{"if-modified-since past", "GET", "/j/site/app.js", []string{"If-Modified-Since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}, 200, "text/javascript; charset=utf-8", site[1].Body, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.get(tt.method, tt.path, tt.headers...)
			wantSandbox(t, tt.name, r)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.ctype != "" && r.header.Get("Content-Type") != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", r.header.Get("Content-Type"), tt.ctype)
			}
			if tt.body != "" && r.body != tt.body {
				t.Errorf("body = %.80q, want %.80q", r.body, tt.body)
			}
			if tt.method == "HEAD" && r.body != "" {
				t.Errorf("HEAD has a body: %q", r.body)
			}
			for k, v := range tt.header {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if tt.status == 200 && r.header.Get("ETag") == "" {
				t.Error("no ETag")
			}
		})
	}
}

func TestService_cors(t *testing.T) {
	f := newFixture(t, nil)
	f.publish("open", map[string]any{"cors": true}, site...)
	r := f.get("GET", "/j/open/data/points.json", "Origin", "null")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("CORS jot: %d %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	r = f.get("OPTIONS", "/j/open/data/points.json", "Origin", "null", "Access-Control-Request-Method", "GET")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Methods") != "GET, HEAD" {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	wantSandbox(t, "preflight", r)
}

// TestService_upload checks that every hostile or failed upload is refused
// with a JSON reason and leaves the previous version live.
func TestService_upload(t *testing.T) {
	f := newFixture(t, nil)
	f.publish("site", nil, entry{Name: "index.html", Body: "v1"})
	up := f.deploy("site", nil)
	bomb := func(header bool) func() io.Reader {
		return func() io.Reader { r, _ := tarballtest.Bomb(1<<30, header); return r }
	}
	raw := func(entries ...entry) func() io.Reader {
		data := f.build(entries...)
		return func() io.Reader { return bytes.NewReader(data) }
	}
	good := f.build(entry{Name: "index.html", Body: strings.Repeat("v2 ", 2000)})
	tests := []struct {
		name    string
		body    func() io.Reader
		status  int
		code    string
		mention string
	}{
		{"traversal", raw(entry{Name: "../../etc/passwd", Body: "x"}), 400, "BAD_TARBALL", "'..'"},
		{"absolute path", raw(entry{Name: "/etc/passwd", Body: "x"}), 400, "BAD_TARBALL", "absolute"},
		{"symlink", raw(entry{Name: "index.html", Typeflag: tar.TypeSymlink, Link: "/etc/passwd"}), 400, "BAD_TARBALL", "symbolic link"},
		{"hard link", raw(entry{Name: "a", Body: "x"}, entry{Name: "index.html", Typeflag: tar.TypeLink, Link: "a"}), 400, "BAD_TARBALL", "hard link"},
		{"device file", raw(entry{Name: "dev", Typeflag: tar.TypeChar}), 400, "BAD_TARBALL", "character device"},
		{"fifo", raw(entry{Name: "fifo", Typeflag: tar.TypeFifo}), 400, "BAD_TARBALL", "FIFO"},
		{"case duplicate", raw(entry{Name: "index.html", Body: "a"}, entry{Name: "INDEX.html", Body: "b"}), 400, "BAD_TARBALL", "case"},
		{"1001 files", raw(tarballtest.Files(1001)...), 413, "TOO_LARGE", "JOTS_MAX_FILES"},
		{"1 GiB gzip bomb in one file", bomb(true), 413, "TOO_LARGE", "JOTS_MAX_BYTES"},
		{"1 GiB gzip bomb of padding", bomb(false), 413, "TOO_LARGE", "JOTS_MAX_BYTES"},
		{"truncated stream", func() io.Reader { return bytes.NewReader(good[:len(good)/2]) }, 400, "BAD_TARBALL", "truncated"},
		{"not gzip", func() io.Reader { return strings.NewReader("hello") }, 400, "BAD_TARBALL", "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.put(up, tt.body())
			e, _ := body["error"].(map[string]any)
			if status != tt.status || e == nil || e["code"] != tt.code || !strings.Contains(e["message"].(string), tt.mention) {
				t.Fatalf("PUT = %d %v; want %d %s mentioning %q", status, body, tt.status, tt.code, tt.mention)
			}
			if r := f.get("GET", "/j/site/"); r.status != 200 || r.body != "v1" {
				t.Fatalf("after a failed upload the jot serves %d %q, want v1", r.status, r.body)
			}
		})
	}
	// The URL survived the failures; a good upload publishes and uses it up.
	status, body := f.put(up, bytes.NewReader(good))
	if status != 200 || body["version"] != float64(2) {
		t.Fatalf("good upload after failures: %d %v", status, body)
	}
	if r := f.get("GET", "/j/site/"); !strings.HasPrefix(r.body, "v2") {
		t.Fatalf("after the upload: %q", r.body)
	}
	status, body = f.put(f.base+jots.UploadPrefix+"not-a-token", bytes.NewReader(good))
	if status != 404 || body["error"].(map[string]any)["code"] != "UPLOAD_NOT_FOUND" {
		t.Fatalf("unknown token: %d %v", status, body)
	}
	// A body declared over the cap is refused from its headers: the answer
	// comes after the first 64 KiB (fasthttp waits for some body before it
	// calls the handler), long before the rest is sent.
	target, _ := url.Parse(f.deploy("site", nil))
	conn, err := net.Dial("tcp", target.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", target.Path, target.Host, f.svc.MaxUploadBytes()+1)
	conn.Write(make([]byte, 64<<10))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("oversized body: %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(msg), "JOTS_MAX_BYTES") {
		t.Fatalf("oversized body: %d %s", resp.StatusCode, msg)
	}
	// A streamed (chunked) body over the cap is cut off at the cap: the
	// answer comes while the client is still sending.
	target, _ = url.Parse(f.deploy("site", nil))
	conn2, err := net.Dial("tcp", target.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	conn2.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn2, "PUT %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n", target.Path, target.Host)
	sent := make(chan struct{})
	go func() { // the client keeps sending until the server stops reading
		defer close(sent)
		chunk := fmt.Appendf(nil, "%x\r\n%s\r\n", 32<<10, make([]byte, 32<<10))
		conn2.Write(fmt.Appendf(nil, "a\r\n%s\r\n", good[:10]))
		for range (f.svc.MaxUploadBytes() + 4<<20) / (32 << 10) {
			if _, err := conn2.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err = http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil {
		t.Fatalf("chunked oversized body: %v", err)
	}
	msg, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(msg), "JOTS_MAX_BYTES") {
		t.Fatalf("chunked oversized body: %d %s", resp.StatusCode, msg)
	}
	conn2.Close()
	<-sent
}

func TestService_uploadExpired(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	f := newFixture(t, func(o *jots.Options) { o.Limits.UploadTTL = time.Minute; o.Now = clock.Now }, store.WithClock(clock.Now))
	up := f.deploy("late", nil)
	clock.Advance(2 * time.Minute)
	status, body := f.put(up, bytes.NewReader(f.build(entry{Name: "index.html", Body: "x"})))
	if status != 410 || !strings.Contains(body["error"].(map[string]any)["message"].(string), "JOTS_UPLOAD_TTL_SECONDS") {
		t.Fatalf("expired upload: %d %v", status, body)
	}
}

// TestService_limits overrides the limits: they are enforced and named.
func TestService_limits(t *testing.T) {
	f := newFixture(t, func(o *jots.Options) { o.Limits = jots.Limits{MaxBytes: 100, MaxFiles: 2} })
	status, body := f.put(f.deploy("tiny", nil), bytes.NewReader(f.build(tarballtest.Files(3)...)))
	if status != 413 || !strings.Contains(fmt.Sprint(body), "more than 2 files (JOTS_MAX_FILES)") {
		t.Fatalf("3 files with a limit of 2: %d %v", status, body)
	}
	status, body = f.put(f.deploy("tiny", nil), bytes.NewReader(f.build(entry{Name: "a", Body: strings.Repeat("x", 101)})))
	if status != 413 || !strings.Contains(fmt.Sprint(body), "over 100 bytes (JOTS_MAX_BYTES)") {
		t.Fatalf("101 bytes with a limit of 100: %d %v", status, body)
	}
}

// TestService_password walks the gate: form, wrong password, rate limit,
// right password, cookie scope, and a password change logging viewers out.
func TestService_password(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	f := newFixture(t, func(o *jots.Options) { o.Now = clock.Now }, store.WithClock(clock.Now))
	f.publish("vault", map[string]any{"access": "password", "password": "s3cret"}, site...)
	form := f.get("GET", "/j/vault/data/points.json")
	wantSandbox(t, "form", form)
	if form.status != 401 || !strings.Contains(form.body, `<form method="post">`) || strings.Contains(form.body, "points") ||
		form.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("gate: %d %v %s", form.status, form.header, form.body)
	}
	post := func(password string, headers ...string) response {
		t.Helper()
		req, _ := http.NewRequest("POST", f.base+"/j/vault/data/points.json", strings.NewReader(url.Values{"password": {password}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		r := response{status: resp.StatusCode, header: resp.Header, body: string(data)}
		wantSandbox(t, "POST", r)
		return r
	}
	for i := range 5 {
		if r := post("wrong"); r.status != 401 || !strings.Contains(r.body, "Wrong password") {
			t.Fatalf("wrong attempt %d: %d %s", i, r.status, r.body)
		}
	}
	r := post("s3cret") // even the right one waits now
	if r.status != 429 || r.header.Get("Retry-After") != "12" || !strings.Contains(r.body, `"RATE_LIMITED"`) {
		t.Fatalf("sixth attempt: %d %v %s", r.status, r.header, r.body)
	}
	if r := post("s3cret", "Accept", "text/html"); r.status != 429 || !strings.Contains(r.body, "Too many wrong passwords") || !strings.Contains(r.body, "<form") {
		t.Fatalf("sixth attempt, HTML: %d %s", r.status, r.body)
	}
	clock.Advance(13 * time.Second)
	r = post("s3cret")
	cookie := r.header.Get("Set-Cookie")
	for _, attr := range []string{"jot_vault=", "Path=/j/vault/", "HttpOnly", "Secure", "SameSite=None", "Max-Age=43200"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, attr)
		}
	}
	value := strings.SplitN(strings.SplitN(cookie, ";", 2)[0], "=", 2)[1]
	unlocked := "/j/vault/~" + value + "/data/points.json"
	if r.status != 303 || r.header.Get("Location") != unlocked {
		t.Fatalf("right password: %d %v %s", r.status, r.header, r.body)
	}
	// The cookie sends top-level navigations to the unlocked address; the
	// token in the path is what lets the page's own requests through.
	if r := f.get("GET", "/j/vault/data/points.json?x=1", "Cookie", "jot_vault="+value); r.status != 302 || r.header.Get("Location") != unlocked+"?x=1" {
		t.Fatalf("with the cookie: %d %v", r.status, r.header)
	}
	ok := f.get("GET", unlocked)
	wantSandbox(t, "unlocked", ok)
	if ok.status != 200 || ok.body != site[3].Body || ok.header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("unlocked address: %d %v %s", ok.status, ok.header, ok.body)
	}
	if r := f.get("GET", "/j/vault/~"+value+"/docs"); r.status != 301 || r.header.Get("Location") != "/j/vault/~"+value+"/docs/" {
		t.Fatalf("directory under the unlocked address: %d %v", r.status, r.header)
	}
	forged := value[:len(value)-2] + "AA"
	exp, mac, _ := strings.Cut(value, ".")
	for what, v := range map[string]string{"forged": forged, "later expiry": "9" + exp + "." + mac, "empty": "", "garbage": "x.y"} {
		if r := f.get("GET", "/j/vault/", "Cookie", "jot_vault="+v); r.status != 401 {
			t.Fatalf("%s cookie: %d", what, r.status)
		}
		if r := f.get("GET", "/j/vault/~"+v+"/index.html"); r.status != 401 {
			t.Fatalf("%s token: %d", what, r.status)
		}
	}
	// Changing the password rotates the key: the cookie stops working.
	f.mustCall(f.alice, jots.ToolUpdate, map[string]any{"name": "vault", "password": "new one"})
	if r := f.get("GET", "/j/vault/", "Cookie", "jot_vault="+value); r.status != 401 {
		t.Fatalf("cookie after a password change: %d", r.status)
	}
	if r := f.get("GET", unlocked); r.status != 401 {
		t.Fatalf("token after a password change: %d", r.status)
	}
	// Cookies expire.
	f.mustCall(f.alice, jots.ToolUpdate, map[string]any{"name": "vault", "files": []any{map[string]any{"path": "x.txt", "content": "x"}}})
	r = post("new one")
	value = strings.SplitN(strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0], "=", 2)[1]
	if r := f.get("GET", "/j/vault/~"+value+"/x.txt"); r.status != 200 || r.body != "x" {
		t.Fatalf("fresh token: %d %q", r.status, r.body)
	}
	clock.Advance(13 * time.Hour)
	if r := f.get("GET", "/j/vault/~"+value+"/x.txt"); r.status != 401 {
		t.Fatalf("expired token: %d", r.status)
	}
}

// TestService_passwordBurst sends a burst of concurrent wrong guesses at a
// fresh jot: each guess is counted before it is checked, so only
// GuessPolicy.Free guesses are checked at all and the rest are refused,
// whatever the timing; then even the right password waits.
func TestService_passwordBurst(t *testing.T) {
	f := newFixture(t, nil)
	f.publish("burst", map[string]any{"access": "password", "password": "s3cret"}, site...)
	const n = 12
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		guess := fmt.Sprintf("guess-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", f.base+"/j/burst/", strings.NewReader(url.Values{"password": {guess}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[401] != jots.GuessPolicy.Free || counts[429] != n-jots.GuessPolicy.Free {
		t.Fatalf("statuses %v: want %d checked (401), the rest 429", counts, jots.GuessPolicy.Free)
	}
	req, _ := http.NewRequest("POST", f.base+"/j/burst/", strings.NewReader(url.Values{"password": {"s3cret"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Fatalf("right password after the burst: %d, want 429", resp.StatusCode)
	}
}

// TestService_replicas runs two services over one store, like two
// replicas: a change through one shows on the other within Recheck, and
// at once on the replica that made it.
func TestService_replicas(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	alice, err := st.CreateUser(ctx, storeNewUser("alice@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	one, base1 := serve(t, st, func(o *jots.Options) { o.Recheck = time.Hour })
	_, base2 := serve(t, st, func(o *jots.Options) { o.Recheck = 100 * time.Millisecond })
	f := &fixture{t: t, st: st, svc: one, base: base1, alice: alice, uploadClient: http.DefaultClient}
	f.publish("shared", nil, entry{Name: "index.html", Body: "v1"})
	other := &fixture{t: t, base: base2}
	if r := other.get("GET", "/j/shared/"); r.body != "v1" {
		t.Fatalf("replica 2 before: %q", r.body)
	}
	if r := f.get("GET", "/j/shared/"); r.body != "v1" { // cached on replica 1 for an hour
		t.Fatalf("replica 1 before: %q", r.body)
	}
	f.mustCall(alice, jots.ToolUpdate, map[string]any{"name": "shared", "files": []any{map[string]any{"path": "index.html", "content": "v2"}}})
	if r := f.get("GET", "/j/shared/"); r.body != "v2" {
		t.Fatalf("replica 1 served stale content after its own update: %q", r.body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for other.get("GET", "/j/shared/").body != "v2" {
		if time.Now().After(deadline) {
			t.Fatal("replica 2 never saw the update")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.mustCall(alice, jots.ToolDelete, map[string]any{"name": "shared"})
	if r := f.get("GET", "/j/shared/"); r.status != 404 {
		t.Fatalf("replica 1 after delete: %d", r.status)
	}
	for other.get("GET", "/j/shared/").status != 404 {
		if time.Now().After(deadline) {
			t.Fatal("replica 2 kept serving a deleted jot")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
