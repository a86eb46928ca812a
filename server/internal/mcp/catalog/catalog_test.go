package catalog_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/catalog"
	"github.com/workbench-dev/workbench/server/internal/mcp/mcptest"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

func integration(name string, slugs ...string) *catalog.Integration {
	var tools []manifest.Tool
	for _, s := range slugs {
		tools = append(tools, mcptest.Tool(s, "", "Tool "+s+".", ""))
	}
	return &catalog.Integration{Manifest: mcptest.Manifest(name, manifest.ModeNone, tools...), Caller: mcptest.NewFuncs(nil)}
}

func TestNewView(t *testing.T) {
	v, err := catalog.NewView([]*catalog.Integration{
		integration("zeta", "zeta_b", "zeta_a"),
		integration("alpha", "alpha_x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names, slugs []string
	for _, in := range v.Integrations() {
		names = append(names, in.Name())
	}
	for _, tool := range v.Tools() {
		slugs = append(slugs, tool.Spec.Slug)
	}
	if !slices.Equal(names, []string{"alpha", "zeta"}) || !slices.Equal(slugs, []string{"alpha_x", "zeta_a", "zeta_b"}) {
		t.Errorf("integrations %v, tools %v: want both sorted", names, slugs)
	}
	if tool, ok := v.Tool("zeta_a"); !ok || tool.Integration.Name() != "zeta" {
		t.Errorf("Tool(zeta_a) = %+v, %v", tool, ok)
	}
	if _, ok := v.Tool("nope"); ok {
		t.Error("Tool(nope) found")
	}
	if in, ok := v.Integration("alpha"); !ok || in.Name() != "alpha" {
		t.Errorf("Integration(alpha) = %v, %v", in, ok)
	}

	tests := []struct {
		name string
		ins  []*catalog.Integration
	}{
		{"duplicate name", []*catalog.Integration{integration("dup", "dup_a"), integration("dup", "dup_b")}},
		{"nil", []*catalog.Integration{nil}},
		{"no caller", []*catalog.Integration{{Manifest: mcptest.Manifest("bare", manifest.ModeNone, mcptest.Tool("bare_a", "", "A.", ""))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := catalog.NewView(tt.ins); err == nil {
				t.Error("NewView accepted it")
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	host, err := runtime.NewHost(ctx, runtime.Config{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close(ctx)
	load := func(names ...string) *registry.Snapshot {
		var sources []registry.Source
		for _, n := range names {
			sources = append(sources, registry.Source{Path: mcptest.FixturePlugin(t, dir, n)})
		}
		snap, err := registry.Load(ctx, host, sources)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	reg := registry.New(nil)
	defer reg.Close()
	src := catalog.FromRegistry(reg)
	if n := len(src.Current().Tools()); n != 0 {
		t.Fatalf("empty registry has %d tools", n)
	}
	if err := reg.Swap(load("alpha")); err != nil {
		t.Fatal(err)
	}
	first := src.Current()
	if first != src.Current() {
		t.Error("the view of one snapshot is not cached")
	}
	if _, ok := first.Tool("alpha_echo"); !ok {
		t.Fatal("alpha_echo missing")
	}

	// A lease keeps the old view callable across a swap; the current view
	// changes at once.
	leased, release := src.Acquire()
	if leased != first {
		t.Error("Acquire returned another view than Current")
	}
	if err := reg.Swap(load("alpha", "beta")); err != nil {
		t.Fatal(err)
	}
	second := src.Current()
	if second == first {
		t.Fatal("the view did not change with the snapshot")
	}
	if _, ok := second.Tool("beta_echo"); !ok {
		t.Error("beta_echo missing after the swap")
	}
	tool, _ := leased.Tool("alpha_echo")
	out, err := tool.Integration.Caller.Call(ctx, toolcall.Call{Tool: "alpha_echo", UserID: "u", Input: []byte(`{"message":"still open"}`)})
	if err != nil || string(out) != `{"message":"still open"}` {
		t.Errorf("call on the leased old view = %s, %v", out, err)
	}
	release()
	if _, err := tool.Integration.Caller.Call(ctx, toolcall.Call{Tool: "alpha_echo", UserID: "u", Input: []byte(`{}`)}); err == nil {
		t.Error("the old plugin still runs after its last lease")
	}
}

func TestRegistry_Natives(t *testing.T) {
	reg := registry.New(nil)
	defer reg.Close()
	native := &catalog.Integration{Manifest: &manifest.Manifest{Name: "jots", Title: "Jots", Version: "1.0.0",
		Auth: manifest.Auth{Mode: manifest.ModeNone}, Tools: []manifest.Tool{{Slug: "jots_list_jots"}}},
		Builtin: true, Caller: mcptest.NewFuncs(nil)}
	v := catalog.FromRegistry(reg, native).Current()
	if in, ok := v.Integration("jots"); !ok || in != native {
		t.Fatalf("Integration(jots) = %v, %v: want the native one", in, ok)
	}
	if _, ok := v.Tool("jots_list_jots"); !ok {
		t.Error("the native tool is missing")
	}
}
