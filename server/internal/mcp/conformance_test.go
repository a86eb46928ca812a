package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/server"
)

// bearerProxy listens on 127.0.0.1 and forwards every request to target
// with a bearer token added, keeping the Host header and streaming
// responses. It plays an authenticated MCP client's HTTP stack for the
// conformance suite, which sends no credentials of its own.
func bearerProxy(t *testing.T, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	ln := listenLoopback(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// checkResult is one check of a conformance scenario.
type checkResult struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// scenarioResult is every check of one scenario.
type scenarioResult struct {
	name   string
	checks []checkResult
}

// passed reports whether no check failed.
func (s scenarioResult) passed() bool {
	return len(s.checks) > 0 && !slices.ContainsFunc(s.checks, func(c checkResult) bool { return c.Status == "FAILURE" })
}

// reason is the first failing check's message.
func (s scenarioResult) reason() string {
	for _, c := range s.checks {
		if c.Status == "FAILURE" {
			msg := c.ErrorMessage
			if len(msg) > 160 {
				msg = msg[:157] + "..."
			}
			return c.ID + ": " + msg
		}
	}
	return "no checks ran"
}

// runConformance runs one conformance suite and returns the results by
// scenario. Setting CONFORMANCE_OUT keeps the suite's result files there.
func runConformance(t *testing.T, node, pkg string, args ...string) map[string]scenarioResult {
	t.Helper()
	out := os.Getenv("CONFORMANCE_OUT")
	if out == "" {
		out = t.TempDir()
	}
	entry := filepath.Join("node_modules", pkg, "dist", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{entry, "server", "-o", out}, args...)...)
	cmd.Dir = conformanceDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The suite exits non-zero when a scenario fails; the checks decide.
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s timed out\n%s", pkg, stderr.String())
	}
	results := map[string]scenarioResult{}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []checkResult
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		name := scenarioName(filepath.Base(filepath.Dir(path)))
		results[name] = scenarioResult{name: name, checks: checks}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatalf("%s produced no results (exit %v)\nstdout: %s\nstderr: %s", pkg, runErr, stdout.String(), stderr.String())
	}
	return results
}

// resultDirSuffix is the timestamp the suite appends to a scenario's
// result directory, such as -2025-12-01T04-07-58.
var resultDirSuffix = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+(\.\d+)?Z?$`)

// scenarioName is the scenario of a result directory, which the suite
// names server-<scenario>-<timestamp>.
func scenarioName(dir string) string {
	return strings.TrimPrefix(resultDirSuffix.ReplaceAllString(dir, ""), "server-")
}

func logResults(t *testing.T, suite string, results map[string]scenarioResult) {
	t.Helper()
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	var pass, fail []string
	for _, n := range names {
		if results[n].passed() {
			pass = append(pass, n)
		} else {
			fail = append(fail, fmt.Sprintf("  %s (%s)", n, results[n].reason()))
		}
	}
	t.Logf("%s: %d passed: %s", suite, len(pass), strings.Join(pass, ", "))
	t.Logf("%s: %d failed:\n%s", suite, len(fail), strings.Join(fail, "\n"))
}

// needsFixtures lists the scenarios that exercise the fixture tools,
// resources and prompts of the conformance plugin (issue 4, item 7: not
// loaded here) or features Workbench does not offer (completion, resource
// subscriptions, the tasks extension). Their failures are expected and
// logged; a failure of any other scenario fails the test.
var needsFixtures = []string{
	"tools-call-", "prompts-get-", "resources-read-", "resources-templates-read", "resources-subscribe", "resources-unsubscribe",
	"completion-complete", "elicitation-", "input-required-result-", "json-schema-2020-12", "tasks-", "http-custom-header-server-validation",
}

func expectedGap(scenario string) bool {
	return slices.ContainsFunc(needsFixtures, func(p string) bool { return strings.HasPrefix(scenario, p) })
}

// TestConformance runs the official MCP conformance suites
// (@modelcontextprotocol/conformance 0.1.16, the active suite for
// 2025-11-25, and 0.2.0-alpha.12, the 2026-07-28 requirements) against the
// real server in direct mode with the fixture plugin, behind a loopback
// proxy that adds the bearer token. The scenarios about the transport,
// lifecycle, discovery, listing, caching, headers, errors and DNS rebinding
// must pass; server-stateless must pass every check that does not need a
// conformance fixture tool; the scenarios in needsFixtures are logged.
func TestConformance(t *testing.T) {
	node := nodeBinary(t)
	rs := startRealServer(t, server.SurfaceDirect)
	base := bearerProxy(t, "http://"+rs.addr, aliceToken)
	suites := []struct {
		name     string
		pkg      string
		args     []string
		mustPass []string
	}{
		{"0.1.16 active", filepath.Join("@modelcontextprotocol", "conformance"),
			[]string{"--url", base + "/mcp", "--spec-version", "2025-11-25"},
			[]string{"server-initialize", "ping", "logging-set-level", "tools-list", "resources-list", "prompts-list",
				"server-sse-multiple-streams", "dns-rebinding-protection"}},
		{"0.2.0 2026-07-28", "conformance-next",
			[]string{"--url", base + "/mcp", "--requirements", "2026-07-28", "--timeout", "10000"},
			[]string{"tools-list", "resources-list", "prompts-list", "caching", "http-header-validation", "sep-2164-resource-not-found",
				"server-sse-multiple-streams", "dns-rebinding-protection", "input-required-result-ignore-extra-params",
				"input-required-result-missing-input-response", "input-required-result-unsupported-methods", "input-required-result-validate-input"}},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			results := runConformance(t, node, s.pkg, s.args...)
			logResults(t, s.name, results)
			for _, name := range s.mustPass {
				r, ok := results[name]
				switch {
				case !ok:
					t.Errorf("scenario %s did not run", name)
				case !r.passed():
					t.Errorf("scenario %s failed: %s", name, r.reason())
				}
			}
			for name, r := range results {
				if r.passed() || expectedGap(name) || slices.Contains(s.mustPass, name) {
					continue
				}
				if name == "server-stateless" {
					for _, c := range r.checks {
						if c.Status == "FAILURE" && !strings.HasPrefix(c.ErrorMessage, "Not testable") {
							t.Errorf("server-stateless check %s failed: %s", c.ID, c.ErrorMessage)
						}
					}
					continue
				}
				t.Errorf("scenario %s failed: %s", name, r.reason())
			}
		})
	}
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
