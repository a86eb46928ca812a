package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

// contentManifest is the hostile fixture's manifest without the tool
// fixture_echo, whose export serves a resource and a prompt instead (or
// resourceExport, when given).
func contentManifest(t *testing.T, resourceExport string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(fixtureManifest()), &m); err != nil {
		t.Fatal(err)
	}
	m["tools"] = m["tools"].([]any)[1:] // drop fixture_echo
	m["resources"] = []map[string]any{{"uri": "fx://note", "name": "note", "export": resourceExport}}
	m["prompts"] = []map[string]any{{"name": "fixture_greet", "export": "fixture_echo"}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlugin_Call_export runs resource and prompt exports through
// Call.Export and checks that a declared export must exist.
func TestPlugin_Call_export(t *testing.T) {
	ctx := context.Background()
	h := newTestHost(t, Config{})
	p, err := h.Load(ctx, wat(t, "hostile", contentManifest(t, "fixture_echo")))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Manifest().ContentExports(); len(got) != 1 || got["fixture_echo"] != "resources[0].export" {
		t.Fatalf("content exports %v", got)
	}
	tests := []struct {
		name string
		call toolcall.Call
		out  string
		code failure.Code
	}{
		{"resource export", toolcall.Call{Export: "fixture_echo", UserID: "u1", Input: []byte(`{"uri":"fx://note"}`)}, `{"uri":"fx://note"}`, ""},
		{"export wins over tool", toolcall.Call{Tool: "fixture_fail", Export: "fixture_echo", UserID: "u1", Input: []byte(`{"name":"fixture_greet"}`)}, `{"name":"fixture_greet"}`, ""},
		{"undeclared export", toolcall.Call{Export: "fixture_fail", UserID: "u1"}, "", failure.UnknownTool},
		{"a content export is no tool", toolcall.Call{Tool: "fixture_echo", UserID: "u1"}, "", failure.UnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.Call(ctx, tt.call)
			var te *failure.Error
			switch {
			case tt.code == "" && (err != nil || string(out) != tt.out):
				t.Fatalf("got %s, %v; want %s", out, err, tt.out)
			case tt.code != "" && (!errors.As(err, &te) || te.Code != tt.code):
				t.Fatalf("got %s, %v; want %s", out, err, tt.code)
			}
		})
	}

	_, err = h.Load(ctx, wat(t, "hostile", contentManifest(t, "read_resource")))
	var fe *manifest.FieldError
	if !errors.As(err, &fe) || fe.Field != "resources[0].export" || !strings.Contains(err.Error(), `no export "read_resource"`) {
		t.Fatalf("load with a missing resource export: %v", err)
	}
}
