package mcptest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/workbench-dev/workbench/internal/wattest"
)

//go:embed testdata/fixture.wat.tmpl
var fixtureSource string

var fixtureTemplate = template.Must(template.New("fixture").Parse(fixtureSource))

// FixtureManifest is the manifest of the fixture plugin for integration
// name (auth none). Its tools, prefixed with the name: _echo (returns its
// {"message": string} input), _fail (NOT_FOUND), _progress (reports 1/3
// and 3/3), _spin (loops; 300 ms deadline), _hang (loops; 60 s deadline)
// and _fetch (sends its input as an http_request to hosts it may not reach).
func FixtureManifest(name string) []byte {
	p := strings.ReplaceAll(name, "-", "_")
	type tool struct {
		Slug         string          `json:"slug"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  map[string]bool `json:"annotations,omitempty"`
		Limits       map[string]int  `json:"limits,omitempty"`
	}
	object := json.RawMessage(`{"type":"object"}`)
	m := map[string]any{
		"abi": 1, "name": name, "version": "1.2.3", "title": "Fixture " + name,
		"description": "Fixture integration " + name + " for the MCP tests.",
		"categories":  []string{"testing"},
		"hosts":       []string{"api.fixture.example"},
		"auth":        map[string]string{"mode": "none"},
		"tools": []tool{
			{Slug: p + "_echo", Title: "Echo a message", Description: "Returns its input unchanged.",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"],"additionalProperties":false}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
				Annotations:  map[string]bool{"readOnly": true, "idempotent": true}},
			{Slug: p + "_fail", Title: "Always fail", Description: "Fails with NOT_FOUND.", InputSchema: object},
			{Slug: p + "_progress", Title: "Report progress", Description: "Reports progress twice, then returns.", InputSchema: object},
			{Slug: p + "_spin", Title: "Spin", Description: "Never returns; its 300 ms deadline ends it.", InputSchema: object,
				Limits: map[string]int{"timeoutMs": 300}},
			{Slug: p + "_hang", Title: "Hang", Description: "Never returns; only cancellation or its 60 s deadline ends it.", InputSchema: object,
				Limits: map[string]int{"timeoutMs": 60000}},
			{Slug: p + "_fetch", Title: "Fetch a URL", Description: "Sends an HTTP request through the host's egress policy.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
				Annotations: map[string]bool{"openWorld": true}},
		},
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// FixturePlugin compiles the fixture plugin for integration name to
// dir/<name>/<name>.wasm, the layout of built-in plugins, and returns the
// path. It needs wat2wasm (`make test` installs it).
func FixturePlugin(t testing.TB, dir, name string) string {
	t.Helper()
	manifest := FixtureManifest(name)
	var src bytes.Buffer
	err := fixtureTemplate.Execute(&src, struct {
		Manifest    string
		ManifestLen int
		Prefix      string
	}{wattest.Escape(string(manifest)), len(manifest), strings.ReplaceAll(name, "-", "_")})
	if err != nil {
		t.Fatal(err)
	}
	return wattest.CompileTo(t, src.Bytes(), filepath.Join(dir, name, name+".wasm"))
}
