package manifest

import (
	"encoding/json"
	"fmt"
)

// Manifest is what a plugin's `manifest` export returns: one integration and its tools.
type Manifest struct {
	ABI         int       `json:"abi"`
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description"`
	Logo        string    `json:"logo,omitempty"`
	Categories  []string  `json:"categories,omitempty"`
	BaseURL     string    `json:"baseUrl,omitempty"`
	Hosts       []string  `json:"hosts,omitempty"`
	Proxy       *Proxy    `json:"proxy,omitempty"`
	Auth        Auth      `json:"auth"`
	Settings    []Setting `json:"settings,omitempty"`
	Limits      *Limits   `json:"limits,omitempty"`
	Tools       []Tool    `json:"tools"`
	// Resources, ResourceTemplates and Prompts are what the plugin serves
	// besides tools; each is read or rendered through an export.
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
}

// Default exports of resources and prompts.
const (
	DefaultResourceExport = "read_resource"
	DefaultPromptExport   = "get_prompt"
)

// Resource is a fixed resource the plugin serves.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Export      string `json:"export,omitempty"`
}

// ExportName is the wasm export that reads the resource.
func (r *Resource) ExportName() string { return orDefault(r.Export, DefaultResourceExport) }

// ResourceTemplate is a family of resources named by an RFC 6570 template
// of simple {var} expressions.
type ResourceTemplate struct {
	URITemplate string              `json:"uriTemplate"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	MIMEType    string              `json:"mimeType,omitempty"`
	Export      string              `json:"export,omitempty"`
	Completions map[string][]string `json:"completions,omitempty"`
}

// ExportName is the wasm export that reads the template's resources.
func (r *ResourceTemplate) ExportName() string { return orDefault(r.Export, DefaultResourceExport) }

// Prompt is a prompt template the plugin renders.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Export      string           `json:"export,omitempty"`
}

// ExportName is the wasm export that renders the prompt.
func (p *Prompt) ExportName() string { return orDefault(p.Export, DefaultPromptExport) }

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Completions []string `json:"completions,omitempty"`
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// ContentExports returns the distinct exports of the manifest's resources,
// templates and prompts, each with the field path of its first use.
func (m *Manifest) ContentExports() map[string]string {
	out := map[string]string{}
	add := func(export, field string) {
		if _, ok := out[export]; !ok {
			out[export] = field
		}
	}
	for i := range m.Resources {
		add(m.Resources[i].ExportName(), fmt.Sprintf("resources[%d].export", i))
	}
	for i := range m.ResourceTemplates {
		add(m.ResourceTemplates[i].ExportName(), fmt.Sprintf("resourceTemplates[%d].export", i))
	}
	for i := range m.Prompts {
		add(m.Prompts[i].ExportName(), fmt.Sprintf("prompts[%d].export", i))
	}
	return out
}

// Proxy declares where the authenticated proxy forwards curl-session requests.
type Proxy struct {
	BaseURL string `json:"baseUrl"`
}

// Auth modes.
const (
	ModeOAuth2 = "oauth2"
	ModeAPIKey = "apikey"
	ModeCookie = "cookie"
	ModeNone   = "none"
)

// Auth says how the integration authenticates and what each mode needs.
type Auth struct {
	Mode   string  `json:"mode"`
	OAuth2 *OAuth2 `json:"oauth2,omitempty"`
	APIKey *APIKey `json:"apikey,omitempty"`
	Cookie *Cookie `json:"cookie,omitempty"`
}

// OAuth2 describes an authorization-code integration.
type OAuth2 struct {
	AuthorizeURL string   `json:"authorizeUrl"`
	TokenURL     string   `json:"tokenUrl"`
	RefreshURL   string   `json:"refreshUrl,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	TokenAuth    string   `json:"tokenAuth,omitempty"`
}

// APIKey describes the form fields a user fills in and where the key goes.
type APIKey struct {
	Fields    []Field   `json:"fields"`
	Placement Placement `json:"placement"`
}

// Field is one value of an API-key connection form.
type Field struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Secret      bool   `json:"secret,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
}

// Placement says where an API key is attached: a header, a query parameter or basic auth.
type Placement struct {
	In       string `json:"in"`
	Name     string `json:"name,omitempty"`
	Value    string `json:"value,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Cookie describes a cookie-auth integration.
type Cookie struct {
	Domains  []string `json:"domains"`
	LoginURL string   `json:"loginUrl"`
}

// Setting is an operator setting the plugin reads with config_get.
type Setting struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Default     string   `json:"default,omitempty"`
}

// Limits are a plugin's (or a tool's) requested limits; zero means "not requested".
type Limits struct {
	TimeoutMs     int   `json:"timeoutMs,omitempty"`
	MemoryPages   int   `json:"memoryPages,omitempty"`
	OutputBytes   int64 `json:"outputBytes,omitempty"`
	ResponseBytes int64 `json:"responseBytes,omitempty"`
	Concurrency   int   `json:"concurrency,omitempty"`
}

// Tool is one callable operation.
type Tool struct {
	Slug         string          `json:"slug"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Annotations     `json:"annotations,omitempty"`
	Export       string          `json:"export,omitempty"`
	Limits       *Limits         `json:"limits,omitempty"`
}

// Annotations are hints for agents and clients about a tool's effects.
type Annotations struct {
	ReadOnly    bool `json:"readOnly,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	OpenWorld   bool `json:"openWorld,omitempty"`
}

// ExportName is the wasm export that runs the tool.
func (t *Tool) ExportName() string {
	if t.Export != "" {
		return t.Export
	}
	return t.Slug
}

// Tool returns the tool with the given slug, or nil.
func (m *Manifest) Tool(slug string) *Tool {
	for i := range m.Tools {
		if m.Tools[i].Slug == slug {
			return &m.Tools[i]
		}
	}
	return nil
}

// DisplayTitle is the title, or the name when no title was given.
func (m *Manifest) DisplayTitle() string {
	if m.Title != "" {
		return m.Title
	}
	return m.Name
}

// EnvPrefix is the integration name as used in environment variables:
// upper-cased with '-' as '_' (`atlassian-jira` -> `ATLASSIAN_JIRA`).
func EnvPrefix(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
