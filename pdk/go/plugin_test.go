//go:build !wasip1

package pdk

import (
	"encoding/json"
	"strings"
	"testing"
)

// withRegistration runs f with a clean registration and restores it after.
func withRegistration(t *testing.T, f func()) {
	t.Helper()
	registered.mu.Lock()
	saved := registration{done: registered.done, err: registered.err, plugin: registered.plugin, tools: registered.tools}
	registered.done, registered.err, registered.plugin, registered.tools = false, nil, Plugin{}, nil
	registered.mu.Unlock()
	t.Cleanup(func() {
		registered.mu.Lock()
		defer registered.mu.Unlock()
		registered.done, registered.err, registered.plugin, registered.tools = saved.done, saved.err, saved.plugin, saved.tools
	})
	f()
}

type repoInput struct {
	Owner string `json:"owner" jsonschema:"account that owns the repository"`
	Repo  string `json:"repo"`
}

type repoOutput struct {
	FullName string `json:"full_name"`
}

func examplePlugin() Plugin {
	return Plugin{
		Name: "git-hub", Version: "0.1.0", Title: "GitHub", Description: "Repositories.",
		Categories: []string{"developer-tools"}, BaseURL: "https://api.github.com",
		Hosts: []string{"api.github.com"}, ProxyBaseURL: "https://api.github.com",
		Auth: OAuth2(OAuth2Config{
			AuthorizeURL: "https://github.com/login/oauth/authorize",
			TokenURL:     "https://github.com/login/oauth/access_token",
			Scopes:       []string{"repo"}, TokenAuth: "post",
		}),
		Settings: []Setting{{Name: "region", Description: "API region", Enum: []string{"US", "EU"}, Default: "US"}},
		Limits:   Limits{TimeoutMs: 15000},
	}
}

func TestManifestJSON(t *testing.T) {
	getRepo := Tool("git_hub_get_repo", "Returns one repository.", func(Context, repoInput) (repoOutput, error) {
		return repoOutput{}, nil
	}, Title("Get a repository"), ReadOnly(), Idempotent(), OpenWorld(), TimeoutMs(30000))
	listRepos := Tool("git_hub_list_repos", "Lists repositories.", func(Context, struct{}) ([]repoOutput, error) {
		return nil, nil
	}, Destructive(), Export("list_repos_export"), OutputBytes(10), ResponseBytes(20), Concurrency(2))
	withRegistration(t, func() {
		Register(examplePlugin(), getRepo, listRepos)
		status, out := (&TestHost{}).Manifest()
		if status != statusOK {
			t.Fatalf("status = %d, output %s", status, out)
		}
		assertSameJSON(t, out, `{
			"abi": 1, "name": "git-hub", "version": "0.1.0", "title": "GitHub", "description": "Repositories.",
			"categories": ["developer-tools"], "baseUrl": "https://api.github.com", "hosts": ["api.github.com"],
			"proxy": {"baseUrl": "https://api.github.com"},
			"auth": {"mode": "oauth2", "oauth2": {"authorizeUrl": "https://github.com/login/oauth/authorize",
				"tokenUrl": "https://github.com/login/oauth/access_token", "scopes": ["repo"], "tokenAuth": "post"}},
			"settings": [{"name": "region", "description": "API region", "enum": ["US", "EU"], "default": "US"}],
			"limits": {"timeoutMs": 15000},
			"tools": [
				{"slug": "git_hub_get_repo", "title": "Get a repository", "description": "Returns one repository.",
				 "inputSchema": {"type": "object", "required": ["owner", "repo"], "additionalProperties": false,
					"properties": {"owner": {"type": "string", "description": "account that owns the repository"}, "repo": {"type": "string"}}},
				 "outputSchema": {"type": "object", "required": ["full_name"], "additionalProperties": false,
					"properties": {"full_name": {"type": "string"}}},
				 "annotations": {"readOnly": true, "destructive": false, "idempotent": true, "openWorld": true},
				 "export": "git_hub_get_repo", "limits": {"timeoutMs": 30000}},
				{"slug": "git_hub_list_repos", "description": "Lists repositories.",
				 "inputSchema": {"type": "object", "additionalProperties": false},
				 "annotations": {"readOnly": false, "destructive": true, "idempotent": false, "openWorld": false},
				 "export": "list_repos_export", "limits": {"outputBytes": 10, "responseBytes": 20, "concurrency": 2}}
			]}`)
	})
}

func TestManifestJSON_authModes(t *testing.T) {
	tool := Tool("demo_ping", "Pings.", func(Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	tests := []struct {
		name string
		auth Auth
		want string
	}{
		{"zero value is none", Auth{}, `{"mode":"none"}`},
		{"none", NoAuth(), `{"mode":"none"}`},
		{"apikey", APIKey(
			[]APIKeyField{{Name: "api_key", Label: "API key", Secret: true, Required: true}},
			APIKeyPlacement{In: "header", Name: "API-Key", Value: "{api_key}"}),
			`{"mode":"apikey","apikey":{"fields":[{"name":"api_key","label":"API key","secret":true,"required":true}],
			  "placement":{"in":"header","name":"API-Key","value":"{api_key}"}}}`},
		{"cookie", Cookie([]string{".example.com"}, "https://example.com/login"),
			`{"mode":"cookie","cookie":{"domains":[".example.com"],"loginUrl":"https://example.com/login"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withRegistration(t, func() {
				Register(Plugin{Name: "demo", Version: "1.0.0", Description: "d", Auth: tt.auth}, tool)
				out, err := ManifestJSON()
				if err != nil {
					t.Fatal(err)
				}
				var m struct{ Auth json.RawMessage }
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatal(err)
				}
				assertSameJSON(t, m.Auth, tt.want)
			})
		})
	}
}

func TestManifestJSON_errors(t *testing.T) {
	ok := func(slug string, opts ...ToolOption) *ToolDef {
		return Tool(slug, "A tool.", func(Context, struct{}) (struct{}, error) { return struct{}{}, nil }, opts...)
	}
	plugin := Plugin{Name: "demo-app", Version: "1.0.0", Description: "d"}
	tests := []struct {
		name     string
		register func()
		wantMsg  string
	}{
		{"never registered", func() {}, "pdk.Register was never called"},
		{"registered twice", func() { Register(plugin, ok("demo_app_a")); Register(plugin, ok("demo_app_b")) },
			"called more than once"},
		{"slug without the plugin prefix", func() { Register(plugin, ok("other_a")) },
			`tools[0].slug "other_a" must start with "demo_app_"`},
		{"slug with bad characters", func() { Register(plugin, ok("demo_app_A")) }, "must match"},
		{"duplicate slug", func() { Register(plugin, ok("demo_app_a"), ok("demo_app_a")) },
			`tools[1].slug "demo_app_a" is registered twice`},
		{"duplicate export", func() { Register(plugin, ok("demo_app_a"), ok("demo_app_b", Export("demo_app_a"))) },
			`tools[1].export "demo_app_a" is also the export of demo_app_a`},
		{"reserved export", func() { Register(plugin, ok("demo_app_a", Export("wb_free"))) }, "is reserved"},
		{"read-only and destructive", func() { Register(plugin, ok("demo_app_a", ReadOnly(), Destructive())) },
			"both ReadOnly and Destructive"},
		{"missing description", func() {
			Register(plugin, Tool("demo_app_a", " ", func(Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
		}, "description is required"},
		{"input that is not an object", func() {
			Register(plugin, Tool("demo_app_a", "A.", func(Context, []string) (struct{}, error) { return struct{}{}, nil }))
		}, `inputSchema: type must be "object"`},
		{"output without a JSON Schema", func() {
			Register(plugin, Tool("demo_app_a", "A.", func(Context, struct{}) (chan int, error) { return nil, nil }))
		}, "outputSchema: "},
		{"nil tool", func() { Register(plugin, nil) }, "tools[0]: nil tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withRegistration(t, func() {
				tt.register()
				status, out := (&TestHost{}).Manifest()
				if status != statusError {
					t.Fatalf("status = %d, want 1 (output %s)", status, out)
				}
				e := decodedError(t, out)
				if e.Code != CodeInvalidManifest || !strings.Contains(e.Message, tt.wantMsg) {
					t.Errorf("error = %s %q, want INVALID_MANIFEST containing %q", e.Code, e.Message, tt.wantMsg)
				}
			})
		})
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		want     string
	}{
		{"the host's base_url wins", map[string]string{"base_url": "http://127.0.0.1:9999/"}, "http://127.0.0.1:9999"},
		{"falls back to the registered base URL", nil, "https://api.github.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withRegistration(t, func() {
				Register(examplePlugin())
				var got string
				tool := Tool("git_hub_base", "Base.", func(Context, struct{}) (string, error) { got = BaseURL(); return got, nil })
				if status, out := (&TestHost{Settings: tt.settings}).Call(tool, nil); status != statusOK {
					t.Fatalf("status %d, output %s", status, out)
				}
				if got != tt.want {
					t.Errorf("BaseURL() = %q, want %q", got, tt.want)
				}
			})
		})
	}
}

func TestValidSlug(t *testing.T) {
	tests := []struct {
		slug string
		want bool
	}{
		{"ab", true}, {"a_1", true}, {"github_get_repo", true}, {"a" + strings.Repeat("b", 63), true},
		{"a", false}, {"", false}, {"1ab", false}, {"_ab", false}, {"Ab", false}, {"aB", false}, {"a-b", false},
		{"a b", false}, {"a" + strings.Repeat("b", 64), false}, {"aé", false},
	}
	for _, tt := range tests {
		t.Run(tt.slug, func(t *testing.T) {
			if got := validSlug(tt.slug); got != tt.want {
				t.Errorf("validSlug(%q) = %v, want %v (pattern %s)", tt.slug, got, tt.want, slugPattern)
			}
		})
	}
}
