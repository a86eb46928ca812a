package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseContentResult(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		content bool
		blocks  int
		err     string
	}{
		{"plain object", `{"a":1}`, false, 0, ""},
		{"plain array", `[{"$content":[]}]`, false, 0, ""},
		{"key in a value", `{"note":"$content"}`, false, 0, ""},
		{"empty", `{"$content":[]}`, true, 0, ""},
		{"every kind", `{"$content":[{"type":"text","text":""},{"type":"image","data":"AQ==","mimeType":"image/png"},
			{"type":"audio","data":"AQ==","mimeType":"audio/wav"},{"type":"resource","resource":{"uri":"a://b","blob":"AQ=="}},
			{"type":"resource_link","uri":"a://b","name":"b"}],"$structured":{"x":1}}`, true, 5, ""},
		{"extra key", `{"$content":[],"other":1}`, true, 0, `not "other"`},
		{"not a list", `{"$content":{}}`, true, 0, "list of content blocks"},
		{"unknown type", `{"$content":[{"type":"video"}]}`, true, 0, `$content[0]: unknown content type "video"`},
		{"text without text", `{"$content":[{"type":"text"}]}`, true, 0, "needs text"},
		{"image without mimeType", `{"$content":[{"type":"image","data":"AQ=="}]}`, true, 0, "needs data (base64) and mimeType"},
		{"bad base64", `{"$content":[{"type":"audio","data":"!!","mimeType":"audio/wav"}]}`, true, 0, "not a content block"},
		{"resource without body", `{"$content":[{"type":"resource","resource":{"uri":"a://b"}}]}`, true, 0, "text or blob"},
		{"resource text and blob", `{"$content":[{"type":"resource","resource":{"uri":"a://b","text":"x","blob":"AQ=="}}]}`, true, 0, "exclusive"},
		{"link without name", `{"$content":[{"type":"resource_link","uri":"a://b"}]}`, true, 0, "uri and name"},
		{"structured not an object", `{"$content":[],"$structured":[1]}`, true, 0, "$structured must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ok, terr := parseContentResult(json.RawMessage(tt.out))
			if ok != tt.content {
				t.Fatalf("content result = %v, want %v", ok, tt.content)
			}
			switch {
			case tt.err == "" && terr != nil:
				t.Fatalf("error %v", terr.Message)
			case tt.err != "" && (terr == nil || terr.Reason != "BAD_OUTPUT" || !strings.Contains(terr.Message, tt.err)):
				t.Fatalf("error %+v, want BAD_OUTPUT with %q", terr, tt.err)
			case tt.err == "" && ok && len(res.blocks) != tt.blocks:
				t.Fatalf("%d blocks, want %d", len(res.blocks), tt.blocks)
			}
		})
	}
}

func TestPluginTemplate_variables(t *testing.T) {
	re, vars := compileTemplate("test://template/{id}/data.{fmt}")
	tmpl := pluginTemplate{match: re, vars: vars}
	tests := []struct {
		uri  string
		want map[string]string
	}{
		{"test://template/123/data.json", map[string]string{"id": "123", "fmt": "json"}},
		{"test://template/a%2Fb/data.x", map[string]string{"id": "a/b", "fmt": "x"}},
		{"test://template/1/2/data.json", nil},
		{"test://template//data.json", nil},
		{"test://template/1/dataxjson", nil},
		{"test://template/%zz/data.json", nil},
	}
	for _, tt := range tests {
		got, ok := tmpl.variables(tt.uri)
		if ok != (tt.want != nil) || len(got) != len(tt.want) || got["id"] != tt.want["id"] || got["fmt"] != tt.want["fmt"] {
			t.Errorf("%s: got %v %v, want %v", tt.uri, got, ok, tt.want)
		}
	}
}
