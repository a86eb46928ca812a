package soak

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults of the campaign; make soak sets SOAK_DURATION=10m SOAK_RPS=500.
const (
	defaultDuration = 5 * time.Second
	defaultRPS      = 50
	users           = 4
	workers         = 64
)

func TestSoak(t *testing.T) {
	duration := envDuration(t, "SOAK_DURATION", defaultDuration)
	rps := envInt(t, "SOAK_RPS", defaultRPS)
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "workbench")
	run(t, root, nil, "go", "build", "-o", bin, "./cmd/workbench")
	plugins := t.TempDir()
	run(t, filepath.Join(root, "plugins-wasm", "conformance"), []string{"GOOS=wasip1", "GOARCH=wasm"},
		"go", "build", "-buildmode=c-shared", "-trimpath", "-o", filepath.Join(plugins, "test", "test.wasm"), ".")

	srv := startServer(t, bin, plugins)
	var tokens []string
	for i := range users {
		out := run(t, root, srv.env, bin, "user", "add", "--email", fmt.Sprintf("soak%d@example.com", i))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		tokens = append(tokens, strings.TrimSpace(lines[len(lines)-1]))
	}

	mix := requestMix(srv.base)
	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		latencies  []time.Duration
		unexpected []string
		failed     int
	)
	jobs := make(chan func(*http.Client) error, workers)
	for range workers {
		wg.Go(func() {
			jar, _ := cookiejar.New(nil)
			client := &http.Client{Timeout: 30 * time.Second, Jar: jar,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for job := range jobs {
				start := time.Now()
				err := job(client)
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				if err != nil {
					failed++
					if len(unexpected) < 20 {
						unexpected = append(unexpected, err.Error())
					}
				}
				mu.Unlock()
			}
		})
	}
	var rss []int
	warmup := duration / 5
	tick := time.NewTicker(time.Second / time.Duration(rps))
	begin := time.Now()
	lastSample := begin
	for time.Since(begin) < duration {
		<-tick.C
		token := tokens[rand.IntN(len(tokens))]
		jobs <- mix.pick(token) // blocks when every worker is busy: the rate is an upper bound
		if now := time.Now(); now.Sub(begin) > warmup && now.Sub(lastSample) >= time.Second {
			rss = append(rss, srv.rssKiB(t))
			lastSample = now
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()

	total := len(latencies)
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	t.Logf("%d requests in %v (%d/s asked), %d unexpected; p50 %v, p99 %v; RSS after warm-up %v KiB",
		total, duration, rps, failed, p50.Round(time.Microsecond), p99.Round(time.Microsecond), rss)
	if failed > 0 {
		t.Fatalf("%d unexpected outcomes, the first ones:\n%s", failed, strings.Join(unexpected, "\n"))
	}
	// Memory must be flat after warm-up; the short campaign is too short
	// to judge.
	if duration >= time.Minute && len(rss) >= 2 {
		first, last := rss[0], rss[len(rss)-1]
		if float64(last) > 1.1*float64(first) {
			t.Fatalf("RSS grew from %d KiB to %d KiB after warm-up (over 10%%)", first, last)
		}
	}
}

// mix is the weighted traffic of one user.
type mix struct {
	base    string
	entries []mixEntry
	total   int
}

type mixEntry struct {
	weight int
	job    func(base, token string, c *http.Client) error
}

func requestMix(base string) *mix {
	m := &mix{base: base, entries: []mixEntry{
		{20, toolCall("search_tools", `{"query":"text content"}`, `"hits"`)},
		{10, toolCall("get_tool_schema", `{"tool":"test_simple_text"}`, `"inputSchema"`)},
		{25, toolCall("execute_tools", `{"executions":[{"tool":"test_simple_text"}]}`, `"succeeded":1`)},
		{15, toolCall("execute_tools", `{"executions":[{"tool":"jots_list_jots"}]}`, `"succeeded":1`)},
		{10, toolCall("list_integrations", `{}`, `"integrations"`)},
		{9, apiWhoami},
		{10, healthz},
		{1, wrongSignIn},
	}}
	for _, e := range m.entries {
		m.total += e.weight
	}
	return m
}

func (m *mix) pick(token string) func(*http.Client) error {
	n := rand.IntN(m.total)
	for _, e := range m.entries {
		if n < e.weight {
			return func(c *http.Client) error { return e.job(m.base, token, c) }
		}
		n -= e.weight
	}
	panic("unreachable")
}

// toolCall calls a meta-tool in the stateless MCP era and expects a
// result that is not an error and holds want.
func toolCall(tool, args, want string) func(base, token string, c *http.Client) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return func(base, token string, c *http.Client) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
			req.Header.Set(k, v)
		}
		status, text, err := do(c, req)
		if err != nil {
			return err
		}
		if status != http.StatusOK || strings.Contains(text, `"isError":true`) || !strings.Contains(text, want) {
			return fmt.Errorf("%s: %d %.300s", tool, status, text)
		}
		return nil
	}
}

func apiWhoami(base, token string, c *http.Client) error {
	req, _ := http.NewRequest(http.MethodGet, base+"/api/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	status, text, err := do(c, req)
	if err == nil && (status != http.StatusOK || !strings.Contains(text, `"userId"`)) {
		err = fmt.Errorf("/api/whoami: %d %.300s", status, text)
	}
	return err
}

func healthz(base, _ string, c *http.Client) error {
	req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
	status, text, err := do(c, req)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("/healthz: %d %.300s", status, text)
	}
	return err
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// wrongSignIn signs in with a wrong password: refused (401), throttled
// (429) or, with every password check busy, 503; anything else is
// unexpected.
func wrongSignIn(base, _ string, c *http.Client) error {
	req, _ := http.NewRequest(http.MethodGet, base+"/login", nil)
	status, page, err := do(c, req)
	if err != nil {
		return err
	}
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		return fmt.Errorf("GET /login: %d", status)
	}
	form := url.Values{"csrf": {m[1]}, "email": {"soak0@example.com"}, "password": {"not the password"}}
	req, _ = http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, _, err = do(c, req)
	if err == nil && status != http.StatusUnauthorized && status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		err = fmt.Errorf("POST /login: %d", status)
	}
	return err
}

func do(c *http.Client, req *http.Request) (int, string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// server is the workbench process under test.
type server struct {
	cmd  *exec.Cmd
	base string
	env  []string
}

func startServer(t *testing.T, bin, plugins string) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{base: "http://" + addr, env: []string{"DATA_DIR=" + t.TempDir(), "LISTEN_ADDR=" + addr, "BUILTIN_PLUGINS_DIR=" + plugins}}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = append(os.Environ(), s.env...)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, bufio.NewReader(stdout))
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			t.Error("the server did not stop within 30 s of SIGINT")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("server log (last 4 KiB):\n%s", b[max(0, len(b)-4096):])
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the server was not ready within 2 minutes")
	return nil
}

// rssKiB reads the server's resident set.
func (s *server) rssKiB(t *testing.T) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Skipf("RSS needs /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q is not a positive duration", name, v)
	}
	return d
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}
