package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/server/servertest"
	"github.com/workbench-dev/workbench/toolcall"
)

// newApp serves the metrics of a registry holding the plugin "alpha" (and a
// broken file) beside one API route, with METRICS_TOKEN "s3cret".
func newApp(t *testing.T) (*fiber.App, *registry.Registry) {
	t.Helper()
	ctx := context.Background()
	host, err := runtime.NewHost(ctx, runtime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close(ctx) })
	dir := t.TempDir()
	alpha, broken := filepath.Join(dir, "alpha.wasm"), filepath.Join(dir, "broken.wasm")
	if err := os.WriteFile(alpha, servertest.EchoModule(t, "alpha", "1.2.0", "alpha_echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	snap, err := reg.Load(ctx, host, []registry.Source{{Path: alpha}, {Path: broken}})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Swap(snap); err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(nil)})
	m := New(Options{Catalog: reg, Token: "s3cret"})
	app.Use(m.Middleware())
	m.Mount(app)
	app.Get("/api/things/:id", func(c *fiber.Ctx) error {
		if c.Params("id") == "missing" {
			return &httpapi.Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "no such thing"}
		}
		return c.JSON(map[string]string{"id": c.Params("id")})
	})
	return app, reg
}

func request(t *testing.T, app *fiber.App, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, app *fiber.App) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := request(t, app, Route, "s3cret")
	if status != http.StatusOK {
		t.Fatalf("scrape: %d %s", status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return families
}

// value returns the value of the series of family with exactly the given
// labels (name=value pairs), and whether it exists.
func value(families map[string]*dto.MetricFamily, family string, labels ...string) (float64, bool) {
	f, ok := families[family]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)/2
		for i := 0; match && i < len(labels); i += 2 {
			match = got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetrics_Mount(t *testing.T) {
	app, _ := newApp(t)
	tests := []struct {
		name       string
		token      string
		wantStatus int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "guess", http.StatusUnauthorized},
		{"token", "s3cret", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := request(t, app, Route, tt.token)
			if status != tt.wantStatus {
				t.Fatalf("%d %s, want %d", status, body, tt.wantStatus)
			}
			if status == http.StatusUnauthorized {
				var e struct{ Error struct{ Code string } }
				if json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "UNAUTHENTICATED" || strings.Contains(body, "workbench_") {
					t.Errorf("refusal body %s", body)
				}
			}
		})
	}
}

// TestMetrics_series scrapes, makes calls and requests, scrapes again and
// checks that the expected series moved and that no URL became a label.
func TestMetrics_series(t *testing.T) {
	app, reg := newApp(t)
	before := scrape(t, app)
	if v, ok := value(before, "workbench_module_info", "integration", "alpha", "version", "1.2.0", "abi", "workbench_v1"); !ok || v != 1 {
		t.Fatalf("module info = %v, %v", v, ok)
	}
	if v, _ := value(before, "workbench_modules_failed"); v != 1 {
		t.Errorf("modules failed = %v, want 1", v)
	}

	snap, release := reg.Acquire()
	tool, _ := snap.Tool("alpha_echo")
	for _, input := range []string{`{}`, `{"x":1}`, `{"fail":true}`} {
		_, _ = tool.Integration.Caller.Call(context.Background(), toolcall.Call{Tool: "alpha_echo", UserID: "u1", Input: []byte(input)})
	}
	release()
	for _, path := range []string{"/api/things/42", "/api/things/43", "/api/things/missing", "/no/such/place"} {
		request(t, app, path, "")
	}
	after := scrape(t, app)

	tests := []struct {
		family string
		labels []string
		before float64
		after  float64
	}{
		{"workbench_plugin_calls_total", []string{"integration", "alpha", "tool", "alpha_echo"}, 0, 3},
		{"workbench_plugin_errors_total", []string{"integration", "alpha", "tool", "alpha_echo", "code", "FLAKY"}, -1, 1},
		{"workbench_plugin_call_duration_seconds", []string{"integration", "alpha", "tool", "alpha_echo"}, 0, 3},
		{"workbench_plugin_instances", []string{"integration", "alpha", "state", "idle"}, 0, 1},
		{"workbench_http_requests_total", []string{"route", "/api/things/:id", "method", "GET", "status", "2xx"}, -1, 2},
		{"workbench_http_requests_total", []string{"route", "/api/things/:id", "method", "GET", "status", "4xx"}, -1, 1},
		{"workbench_http_requests_total", []string{"route", "unmatched", "method", "GET", "status", "4xx"}, -1, 1},
		{"workbench_http_requests_total", []string{"route", Route, "method", "GET", "status", "2xx"}, -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.family+strings.Join(tt.labels, ","), func(t *testing.T) {
			got, ok := value(before, tt.family, tt.labels...)
			if !ok {
				got = -1 // absent
			}
			if got != tt.before {
				t.Errorf("before: %v, want %v", got, tt.before)
			}
			if got, _ := value(after, tt.family, tt.labels...); got != tt.after {
				t.Errorf("after: %v, want %v", got, tt.after)
			}
		})
	}
	if v, ok := value(after, "workbench_plugin_memory_bytes", "integration", "alpha"); !ok || v < 64<<10 {
		t.Errorf("memory bytes = %v, %v", v, ok)
	}
	// No label value is a request path.
	for _, f := range after {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "42") || strings.Contains(l.GetValue(), "missing") || strings.Contains(l.GetValue(), "no/such") {
					t.Errorf("%s has the label %s=%q", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}
