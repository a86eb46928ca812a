package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/workbench-dev/workbench/internal/wattest"
)

// wat compiles testdata/<name>.wat with the manifest JSON placed where the
// file says {{MANIFEST}} and its length at {{MANIFEST_LEN}}.
func wat(t testing.TB, name, manifest string) []byte {
	t.Helper()
	return wattest.CompileFile(t, filepath.Join("testdata", name+".wat"), map[string]string{
		"MANIFEST":     wattest.Escape(manifest),
		"MANIFEST_LEN": strconv.Itoa(len(manifest)),
	})
}

// hostileTools are the exports of testdata/hostile.wat, with per-tool limits.
var hostileTools = []struct {
	slug   string
	limits map[string]int
}{
	{"fixture_echo", nil},
	{"fixture_fail", nil},
	{"fixture_loop", map[string]int{"timeoutMs": 300, "concurrency": 1}},
	{"fixture_trap", nil},
	{"fixture_grow", nil},
	{"fixture_oom", nil},
	{"fixture_big", map[string]int{"outputBytes": 1024}},
	{"fixture_bad_json", nil},
	{"fixture_bad_status", nil},
	{"fixture_no_output", nil},
	{"fixture_leak", nil},
	{"fixture_http", nil},
	{"fixture_http_head", nil},
	{"fixture_config", nil},
	{"fixture_progress", nil},
	{"fixture_log", nil},
	{"fixture_sandbox", nil},
	{"fixture_exit", nil},
	{"fixture_bad_output_set", nil},
	{"fixture_bad_result_read", nil},
	{"fixture_bad_log", nil},
	{"fixture_bad_config_get", nil},
	{"fixture_bad_progress", nil},
	{"fixture_bad_http_head", nil},
	{"fixture_bad_http_body", nil},
	{"fixture_len_overflow", nil},
	{"fixture_elicit", nil},
	{"fixture_sample", nil},
	{"fixture_input", nil},
	{"fixture_input_twice", nil},
}

// fixtureManifest is the manifest of testdata/hostile.wat: an apikey
// integration whose key goes in X-Api-Key, reaching the given hosts.
func fixtureManifest(hosts ...string) string {
	var tools []map[string]any
	for _, tt := range hostileTools {
		tool := map[string]any{"slug": tt.slug, "description": "hostile fixture tool " + tt.slug, "inputSchema": map[string]any{"type": "object"}}
		if tt.limits != nil {
			tool["limits"] = tt.limits
		}
		tools = append(tools, tool)
	}
	m := map[string]any{
		"abi": 1, "name": "fixture", "version": "1.0.0", "description": "Hand-written hostile fixture for runtime tests.",
		"hosts": hosts,
		"auth": map[string]any{"mode": "apikey", "apikey": map[string]any{
			"fields": []map[string]any{
				{"name": "site", "label": "Site"},
				{"name": "api_key", "label": "API key", "secret": true, "required": true},
			},
			"placement": map[string]any{"in": "header", "name": "X-Api-Key", "value": "{api_key}"},
		}},
		"settings": []map[string]any{{"name": "region", "enum": []string{"US", "EU"}, "default": "US"}},
		"limits":   map[string]any{"memoryPages": 64},
		"tools":    tools,
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// newTestHost returns a host closed at the end of the test.
func newTestHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	ctx := context.Background()
	if cfg.CacheDir == "" {
		cfg.CacheDir = t.TempDir()
	}
	if cfg.Extism == nil {
		cfg.Extism = testExtism
	}
	h, err := NewHost(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

// loadHostile loads testdata/hostile.wat, allowed to reach hosts, into a new host.
func loadHostile(t testing.TB, cfg Config, hosts ...string) *Plugin {
	t.Helper()
	p, err := newTestHost(t, cfg).Load(context.Background(), wat(t, "hostile", fixtureManifest(hosts...)))
	if err != nil {
		t.Fatalf("load hostile fixture: %v", err)
	}
	return p
}
