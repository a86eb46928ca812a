package pdk

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// abiVersion is the ABI this package implements (docs/abi.md).
const abiVersion = 1

// Plugin describes the integration a module provides. Field meanings and
// rules are those of the manifest in docs/abi.md; the host validates them when
// it loads the plugin.
type Plugin struct {
	// Name is the integration name: lowercase letters, digits and '-'.
	Name string
	// Version is a semantic version, MAJOR.MINOR.PATCH with optional -pre.
	Version string
	// Title defaults to Name on the host side.
	Title string
	// Description is required, at most 1024 characters.
	Description string
	// Logo is an https:// URL or a data:image/... URI.
	Logo string
	// Categories are lowercase words such as "developer-tools".
	Categories []string
	// BaseURL is the https:// URL API calls start from; read the effective
	// value (operators may override it) with [BaseURL].
	BaseURL string
	// Hosts are the hostnames the plugin may reach.
	Hosts []string
	// ProxyBaseURL is where the host's authenticated proxy forwards; empty
	// means the integration cannot be used through curl sessions.
	ProxyBaseURL string
	// Auth says how the host authenticates outbound requests. The zero
	// value is [NoAuth].
	Auth Auth
	// Settings are operator settings read with [Config].
	Settings []Setting
	// Limits are resource requests; zero fields take the host default.
	Limits Limits
	// Resources, ResourceTemplates and Prompts are served besides the
	// tools, through exports that call [ReadResource] and [GetPrompt].
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	Prompts           []Prompt
}

// Auth is the manifest's auth block. Build it with [OAuth2], [APIKey],
// [Cookie] or [NoAuth].
type Auth struct {
	Mode   string        `json:"mode"`
	OAuth2 *OAuth2Config `json:"oauth2,omitempty"`
	APIKey *APIKeyConfig `json:"apikey,omitempty"`
	Cookie *CookieConfig `json:"cookie,omitempty"`
}

// OAuth2Config is the oauth2 auth mode's configuration.
type OAuth2Config struct {
	AuthorizeURL string   `json:"authorizeUrl"`
	TokenURL     string   `json:"tokenUrl"`
	Scopes       []string `json:"scopes"`
	// TokenAuth is "basic" or "post"; empty means "post".
	TokenAuth  string `json:"tokenAuth,omitempty"`
	RefreshURL string `json:"refreshUrl,omitempty"`
}

// APIKeyConfig is the apikey auth mode's configuration.
type APIKeyConfig struct {
	Fields    []APIKeyField   `json:"fields"`
	Placement APIKeyPlacement `json:"placement"`
}

// APIKeyField is one field the user fills in when connecting.
type APIKeyField struct {
	Name        string `json:"name"`
	Label       string `json:"label,omitempty"`
	Secret      bool   `json:"secret"`
	Required    bool   `json:"required"`
	Pattern     string `json:"pattern,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
}

// APIKeyPlacement says where the host puts the key: In is "header", "query"
// or "basic". Values may reference fields as {field}.
type APIKeyPlacement struct {
	In       string `json:"in"`
	Name     string `json:"name,omitempty"`
	Value    string `json:"value,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// CookieConfig is the cookie auth mode's configuration.
type CookieConfig struct {
	Domains  []string `json:"domains"`
	LoginURL string   `json:"loginUrl"`
}

// OAuth2 returns oauth2 auth with cfg.
func OAuth2(cfg OAuth2Config) Auth {
	return Auth{Mode: "oauth2", OAuth2: &cfg}
}

// APIKey returns apikey auth with the given fields and placement.
func APIKey(fields []APIKeyField, placement APIKeyPlacement) Auth {
	return Auth{Mode: "apikey", APIKey: &APIKeyConfig{Fields: fields, Placement: placement}}
}

// Cookie returns cookie auth for the given cookie domains and login page.
func Cookie(domains []string, loginURL string) Auth {
	return Auth{Mode: "cookie", Cookie: &CookieConfig{Domains: domains, LoginURL: loginURL}}
}

// NoAuth returns auth mode none: the host adds no credential.
func NoAuth() Auth {
	return Auth{Mode: "none"}
}

// Setting is an operator setting the plugin reads with [Config].
type Setting struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Default     string   `json:"default,omitempty"`
}

// Limits are the plugin-wide resource requests of docs/abi.md section 7.
type Limits struct {
	TimeoutMs     int `json:"timeoutMs,omitempty"`
	MemoryPages   int `json:"memoryPages,omitempty"`
	OutputBytes   int `json:"outputBytes,omitempty"`
	ResponseBytes int `json:"responseBytes,omitempty"`
	Concurrency   int `json:"concurrency,omitempty"`
}

// registration is what Register recorded.
type registration struct {
	mu     sync.Mutex
	done   bool
	err    error
	plugin Plugin
	tools  []*ToolDef
}

var registered registration

// Register declares the plugin and its tools. Call it exactly once, from an
// init function. Mistakes (a second call, a duplicate slug or export, a slug
// without the plugin's prefix, a handler type without an object schema) are
// reported by the manifest export, so the host refuses the plugin with the
// reason.
func Register(p Plugin, tools ...*ToolDef) {
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if registered.done {
		registered.err = fmt.Errorf("pdk.Register called more than once (second call for %q)", p.Name)
		return
	}
	registered.done = true
	registered.plugin = p
	registered.tools = tools
}

// BaseURL returns the effective API base URL: the host's base_url setting,
// or else the BaseURL given to [Register]. It has no trailing slash.
func BaseURL() string {
	if v, ok := Config("base_url"); ok && v != "" {
		return strings.TrimRight(v, "/")
	}
	registered.mu.Lock()
	defer registered.mu.Unlock()
	return strings.TrimRight(registered.plugin.BaseURL, "/")
}

// manifestJSON is the manifest object of docs/abi.md section 4.
type manifestJSON struct {
	ABI         int            `json:"abi"`
	Name        string         `json:"name"`
	Version     string         `json:"version"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	Logo        string         `json:"logo,omitempty"`
	Categories  []string       `json:"categories,omitempty"`
	BaseURL     string         `json:"baseUrl,omitempty"`
	Hosts       []string       `json:"hosts,omitempty"`
	Proxy       *proxyJSON     `json:"proxy,omitempty"`
	Auth        Auth           `json:"auth"`
	Settings    []Setting      `json:"settings,omitempty"`
	Limits      Limits         `json:"limits,omitzero"`
	Tools       []toolManifest `json:"tools"`

	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
}

type proxyJSON struct {
	BaseURL string `json:"baseUrl"`
}

type toolManifest struct {
	Slug         string          `json:"slug"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  annotations     `json:"annotations"`
	Export       string          `json:"export"`
	Limits       ToolLimits      `json:"limits,omitzero"`
}

// annotations are always written in full so the host never has to guess a
// default (MCP's own default for destructive is true).
type annotations struct {
	ReadOnly    bool `json:"readOnly"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"openWorld"`
}

// slugPattern is the rule for tool slugs, checked by validSlug. A compiled
// regexp would cost every plugin instance its compilation at start-up
// ({1,63} expands to 63 copies).
const slugPattern = `^[a-z][a-z0-9_]{1,63}$`

// validSlug reports whether slug matches slugPattern.
func validSlug(slug string) bool {
	if len(slug) < 2 || len(slug) > 64 || slug[0] < 'a' || slug[0] > 'z' {
		return false
	}
	for i := 1; i < len(slug); i++ {
		c := slug[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// ManifestJSON returns the manifest the manifest export produces, or the
// error it reports instead. It is useful in a plugin's own tests.
func ManifestJSON() ([]byte, error) {
	registered.mu.Lock()
	done, regErr, p, tools := registered.done, registered.err, registered.plugin, registered.tools
	registered.mu.Unlock()
	if regErr != nil {
		return nil, Errorf(CodeInvalidManifest, "%v", regErr)
	}
	if !done {
		return nil, Errorf(CodeInvalidManifest, "pdk.Register was never called: call it from an init function")
	}
	m := manifestJSON{
		ABI: abiVersion, Name: p.Name, Version: p.Version, Title: p.Title,
		Description: p.Description, Logo: p.Logo, Categories: p.Categories,
		BaseURL: p.BaseURL, Hosts: p.Hosts, Auth: p.Auth, Settings: p.Settings,
		Limits: p.Limits, Tools: make([]toolManifest, 0, len(tools)),
		Resources: p.Resources, ResourceTemplates: p.ResourceTemplates, Prompts: p.Prompts,
	}
	if m.Auth.Mode == "" {
		m.Auth = NoAuth()
	}
	if p.ProxyBaseURL != "" {
		m.Proxy = &proxyJSON{BaseURL: p.ProxyBaseURL}
	}
	prefix := strings.ReplaceAll(p.Name, "-", "_") + "_"
	slugs := map[string]bool{}
	exports := map[string]string{}
	for i, t := range tools {
		if t == nil {
			return nil, Errorf(CodeInvalidManifest, "tools[%d]: nil tool passed to pdk.Register", i)
		}
		tm, err := t.manifestEntry()
		if err != nil {
			return nil, Errorf(CodeInvalidManifest, "tools[%d] (%s): %v", i, t.slug, err)
		}
		switch {
		case !validSlug(tm.Slug):
			return nil, Errorf(CodeInvalidManifest, "tools[%d].slug %q must match %s", i, tm.Slug, slugPattern)
		case !strings.HasPrefix(tm.Slug, prefix):
			return nil, Errorf(CodeInvalidManifest, "tools[%d].slug %q must start with %q", i, tm.Slug, prefix)
		case slugs[tm.Slug]:
			return nil, Errorf(CodeInvalidManifest, "tools[%d].slug %q is registered twice", i, tm.Slug)
		case exports[tm.Export] != "":
			return nil, Errorf(CodeInvalidManifest, "tools[%d].export %q is also the export of %s", i, tm.Export, exports[tm.Export])
		case reservedExport(tm.Export):
			return nil, Errorf(CodeInvalidManifest, "tools[%d].export %q is reserved", i, tm.Export)
		}
		slugs[tm.Slug] = true
		exports[tm.Export] = tm.Slug
		m.Tools = append(m.Tools, tm)
	}
	if err := checkContentExports(p, exports); err != nil {
		return nil, Errorf(CodeInvalidManifest, "%v", err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, Errorf(CodeInvalidManifest, "encoding manifest: %v", err)
	}
	return out, nil
}
