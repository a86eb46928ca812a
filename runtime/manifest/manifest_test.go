package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const valid = `{
  "abi": 1, "name": "atlassian-jira", "version": "1.2.3-beta.1", "description": "Jira Cloud",
  "categories": ["project-management"], "baseUrl": "https://example.atlassian.net",
  "hosts": ["{site}.atlassian.net", "*.atlassian.net", "api.example.com:8443"],
  "proxy": {"baseUrl": "https://example.atlassian.net"},
  "auth": {"mode": "apikey", "apikey": {
    "fields": [{"name": "site", "label": "Site", "required": true, "pattern": "^[a-z0-9-]+$"},
               {"name": "email", "label": "Email", "required": true},
               {"name": "api_token", "label": "API token", "secret": true, "required": true}],
    "placement": {"in": "basic", "username": "{email}", "password": "{api_token}"}}},
  "settings": [{"name": "region", "enum": ["US", "EU"], "default": "US"}],
  "limits": {"timeoutMs": 5000, "memoryPages": 128},
  "tools": [{"slug": "atlassian_jira_search", "description": "Search with JQL",
             "inputSchema": {"type": "object", "properties": {"jql": {"type": "string"}}, "required": ["jql"]},
             "annotations": {"readOnly": true}, "limits": {"timeoutMs": 9000}}],
  "resources": [{"uri": "jira://fields", "name": "fields", "mimeType": "application/json"}],
  "resourceTemplates": [{"uriTemplate": "jira://issue/{key}", "name": "issue", "completions": {"key": ["PROJ-1"]}}],
  "prompts": [{"name": "atlassian_jira_triage", "arguments": [{"name": "project", "required": true, "completions": ["PROJ"]}], "export": "render_prompt"}]
}`

func TestParse_valid(t *testing.T) {
	m, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "atlassian-jira" || m.Auth.APIKey.Placement.Username != "{email}" || m.Tools[0].ExportName() != "atlassian_jira_search" {
		t.Fatalf("parsed %+v", m)
	}
	if m.DisplayTitle() != "atlassian-jira" || EnvPrefix(m.Name) != "ATLASSIAN_JIRA" {
		t.Fatalf("title %q prefix %q", m.DisplayTitle(), EnvPrefix(m.Name))
	}
	if m.Tool("atlassian_jira_search") == nil || m.Tool("nope") != nil {
		t.Fatal("Tool lookup")
	}
	if m.Resources[0].ExportName() != DefaultResourceExport || m.ResourceTemplates[0].ExportName() != DefaultResourceExport || m.Prompts[0].ExportName() != "render_prompt" {
		t.Fatalf("content exports %q %q %q", m.Resources[0].ExportName(), m.ResourceTemplates[0].ExportName(), m.Prompts[0].ExportName())
	}
	if got := m.ContentExports(); len(got) != 2 || got["read_resource"] != "resources[0].export" || got["render_prompt"] != "prompts[0].export" {
		t.Fatalf("ContentExports = %v", got)
	}
}

// TestParse_invalid changes one field of a valid manifest at a time and checks
// that the error names that field.
func TestParse_invalid(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		field string
		msg   string
	}{
		{"abi", func(m map[string]any) { m["abi"] = 2 }, "abi", "must be 1"},
		{"name upper", func(m map[string]any) { m["name"] = "Jira" }, "name", "lowercase"},
		{"name reserved", func(m map[string]any) { m["name"] = "jots" }, "name", "reserved"},
		{"version", func(m map[string]any) { m["version"] = "1.2" }, "version", "semantic"},
		{"description", func(m map[string]any) { m["description"] = " " }, "description", "required"},
		{"unknown field", func(m map[string]any) { m["hostz"] = []string{} }, "manifest", "unknown field"},
		{"logo http", func(m map[string]any) { m["logo"] = "http://x/y.png" }, "logo", "https"},
		{"category", func(m map[string]any) { m["categories"] = []string{"Dev Tools"} }, "categories[0]", "lowercase"},
		{"baseUrl http", func(m map[string]any) { m["baseUrl"] = "http://example.com" }, "baseUrl", "https"},
		{"host star", func(m map[string]any) { m["hosts"] = []string{"*"} }, "hosts[0]", "not a host"},
		{"host wildcard tld", func(m map[string]any) { m["hosts"] = []string{"*.com"} }, "hosts[0]", "two labels"},
		{"host inner star", func(m map[string]any) { m["hosts"] = []string{"a.*.com"} }, "hosts[0]", "optionally *.domain"},
		{"host ip", func(m map[string]any) { m["hosts"] = []string{"10.0.0.1"} }, "hosts[0]", "IP literals"},
		{"host path", func(m map[string]any) { m["hosts"] = []string{"example.com/x"} }, "hosts[0]", "host name"},
		{"mode", func(m map[string]any) { auth(m)["mode"] = "magic" }, "auth.mode", "one of"},
		{"mode mismatch", func(m map[string]any) { auth(m)["mode"] = "oauth2" }, "auth.", "auth.mode"},
		{"placement in", func(m map[string]any) { placement(m)["in"] = "body" }, "auth.apikey.placement.in", "header, query or basic"},
		{"placement undeclared", func(m map[string]any) { placement(m)["password"] = "{token}" }, "auth.apikey.placement.password", "not a declared field"},
		{"placement braces", func(m map[string]any) { placement(m)["username"] = "{email" }, "auth.apikey.placement.username", "unbalanced"},
		{"field pattern", func(m map[string]any) { fields(m)[0].(map[string]any)["pattern"] = "([" }, "auth.apikey.fields[0].pattern", "regular expression"},
		{"field twice", func(m map[string]any) { fields(m)[1].(map[string]any)["name"] = "site" }, "auth.apikey.fields[1].name", "twice"},
		{"setting reserved", func(m map[string]any) { setting(m)["name"] = "base_url" }, "settings[0].name", "reserved"},
		{"setting default", func(m map[string]any) { setting(m)["default"] = "APAC" }, "settings[0].default", "enum"},
		{"negative limit", func(m map[string]any) { m["limits"] = map[string]any{"timeoutMs": -1} }, "limits", "negative"},
		{"no tools", func(m map[string]any) { m["tools"] = []any{} }, "tools", "at least one"},
		{"slug prefix", func(m map[string]any) { tool(m)["slug"] = "jira_search" }, "tools[0].slug", `start with "atlassian_jira_"`},
		{"slug chars", func(m map[string]any) { tool(m)["slug"] = "atlassian_jira_Search" }, "tools[0].slug", "must match"},
		{"schema type", func(m map[string]any) { tool(m)["inputSchema"] = map[string]any{"type": "string"} }, "tools[0].inputSchema", `"object"`},
		{"schema missing", func(m map[string]any) { delete(tool(m), "inputSchema") }, "tools[0].inputSchema", "required"},
		{"schema invalid", func(m map[string]any) {
			tool(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"pattern": "(["}}}
		}, "tools[0].inputSchema", "valid JSON Schema"},
		{"annotations", func(m map[string]any) {
			tool(m)["annotations"] = map[string]any{"readOnly": true, "destructive": true}
		}, "tools[0].annotations", "both"},
		{"export reserved", func(m map[string]any) { tool(m)["export"] = "wb_alloc" }, "tools[0].export", "reserved"},
		{"tool memory", func(m map[string]any) { tool(m)["limits"] = map[string]any{"memoryPages": 10} }, "tools[0].limits.memoryPages", "whole plugin"},
		{"duplicate slug", func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), clone(tool(m)))
		}, "tools[1].slug", "twice"},
		{"duplicate export", func(m map[string]any) {
			second := clone(tool(m))
			second["slug"], second["export"] = "atlassian_jira_other", "atlassian_jira_search"
			m["tools"] = append(m["tools"].([]any), second)
		}, "tools[1].export", "already the export"},
		{"resource uri relative", func(m map[string]any) { resource(m)["uri"] = "fields" }, "resources[0].uri", "absolute URI"},
		{"resource uri reserved", func(m map[string]any) { resource(m)["uri"] = "workbench://tool/x" }, "resources[0].uri", "reserved"},
		{"resource twice", func(m map[string]any) {
			m["resources"] = append(m["resources"].([]any), clone(resource(m)))
		}, "resources[1].uri", "twice"},
		{"resource name", func(m map[string]any) { resource(m)["name"] = "" }, "resources[0].name", "required"},
		{"resource mime", func(m map[string]any) { resource(m)["mimeType"] = "json" }, "resources[0].mimeType", "type/subtype"},
		{"resource export tool", func(m map[string]any) { resource(m)["export"] = "atlassian_jira_search" }, "resources[0].export", "export of tool"},
		{"resource export reserved", func(m map[string]any) { resource(m)["export"] = "_initialize" }, "resources[0].export", "reserved"},
		{"template no var", func(m map[string]any) { template(m)["uriTemplate"] = "jira://issues" }, "resourceTemplates[0].uriTemplate", "no {variable}"},
		{"template operator", func(m map[string]any) { template(m)["uriTemplate"] = "jira://issue/{+key}" }, "resourceTemplates[0].uriTemplate", "simple variable"},
		{"template braces", func(m map[string]any) { template(m)["uriTemplate"] = "jira://issue/{key" }, "resourceTemplates[0].uriTemplate", "unbalanced"},
		{"template completion var", func(m map[string]any) {
			template(m)["completions"] = map[string]any{"id": []string{"1"}}
		}, "resourceTemplates[0].completions", "not a variable"},
		{"prompt chars", func(m map[string]any) { prompt(m)["name"] = "Triage" }, "prompts[0].name", "must match"},
		{"prompt other prefix", func(m map[string]any) { prompt(m)["name"] = "jira_triage" }, "prompts[0].name", `start with "atlassian_jira_"`},
		{"prompt twice", func(m map[string]any) {
			m["prompts"] = append(m["prompts"].([]any), clone(prompt(m)))
		}, "prompts[1].name", "twice"},
		{"prompt argument name", func(m map[string]any) {
			prompt(m)["arguments"] = []any{map[string]any{"name": "a b"}}
		}, "prompts[0].arguments[0].name", "must match"},
		{"prompt argument twice", func(m map[string]any) {
			prompt(m)["arguments"] = []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}
		}, "prompts[0].arguments[1].name", "twice"},
		{"prompt completions", func(m map[string]any) {
			prompt(m)["arguments"] = []any{map[string]any{"name": "a", "completions": make([]string, MaxCompletions+1)}}
		}, "prompts[0].arguments[0].completions", "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(valid), &m); err != nil {
				t.Fatal(err)
			}
			tt.edit(m)
			b, _ := json.Marshal(m)
			_, err := Parse(b)
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("want a FieldError, got %v", err)
			}
			if !strings.HasPrefix(fe.Field, tt.field) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q; want field %q and %q", err, tt.field, tt.msg)
			}
		})
	}
}

func TestParse_tooLarge(t *testing.T) {
	_, err := Parse(make([]byte, MaxManifestBytes+1))
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte(`{"abi":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err == nil && m.Validate() != nil {
			t.Fatal("Parse accepted a manifest Validate rejects")
		}
	})
}

func auth(m map[string]any) map[string]any { return m["auth"].(map[string]any) }
func placement(m map[string]any) map[string]any {
	return auth(m)["apikey"].(map[string]any)["placement"].(map[string]any)
}
func fields(m map[string]any) []any           { return auth(m)["apikey"].(map[string]any)["fields"].([]any) }
func setting(m map[string]any) map[string]any { return m["settings"].([]any)[0].(map[string]any) }
func tool(m map[string]any) map[string]any    { return m["tools"].([]any)[0].(map[string]any) }

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}
func resource(m map[string]any) map[string]any { return m["resources"].([]any)[0].(map[string]any) }
func template(m map[string]any) map[string]any {
	return m["resourceTemplates"].([]any)[0].(map[string]any)
}
func prompt(m map[string]any) map[string]any { return m["prompts"].([]any)[0].(map[string]any) }
