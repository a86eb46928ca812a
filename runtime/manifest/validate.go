package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrInvalid is wrapped by every validation failure.
var ErrInvalid = errors.New("invalid manifest")

// FieldError names the manifest field that failed validation.
type FieldError struct {
	Field string // JSON path such as "tools[3].inputSchema"
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap makes every FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Reserved integration names are built into the server.
var reserved = map[string]bool{"admin": true, "browser": true, "jots": true, "workbench": true}

// Reserved reports whether name belongs to an integration built into the
// server, which no plugin (and no custom app) may take.
func Reserved(name string) bool { return reserved[name] }

// Size limits of manifest fields.
const (
	MaxTools           = 500
	MaxDescription     = 1024
	MaxToolDescription = 4096
	MaxTitle           = 120
	MaxLogo            = 64 << 10
	MaxCategories      = 8
	MaxManifestBytes   = 4 << 20
	MaxResources       = 500
	MaxTemplates       = 100
	MaxPrompts         = 500
	MaxURI             = 2048
	MaxCompletions     = 100
)

var (
	nameRe      = regexp.MustCompile(`^[a-z][a-z0-9-]{1,39}$`)
	versionRe   = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	slugRe      = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	wordRe      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
	fieldNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	templateRe  = regexp.MustCompile(`\{([^{}]*)\}`)
	mimeRe      = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]*/[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]*$`)
	varRe       = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)
	argNameRe   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	hostRe      = regexp.MustCompile(`^(\*\.)?([a-z0-9{}_-]+\.)*[a-z0-9{}_-]+(:[0-9]{1,5})?$`)
)

// Parse decodes and validates a manifest. Unknown fields are errors.
func Parse(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, &FieldError{"manifest", fmt.Sprintf("%d bytes is over the %d byte limit", len(data), MaxManifestBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, &FieldError{"manifest", "not a valid manifest object: " + err.Error()}
	}
	if dec.More() {
		return nil, &FieldError{"manifest", "trailing data after the manifest object"}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks every rule of docs/abi.md section 4 and returns the first violation.
func (m *Manifest) Validate() error {
	v := &validator{}
	v.manifest(m)
	return v.err
}

type validator struct{ err error }

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (v *validator) manifest(m *Manifest) {
	if m.ABI != 1 {
		v.fail("abi", "must be 1, got %d", m.ABI)
	}
	switch {
	case !nameRe.MatchString(m.Name):
		v.fail("name", "%q must be 2-40 lowercase letters, digits or '-', starting with a letter", m.Name)
	case reserved[m.Name]:
		v.fail("name", "%q is reserved for a built-in integration", m.Name)
	}
	if !versionRe.MatchString(m.Version) {
		v.fail("version", "%q is not a semantic version MAJOR.MINOR.PATCH", m.Version)
	}
	v.text("title", m.Title, false, MaxTitle)
	v.text("description", m.Description, true, MaxDescription)
	v.logo(m.Logo)
	if len(m.Categories) > MaxCategories {
		v.fail("categories", "at most %d categories, got %d", MaxCategories, len(m.Categories))
	}
	for i, c := range m.Categories {
		if !wordRe.MatchString(c) {
			v.fail(fmt.Sprintf("categories[%d]", i), "%q must be a lowercase word (a-z, 0-9, -)", c)
		}
	}
	if m.BaseURL != "" {
		v.httpsURL("baseUrl", m.BaseURL)
	}
	for i, h := range m.Hosts {
		v.host(fmt.Sprintf("hosts[%d]", i), h)
	}
	if m.Proxy != nil {
		v.httpsURL("proxy.baseUrl", m.Proxy.BaseURL)
	}
	v.auth(&m.Auth)
	v.settings(m.Settings)
	v.limits("limits", m.Limits, true)
	v.tools(m)
	v.resources(m)
	v.prompts(m)
}

func (v *validator) text(field, s string, required bool, max int) {
	switch {
	case required && strings.TrimSpace(s) == "":
		v.fail(field, "is required")
	case len(s) > max:
		v.fail(field, "%d characters is over the limit of %d", len(s), max)
	}
}

func (v *validator) logo(logo string) {
	switch {
	case logo == "":
	case len(logo) > MaxLogo:
		v.fail("logo", "%d bytes is over the limit of %d", len(logo), MaxLogo)
	case strings.HasPrefix(logo, "data:image/"):
	default:
		v.httpsURL("logo", logo)
	}
}

func (v *validator) httpsURL(field, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		v.fail(field, "%q is not a URL: %v", s, err)
	case u.Scheme != "https" || u.Host == "":
		v.fail(field, "%q must be an absolute https URL", s)
	case u.User != nil:
		v.fail(field, "%q must not carry user info", s)
	}
}

func (v *validator) host(field, h string) {
	switch {
	case h == "" || h == "*":
		v.fail(field, "%q is not a host name", h)
	case !hostRe.MatchString(h):
		v.fail(field, "%q must be a lowercase host name, optionally *.domain or host:port", h)
	case strings.HasPrefix(h, "*.") && !strings.Contains(h[2:], "."):
		v.fail(field, "%q: a wildcard needs at least two labels after it", h)
	case isIPLiteral(h):
		v.fail(field, "%q: IP literals are not allowed; operators point an integration elsewhere with <NAME>_BASE_URL", h)
	default:
		for _, m := range templateRe.FindAllStringSubmatch(h, -1) {
			if !fieldNameRe.MatchString(m[1]) {
				v.fail(field, "%q: template {%s} is not a field name", h, m[1])
			}
		}
	}
}

func isIPLiteral(h string) bool {
	host := h
	if i := strings.LastIndexByte(h, ':'); i > 0 {
		host = h[:i]
	}
	labels := strings.Split(host, ".")
	if len(labels) != 4 {
		return false
	}
	for _, l := range labels {
		if l == "" || strings.Trim(l, "0123456789") != "" {
			return false
		}
	}
	return true
}

func (v *validator) auth(a *Auth) {
	set := map[string]bool{ModeOAuth2: a.OAuth2 != nil, ModeAPIKey: a.APIKey != nil, ModeCookie: a.Cookie != nil}
	switch a.Mode {
	case ModeOAuth2, ModeAPIKey, ModeCookie, ModeNone:
	default:
		v.fail("auth.mode", "%q must be one of oauth2, apikey, cookie, none", a.Mode)
		return
	}
	for mode, present := range set {
		if present && mode != a.Mode {
			v.fail("auth."+mode, "given but auth.mode is %q", a.Mode)
		}
		if !present && mode == a.Mode {
			v.fail("auth."+mode, "is required when auth.mode is %q", a.Mode)
		}
	}
	if v.err != nil {
		return
	}
	switch a.Mode {
	case ModeOAuth2:
		v.httpsURL("auth.oauth2.authorizeUrl", a.OAuth2.AuthorizeURL)
		v.httpsURL("auth.oauth2.tokenUrl", a.OAuth2.TokenURL)
		if a.OAuth2.RefreshURL != "" {
			v.httpsURL("auth.oauth2.refreshUrl", a.OAuth2.RefreshURL)
		}
		if a.OAuth2.TokenAuth != "" && a.OAuth2.TokenAuth != "basic" && a.OAuth2.TokenAuth != "post" {
			v.fail("auth.oauth2.tokenAuth", "%q must be basic or post", a.OAuth2.TokenAuth)
		}
		for i, s := range a.OAuth2.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\n") {
				v.fail(fmt.Sprintf("auth.oauth2.scopes[%d]", i), "%q must be one non-empty scope without spaces", s)
			}
		}
	case ModeAPIKey:
		v.apikey(a.APIKey)
	case ModeCookie:
		if len(a.Cookie.Domains) == 0 {
			v.fail("auth.cookie.domains", "at least one domain is required")
		}
		for i, d := range a.Cookie.Domains {
			v.host(fmt.Sprintf("auth.cookie.domains[%d]", i), strings.TrimPrefix(d, "."))
		}
		v.httpsURL("auth.cookie.loginUrl", a.Cookie.LoginURL)
	}
}

func (v *validator) apikey(k *APIKey) {
	if len(k.Fields) == 0 {
		v.fail("auth.apikey.fields", "at least one field is required")
	}
	declared := map[string]bool{}
	for i, f := range k.Fields {
		field := fmt.Sprintf("auth.apikey.fields[%d]", i)
		switch {
		case !fieldNameRe.MatchString(f.Name):
			v.fail(field+".name", "%q must match %s", f.Name, fieldNameRe)
		case declared[f.Name]:
			v.fail(field+".name", "%q is declared twice", f.Name)
		case strings.TrimSpace(f.Label) == "":
			v.fail(field+".label", "is required")
		}
		if f.Pattern != "" {
			if _, err := regexp.Compile(f.Pattern); err != nil {
				v.fail(field+".pattern", "is not a valid regular expression: %v", err)
			}
		}
		declared[f.Name] = true
	}
	p := k.Placement
	var templates map[string]string
	switch p.In {
	case "header", "query":
		if p.Name == "" {
			v.fail("auth.apikey.placement.name", "is required for placement in %s", p.In)
		}
		templates = map[string]string{"value": p.Value}
	case "basic":
		templates = map[string]string{"username": p.Username, "password": p.Password}
	default:
		v.fail("auth.apikey.placement.in", "%q must be header, query or basic", p.In)
		return
	}
	for key, t := range templates {
		field := "auth.apikey.placement." + key
		if t == "" {
			v.fail(field, "is required for placement in %s", p.In)
		}
		if strings.Count(t, "{") != strings.Count(t, "}") {
			v.fail(field, "%q has unbalanced braces", t)
		}
		for _, m := range templateRe.FindAllStringSubmatch(t, -1) {
			if !declared[m[1]] {
				v.fail(field, "%q refers to {%s}, which is not a declared field", t, m[1])
			}
		}
	}
}

func (v *validator) settings(settings []Setting) {
	seen := map[string]bool{}
	for i, s := range settings {
		field := fmt.Sprintf("settings[%d]", i)
		switch {
		case !fieldNameRe.MatchString(s.Name):
			v.fail(field+".name", "%q must match %s", s.Name, fieldNameRe)
		case s.Name == "base_url":
			v.fail(field+".name", "base_url is reserved")
		case seen[s.Name]:
			v.fail(field+".name", "%q is declared twice", s.Name)
		}
		seen[s.Name] = true
		if s.Default != "" && len(s.Enum) > 0 && !slices.Contains(s.Enum, s.Default) {
			v.fail(field+".default", "%q is not one of the enum values", s.Default)
		}
	}
}

func (v *validator) limits(field string, l *Limits, pluginLevel bool) {
	if l == nil {
		return
	}
	if l.TimeoutMs < 0 || l.MemoryPages < 0 || l.OutputBytes < 0 || l.ResponseBytes < 0 || l.Concurrency < 0 {
		v.fail(field, "limits must not be negative")
	}
	if !pluginLevel && l.MemoryPages != 0 {
		v.fail(field+".memoryPages", "can be set only for the whole plugin: its tools share instances")
	}
}

func (v *validator) tools(m *Manifest) {
	switch {
	case len(m.Tools) == 0:
		v.fail("tools", "at least one tool is required")
	case len(m.Tools) > MaxTools:
		v.fail("tools", "%d tools is over the limit of %d", len(m.Tools), MaxTools)
	}
	prefix := strings.ReplaceAll(m.Name, "-", "_") + "_"
	slugs := map[string]bool{}
	exports := map[string]string{}
	for i := range m.Tools {
		t := &m.Tools[i]
		field := fmt.Sprintf("tools[%d]", i)
		switch {
		case !slugRe.MatchString(t.Slug):
			v.fail(field+".slug", "%q must match %s", t.Slug, slugRe)
		case !strings.HasPrefix(t.Slug, prefix):
			v.fail(field+".slug", "%q must start with %q", t.Slug, prefix)
		case slugs[t.Slug]:
			v.fail(field+".slug", "%q is declared twice", t.Slug)
		}
		slugs[t.Slug] = true
		v.text(field+".title", t.Title, false, MaxTitle)
		v.text(field+".description", t.Description, true, MaxToolDescription)
		v.schema(field+".inputSchema", t.InputSchema, true)
		v.schema(field+".outputSchema", t.OutputSchema, false)
		if t.Annotations.ReadOnly && t.Annotations.Destructive {
			v.fail(field+".annotations", "a tool cannot be both readOnly and destructive")
		}
		export := t.ExportName()
		switch {
		case reservedExport(export):
			v.fail(field+".export", "%q is a reserved export name", export)
		case exports[export] != "":
			v.fail(field+".export", "%q is already the export of %s", export, exports[export])
		}
		exports[export] = t.Slug
		v.limits(field+".limits", t.Limits, false)
	}
}

func (v *validator) schema(field string, raw json.RawMessage, required bool) {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			v.fail(field, "is required")
		}
		return
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		v.fail(field, "is not a JSON Schema object: %v", err)
		return
	}
	if s.Type != "object" {
		v.fail(field, `type must be "object", got %q`, s.Type)
		return
	}
	if _, err := s.Resolve(nil); err != nil {
		v.fail(field, "is not a valid JSON Schema: %v", err)
	}
}

// reservedExport reports whether an export name is the ABI's own.
func reservedExport(name string) bool {
	return strings.HasPrefix(name, "wb_") || strings.HasPrefix(name, "_") || name == "manifest" || name == "memory"
}

// contentExport checks a resource or prompt export: not reserved, not a tool's.
func (v *validator) contentExport(field, export string, m *Manifest) {
	if reservedExport(export) {
		v.fail(field, "%q is a reserved export name", export)
		return
	}
	for i := range m.Tools {
		if m.Tools[i].ExportName() == export {
			v.fail(field, "%q is already the export of tool %s", export, m.Tools[i].Slug)
			return
		}
	}
}

// label checks a resource name: 1-128 printable characters.
func (v *validator) label(field, s string) {
	switch {
	case strings.TrimSpace(s) == "":
		v.fail(field, "is required")
	case len(s) > 128:
		v.fail(field, "%d characters is over the limit of 128", len(s))
	case strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		v.fail(field, "%q contains control characters", s)
	}
}

func (v *validator) mimeType(field, s string) {
	if s != "" && !mimeRe.MatchString(s) {
		v.fail(field, "%q is not a media type type/subtype", s)
	}
}

// resourceURI checks an absolute URI (or a template's literal skeleton).
func (v *validator) resourceURI(field, s string) {
	u, err := url.Parse(s)
	switch {
	case len(s) > MaxURI:
		v.fail(field, "%d characters is over the limit of %d", len(s), MaxURI)
	case err != nil:
		v.fail(field, "%q is not a URI: %v", s, err)
	case u.Scheme == "":
		v.fail(field, "%q must be an absolute URI with a scheme", s)
	case strings.EqualFold(u.Scheme, "workbench"):
		v.fail(field, "%q: the workbench scheme is reserved for the server's own resources", s)
	}
}

func (v *validator) completions(field string, values []string) {
	if len(values) > MaxCompletions {
		v.fail(field, "%d values is over the limit of %d", len(values), MaxCompletions)
	}
}

func (v *validator) resources(m *Manifest) {
	if len(m.Resources) > MaxResources {
		v.fail("resources", "%d resources is over the limit of %d", len(m.Resources), MaxResources)
	}
	uris := map[string]bool{}
	for i, r := range m.Resources {
		field := fmt.Sprintf("resources[%d]", i)
		v.resourceURI(field+".uri", r.URI)
		if uris[r.URI] {
			v.fail(field+".uri", "%q is declared twice", r.URI)
		}
		uris[r.URI] = true
		v.label(field+".name", r.Name)
		v.text(field+".title", r.Title, false, MaxTitle)
		v.text(field+".description", r.Description, false, MaxToolDescription)
		v.mimeType(field+".mimeType", r.MIMEType)
		v.contentExport(field+".export", r.ExportName(), m)
	}
	if len(m.ResourceTemplates) > MaxTemplates {
		v.fail("resourceTemplates", "%d templates is over the limit of %d", len(m.ResourceTemplates), MaxTemplates)
	}
	templates := map[string]bool{}
	for i, t := range m.ResourceTemplates {
		field := fmt.Sprintf("resourceTemplates[%d]", i)
		vars := v.uriTemplate(field+".uriTemplate", t.URITemplate)
		if templates[t.URITemplate] {
			v.fail(field+".uriTemplate", "%q is declared twice", t.URITemplate)
		}
		templates[t.URITemplate] = true
		v.label(field+".name", t.Name)
		v.text(field+".title", t.Title, false, MaxTitle)
		v.text(field+".description", t.Description, false, MaxToolDescription)
		v.mimeType(field+".mimeType", t.MIMEType)
		v.contentExport(field+".export", t.ExportName(), m)
		for _, name := range slices.Sorted(maps.Keys(t.Completions)) {
			values := t.Completions[name]
			if !slices.Contains(vars, name) {
				v.fail(field+".completions", "%q is not a variable of the template", name)
			}
			v.completions(field+".completions."+name, values)
		}
	}
}

// uriTemplate checks a template of simple {var} expressions and returns its variables.
func (v *validator) uriTemplate(field, s string) []string {
	if strings.Count(s, "{") != strings.Count(s, "}") {
		v.fail(field, "%q has unbalanced braces", s)
		return nil
	}
	var vars []string
	for _, m := range templateRe.FindAllStringSubmatch(s, -1) {
		switch {
		case !varRe.MatchString(m[1]):
			v.fail(field, "%q: {%s} must be a simple variable (letters, digits, _)", s, m[1])
		case slices.Contains(vars, m[1]):
			v.fail(field, "%q: {%s} appears twice", s, m[1])
		}
		vars = append(vars, m[1])
	}
	if len(vars) == 0 {
		v.fail(field, "%q has no {variable}; declare it under resources", s)
	}
	v.resourceURI(field, templateRe.ReplaceAllString(s, "x"))
	return vars
}

func (v *validator) prompts(m *Manifest) {
	if len(m.Prompts) > MaxPrompts {
		v.fail("prompts", "%d prompts is over the limit of %d", len(m.Prompts), MaxPrompts)
	}
	prefix := strings.ReplaceAll(m.Name, "-", "_") + "_"
	names := map[string]bool{}
	for i, p := range m.Prompts {
		field := fmt.Sprintf("prompts[%d]", i)
		switch {
		case !slugRe.MatchString(p.Name):
			v.fail(field+".name", "%q must match %s", p.Name, slugRe)
		case !strings.HasPrefix(p.Name, prefix):
			v.fail(field+".name", "%q must start with %q", p.Name, prefix)
		case names[p.Name]:
			v.fail(field+".name", "%q is declared twice", p.Name)
		}
		names[p.Name] = true
		v.text(field+".title", p.Title, false, MaxTitle)
		v.text(field+".description", p.Description, false, MaxToolDescription)
		v.contentExport(field+".export", p.ExportName(), m)
		args := map[string]bool{}
		for j, a := range p.Arguments {
			af := fmt.Sprintf("%s.arguments[%d]", field, j)
			switch {
			case !argNameRe.MatchString(a.Name):
				v.fail(af+".name", "%q must match %s", a.Name, argNameRe)
			case args[a.Name]:
				v.fail(af+".name", "%q is declared twice", a.Name)
			}
			args[a.Name] = true
			v.text(af+".description", a.Description, false, MaxDescription)
			v.completions(af+".completions", a.Completions)
		}
	}
}
