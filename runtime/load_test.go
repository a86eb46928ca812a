package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHost_Load_rejects(t *testing.T) {
	withTool := func(edit func(m map[string]any)) string {
		var m map[string]any
		json.Unmarshal([]byte(fixtureManifest("api.test")), &m)
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	small := Limits{MemoryPages: 4}
	tests := []struct {
		name string
		cfg  Config
		wasm func(t *testing.T) []byte
		want []string
	}{
		{"bad imports and exports", Config{}, func(t *testing.T) []byte { return wat(t, "badimports", "") }, []string{
			`env.system from unknown module "env"`,
			"unknown function workbench_v1.fs_read",
			"workbench_v1.output_set with type (i64) -> (), ABI v1 has (i32, i32) -> ()",
			`does not export "wb_alloc"`,
			`exports "manifest" with type (i32) -> (i32)`,
		}},
		{"invalid manifest names the field", Config{}, func(t *testing.T) []byte {
			return wat(t, "hostile", withTool(func(m map[string]any) { m["version"] = "one" }))
		}, []string{"version:", "semantic version"}},
		{"tool without export", Config{}, func(t *testing.T) []byte {
			return wat(t, "hostile", withTool(func(m map[string]any) {
				m["tools"] = append(m["tools"].([]any), map[string]any{"slug": "fixture_ghost", "description": "no export", "inputSchema": map[string]any{"type": "object"}})
			}))
		}, []string{fmt.Sprintf("tools[%d].export", len(hostileTools)), `no export "fixture_ghost"`}},
		{"tool export reserved", Config{}, func(t *testing.T) []byte {
			return wat(t, "hostile", withTool(func(m map[string]any) {
				m["tools"] = append(m["tools"].([]any), map[string]any{"slug": "fixture_alloc", "export": "manifest", "description": "wrong type", "inputSchema": map[string]any{"type": "object"}})
			}))
		}, []string{fmt.Sprintf("tools[%d].export", len(hostileTools)), "reserved"}},
		{"initial memory over the page cap", Config{Defaults: limitsWith(DefaultLimits, small), Ceiling: limitsWith(CeilingLimits, small)}, func(t *testing.T) []byte {
			return wat(t, "hostile", fixtureManifest())
		}, []string{"compile", "memory"}},
		{"imports used while reading the manifest", Config{}, func(t *testing.T) []byte { return wat(t, "manifest_http", "") },
			[]string{"http_request is not available while the host reads the manifest"}},
		{"not wasm", Config{}, func(t *testing.T) []byte { return []byte("\x00asm garbage") }, []string{"compile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHost(t, tt.cfg)
			_, err := h.Load(context.Background(), tt.wasm(t))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if r := h.Inspect(context.Background(), tt.wasm(t)); len(r.Problems) == 0 {
				t.Errorf("Inspect found no problem")
			}
		})
	}
}

func limitsWith(base, over Limits) Limits {
	base.MemoryPages = over.MemoryPages
	return base
}

func TestHost_Inspect(t *testing.T) {
	h := newTestHost(t, Config{})
	r := h.Inspect(context.Background(), wat(t, "hostile", fixtureManifest("api.test")))
	if len(r.Problems) != 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if r.Manifest == nil || len(r.Manifest.Tools) != len(hostileTools) || r.Memory == nil || r.Memory.Min != 8 || r.Limits.MemoryPages != 64 {
		t.Fatalf("report: %+v", r)
	}
	var sawHTTP, sawAlloc bool
	for _, f := range r.Imports {
		sawHTTP = sawHTTP || (f.Module == ImportModule && f.Name == "http_request" && strings.Join(f.Results, ",") == "i64")
	}
	for _, f := range r.Exports {
		sawAlloc = sawAlloc || f.Name == "wb_alloc"
	}
	if !sawHTTP || !sawAlloc {
		t.Fatalf("imports %v exports %v", r.Imports, r.Exports)
	}
}

// TestHost_Load_manifestCache: a module's manifest is read once and then
// served from the cache directory; a damaged cache entry is read again.
func TestHost_Load_manifestCache(t *testing.T) {
	dir := t.TempDir()
	wasm := wat(t, "hostile", fixtureManifest("api.test"))
	load := func() *Plugin {
		p, err := newTestHost(t, Config{CacheDir: dir}).Load(context.Background(), wasm)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	load()
	entries, err := filepath.Glob(filepath.Join(dir, "manifests", "*.json"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("manifest cache entries: %v %v", entries, err)
	}
	var m map[string]any
	b, _ := os.ReadFile(entries[0])
	json.Unmarshal(b, &m)
	m["description"] = "served from the cache"
	b, _ = json.Marshal(m)
	os.WriteFile(entries[0], b, 0o600)
	if got := load().Manifest().Description; got != "served from the cache" {
		t.Fatalf("description %q: the cached manifest was not used", got)
	}
	os.WriteFile(entries[0], []byte("{broken"), 0o600)
	if got := load().Manifest().Description; got != "Hand-written hostile fixture for runtime tests." {
		t.Fatalf("description %q after a damaged cache entry", got)
	}
}
