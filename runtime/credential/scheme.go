package credential

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Auth modes an integration's manifest may declare.
const (
	ModeOAuth2 = "oauth2"
	ModeAPIKey = "apikey"
	ModeCookie = "cookie"
	ModeNone   = "none"
)

// Placement values for Placement.In.
const (
	InHeader = "header"
	InQuery  = "query"
	InBasic  = "basic"
)

// Scheme is how an integration authenticates, taken from its manifest.
type Scheme struct {
	Mode      string    // ModeOAuth2, ModeAPIKey, ModeCookie or ModeNone
	Placement Placement // apikey only
	// CookieDomains lists the hosts the cookies may be sent to (cookie only).
	// "example.com" matches that host only; ".example.com" matches it and
	// every subdomain.
	CookieDomains []string
}

// Placement says where an API key goes. Templates reference credential fields
// as {name}, for example "Token {api_key}".
type Placement struct {
	In       string // InHeader, InQuery or InBasic
	Name     string // header or query parameter name (header, query)
	Value    string // template (header, query)
	Username string // template (basic)
	Password string // template (basic); may be empty
}

// alwaysStripped are the request headers Strip removes in every mode.
var alwaysStripped = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// hostOwnedHeaders may not carry an API key: the HTTP stack owns them.
var hostOwnedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Te", "Trailer", "Upgrade"}

// Validate reports the first problem with the scheme: an unknown mode or
// placement, an empty or malformed template, a placement outside apikey mode,
// or a missing or malformed cookie domain.
func (s Scheme) Validate() error {
	switch s.Mode {
	case ModeAPIKey:
		return s.Placement.validate()
	case ModeCookie:
		if len(s.CookieDomains) == 0 {
			return errors.New("credential: cookie mode needs at least one cookie domain")
		}
		for _, d := range s.CookieDomains {
			if !isCookieDomain(d) {
				return fmt.Errorf("credential: cookie domain %q is not a host name", d)
			}
		}
	case ModeOAuth2, ModeNone:
	default:
		return fmt.Errorf("credential: unknown auth mode %q (want oauth2, apikey, cookie or none)", s.Mode)
	}
	if s.Placement != (Placement{}) {
		return fmt.Errorf("credential: a placement is only valid in apikey mode, not %q", s.Mode)
	}
	return nil
}

func (p Placement) validate() error {
	var templates []string
	switch p.In {
	case InHeader:
		if !httpguts.ValidHeaderFieldName(p.Name) {
			return fmt.Errorf("credential: placement header name %q is not a valid header name", p.Name)
		}
		for _, h := range hostOwnedHeaders {
			if strings.EqualFold(p.Name, h) {
				return fmt.Errorf("credential: placement header name %q is reserved for the HTTP stack", p.Name)
			}
		}
		templates = []string{p.Value}
	case InQuery:
		if p.Name == "" {
			return errors.New("credential: placement query parameter name is empty")
		}
		templates = []string{p.Value}
	case InBasic:
		if p.Username == "" {
			return errors.New("credential: basic placement username template is empty")
		}
		templates = []string{p.Username, p.Password}
	default:
		return fmt.Errorf("credential: unknown placement %q (want header, query or basic)", p.In)
	}
	if p.In != InBasic && p.Value == "" {
		return fmt.Errorf("credential: placement %s value template is empty", p.In)
	}
	if p.In == InBasic && (p.Name != "" || p.Value != "") {
		return errors.New("credential: basic placement takes username and password, not name and value")
	}
	if p.In != InBasic && (p.Username != "" || p.Password != "") {
		return fmt.Errorf("credential: %s placement takes name and value, not username and password", p.In)
	}
	refs := 0
	for _, t := range templates {
		parts, err := parseTemplate(t)
		if err != nil {
			return fmt.Errorf("credential: placement: %w", err)
		}
		for _, part := range parts {
			if part.field != "" {
				refs++
			}
		}
	}
	if refs == 0 {
		return errors.New("credential: placement references no {field}, so it would attach no secret")
	}
	return nil
}

// TemplateFields returns the sorted, distinct field names the placement
// templates reference. Malformed templates contribute nothing; Validate
// reports them.
func (s Scheme) TemplateFields() []string {
	var names []string
	for _, t := range []string{s.Placement.Value, s.Placement.Username, s.Placement.Password} {
		parts, err := parseTemplate(t)
		if err != nil {
			continue
		}
		for _, p := range parts {
			if p.field != "" {
				names = append(names, p.field)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Strip removes every credential-bearing part a plugin may have set:
// Authorization, Proxy-Authorization and Cookie always, plus the header or
// query parameter the apikey placement names. Names are compared
// case-insensitively, so a non-canonical header key cannot slip through.
func (s Scheme) Strip(req *http.Request) {
	names := alwaysStripped
	if s.Mode == ModeAPIKey && s.Placement.In == InHeader && s.Placement.Name != "" {
		names = append(slices.Clip(names), s.Placement.Name)
	}
	for key := range req.Header {
		for _, n := range names {
			if strings.EqualFold(key, n) {
				delete(req.Header, key)
				break
			}
		}
	}
	if s.Mode == ModeAPIKey && s.Placement.In == InQuery && s.Placement.Name != "" && req.URL != nil {
		req.URL.RawQuery = removeQueryParam(req.URL.RawQuery, s.Placement.Name)
	}
}

// removeQueryParam drops every parameter whose decoded name equals name
// (case-insensitively), keeping the others byte for byte. Both '&' and ';'
// count as separators, since some servers split on either.
func removeQueryParam(raw, name string) string {
	var b strings.Builder
	wrote, sep := false, ""
	for {
		i := strings.IndexAny(raw, "&;")
		seg := raw
		if i >= 0 {
			seg = raw[:i]
		}
		key, _, _ := strings.Cut(seg, "=")
		if decoded, err := url.QueryUnescape(key); err == nil {
			key = decoded
		}
		if !strings.EqualFold(key, name) {
			if wrote {
				b.WriteString(sep)
			}
			b.WriteString(seg)
			wrote = true
		}
		if i < 0 {
			return b.String()
		}
		sep, raw = raw[i:i+1], raw[i+1:]
	}
}

// Apply strips the request (see Strip) and attaches c according to the
// scheme. Errors name the missing field or the problem, never a secret; a
// missing or incomplete credential wraps failure.ErrNotConnected.
func (s Scheme) Apply(req *http.Request, c *Credential) error {
	s.Strip(req)
	if s.Mode == ModeNone {
		return nil
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("credential: no %s credential: %w", s.Mode, failure.ErrNotConnected)
	}
	switch s.Mode {
	case ModeOAuth2:
		if c.AccessToken == "" {
			return fmt.Errorf("credential: oauth2 credential has no access token: %w", failure.ErrNotConnected)
		}
		if !httpguts.ValidHeaderFieldValue(c.AccessToken) {
			return errors.New("credential: oauth2 access token contains characters not allowed in a header")
		}
		req.Header.Set("Authorization", "Bearer "+c.AccessToken)
	case ModeAPIKey:
		return s.Placement.attach(req, c.Fields)
	case ModeCookie:
		attachCookies(req, s.CookieDomains, c.Cookies)
	}
	return nil
}

func (p Placement) attach(req *http.Request, fields map[string]string) error {
	fill := func(what, tmpl string) (string, error) {
		v, err := fillTemplate(tmpl, fields)
		if err != nil {
			return "", fmt.Errorf("credential: apikey %s: %w: %w", what, err, failure.ErrNotConnected)
		}
		return v, nil
	}
	switch p.In {
	case InHeader:
		v, err := fill("header "+p.Name, p.Value)
		if err != nil {
			return err
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("credential: apikey header %s: value contains characters not allowed in a header", p.Name)
		}
		req.Header.Set(p.Name, v)
	case InQuery:
		v, err := fill("query parameter "+p.Name, p.Value)
		if err != nil {
			return err
		}
		param := url.QueryEscape(p.Name) + "=" + url.QueryEscape(v)
		if req.URL.RawQuery == "" {
			req.URL.RawQuery = param
		} else {
			req.URL.RawQuery += "&" + param
		}
	case InBasic:
		user, err := fill("basic username", p.Username)
		if err != nil {
			return err
		}
		pass, err := fill("basic password", p.Password)
		if err != nil {
			return err
		}
		if strings.Contains(user, ":") {
			return errors.New("credential: apikey basic username contains ':', which basic auth cannot carry")
		}
		req.SetBasicAuth(user, pass)
	}
	return nil
}

// Bind pairs the scheme with one user's credential. The result has the
// Strip and Apply(*http.Request) methods the egress client expects of an
// injector.
func (s Scheme) Bind(c *Credential) Binding { return Binding{Scheme: s, Credential: c} }

// Binding is a Scheme bound to one Credential.
type Binding struct {
	Scheme     Scheme
	Credential *Credential
}

// Strip removes credential-bearing headers and parameters (Scheme.Strip).
func (b Binding) Strip(req *http.Request) { b.Scheme.Strip(req) }

// Apply strips and attaches the bound credential (Scheme.Apply).
func (b Binding) Apply(req *http.Request) error { return b.Scheme.Apply(req, b.Credential) }

// SchemeOf returns the scheme a manifest's auth block declares: how the
// plugin host and the proxy attach the integration's credential.
func SchemeOf(a *manifest.Auth) Scheme {
	s := Scheme{Mode: a.Mode}
	if a.APIKey != nil {
		p := a.APIKey.Placement
		s.Placement = Placement{In: p.In, Name: p.Name, Value: p.Value, Username: p.Username, Password: p.Password}
	}
	if a.Cookie != nil {
		s.CookieDomains = a.Cookie.Domains
	}
	return s
}
