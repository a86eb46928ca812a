package connect

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/connections"
)

// CallbackPath is where providers send the user back, followed by the
// integration name: <SERVER_PUBLIC_URL>/oauth/callback/<integration>.
const CallbackPath = "/oauth/callback/"

// Limits on what a provider sends back.
const (
	maxTokenResponse   = 1 << 20 // bytes of a token endpoint response
	maxProviderMessage = 300     // characters of a provider's error text kept
	maxExpiresIn       = 10 * 365 * 24 * time.Hour
)

// Catalog looks up the manifests of the loaded integrations.
type Catalog interface {
	// Manifest returns the manifest of a loaded integration.
	Manifest(integration string) (*manifest.Manifest, bool)
}

// ProviderOptions configure Providers.
type ProviderOptions struct {
	// Catalog finds an integration's OAuth endpoints and scopes.
	Catalog Catalog
	// PublicURL is SERVER_PUBLIC_URL, without a trailing slash; callbacks
	// are under it.
	PublicURL string
	// Getenv reads <NAME>_CLIENT_ID, <NAME>_CLIENT_SECRET and the endpoint
	// overrides; nil means os.Getenv.
	Getenv func(string) string
	// AllowPrivate (EGRESS_ALLOW_PRIVATE) lets endpoint overrides use http
	// on a loopback host and lets the client reach loopback addresses; for
	// development and tests only.
	AllowPrivate bool
	// Client talks to providers; nil means NewProviderClient(AllowPrivate).
	Client *http.Client
	// Now is the clock that turns expires_in into an expiry; nil means
	// time.Now.
	Now func() time.Time
}

// Providers talks to the OAuth providers of oauth2 integrations: it builds
// authorization URLs, exchanges codes and refreshes tokens. It is safe for
// concurrent use.
type Providers struct {
	catalog      Catalog
	publicURL    string
	getenv       func(string) string
	allowPrivate bool
	client       *http.Client
	now          func() time.Time
}

var _ connections.Refresher = (*Providers)(nil)

// NewProviders returns Providers for o.
func NewProviders(o ProviderOptions) *Providers {
	p := &Providers{catalog: o.Catalog, publicURL: strings.TrimRight(o.PublicURL, "/"), getenv: o.Getenv,
		allowPrivate: o.AllowPrivate, client: o.Client, now: o.Now}
	if p.getenv == nil {
		p.getenv = os.Getenv
	}
	if p.client == nil {
		p.client = NewProviderClient(o.AllowPrivate)
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// provider is one integration's OAuth client configuration, manifest and
// operator overrides merged.
type provider struct {
	integration  string
	clientID     string
	clientSecret string
	authorizeURL *url.URL
	tokenURL     *url.URL
	refreshURL   *url.URL
	scopes       []string
	basicAuth    bool // client authentication with HTTP Basic; else in the form body
}

// provider returns the OAuth configuration of an integration, or an error
// wrapping failure.ErrUnknownIntegration or failure.ErrNotConfigured.
func (p *Providers) provider(integration string) (*provider, error) {
	m, ok := p.catalog.Manifest(integration)
	if !ok {
		return nil, fmt.Errorf("connect: %w: %q is not loaded", failure.ErrUnknownIntegration, integration)
	}
	if m.Auth.Mode != manifest.ModeOAuth2 || m.Auth.OAuth2 == nil {
		return nil, fmt.Errorf("connect: %w: %s uses auth mode %q, not oauth2", failure.ErrNotConfigured, integration, m.Auth.Mode)
	}
	prefix := manifest.EnvPrefix(integration)
	o := m.Auth.OAuth2
	pr := &provider{
		integration:  integration,
		clientID:     strings.TrimSpace(p.getenv(prefix + "_CLIENT_ID")),
		clientSecret: strings.TrimSpace(p.getenv(prefix + "_CLIENT_SECRET")),
		scopes:       o.Scopes,
		basicAuth:    o.TokenAuth == "basic",
	}
	if pr.clientID == "" {
		return nil, fmt.Errorf("connect: %w: %s has no OAuth client on this server; the operator sets %s_CLIENT_ID and %s_CLIENT_SECRET",
			failure.ErrNotConfigured, integration, prefix, prefix)
	}
	var err error
	if pr.authorizeURL, err = p.endpoint(prefix+"_OAUTH_AUTHORIZE_URL", o.AuthorizeURL); err != nil {
		return nil, err
	}
	if pr.tokenURL, err = p.endpoint(prefix+"_OAUTH_TOKEN_URL", o.TokenURL); err != nil {
		return nil, err
	}
	if pr.refreshURL, err = p.endpoint(prefix+"_OAUTH_REFRESH_URL", o.RefreshURL); err != nil {
		return nil, err
	}
	if pr.refreshURL == nil {
		pr.refreshURL = pr.tokenURL
	}
	return pr, nil
}

// endpoint returns the override in the environment variable env, or the
// manifest's URL. Only an override may use http, and only on a loopback
// host when private egress is allowed. An empty manifest URL without an
// override is nil.
func (p *Providers) endpoint(env, declared string) (*url.URL, error) {
	raw, source := declared, "the manifest"
	if v := strings.TrimSpace(p.getenv(env)); v != "" {
		raw, source = v, env
	}
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("connect: %w: %s: %q is not an absolute URL without credentials or fragment", failure.ErrNotConfigured, source, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && source == env && p.allowPrivate && isLoopbackHost(u.Hostname()):
	default:
		return nil, fmt.Errorf("connect: %w: %s: %q must be https (http only for a loopback host with EGRESS_ALLOW_PRIVATE=1)", failure.ErrNotConfigured, source, raw)
	}
	return u, nil
}

// redirectURI is the callback URL registered with the provider.
func (p *Providers) redirectURI(integration string) string {
	return p.publicURL + CallbackPath + integration
}

// authorizeURL returns the URL that starts the authorization-code flow for
// the given state and PKCE verifier.
func (p *Providers) authorizeURL(integration, state, verifier string) (string, error) {
	pr, err := p.provider(integration)
	if err != nil {
		return "", err
	}
	u := *pr.authorizeURL
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", pr.clientID)
	q.Set("redirect_uri", p.redirectURI(integration))
	if len(pr.scopes) > 0 {
		q.Set("scope", strings.Join(pr.scopes, " "))
	}
	q.Set("state", state)
	q.Set("code_challenge", pkceChallenge(verifier))
	q.Set("code_challenge_method", "S256")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// exchange trades an authorization code for tokens.
func (p *Providers) exchange(ctx context.Context, integration, code, verifier string) (connections.Token, error) {
	pr, err := p.provider(integration)
	if err != nil {
		return connections.Token{}, err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.redirectURI(integration)},
		"code_verifier": {verifier},
	}
	tok, err := p.tokenRequest(ctx, pr, pr.tokenURL, form)
	if err != nil {
		return connections.Token{}, fmt.Errorf("connect: exchanging the %s authorization code: %w", integration, err)
	}
	return tok, nil
}

// Refresh implements connections.Refresher with the refresh-token grant. A
// provider's invalid_grant answer wraps connections.ErrRefreshRejected with
// the provider's description.
func (p *Providers) Refresh(ctx context.Context, _, integration, refreshToken string) (connections.Token, error) {
	pr, err := p.provider(integration)
	if err != nil {
		return connections.Token{}, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	tok, err := p.tokenRequest(ctx, pr, pr.refreshURL, form)
	var perr *ProviderError
	if errors.As(err, &perr) && perr.Code == "invalid_grant" {
		return connections.Token{}, fmt.Errorf("%w: %s", connections.ErrRefreshRejected, perr.Error())
	}
	if err != nil {
		return connections.Token{}, fmt.Errorf("connect: refreshing the %s token: %w", integration, err)
	}
	return tok, nil
}

// ProviderError is an OAuth error a provider answered with (RFC 6749
// section 5.2), or a malformed answer. Its text is the provider's, trimmed
// and stripped of control characters; it never holds a token.
type ProviderError struct {
	Status      int    // the HTTP status
	Code        string // the OAuth error code, such as invalid_grant; empty for a malformed answer
	Description string
}

func (e *ProviderError) Error() string {
	switch {
	case e.Code != "" && e.Description != "":
		return fmt.Sprintf("the provider answered %s: %s", e.Code, e.Description)
	case e.Code != "":
		return "the provider answered " + e.Code
	default:
		return fmt.Sprintf("the provider answered HTTP %d: %s", e.Status, e.Description)
	}
}

// tokenResponse is a token endpoint's answer, success or error.
type tokenResponse struct {
	AccessToken      string          `json:"access_token"`
	TokenType        string          `json:"token_type"`
	ExpiresIn        json.RawMessage `json:"expires_in"`
	RefreshToken     string          `json:"refresh_token"`
	Error            string          `json:"error"`
	ErrorDescription string          `json:"error_description"`
}

// tokenRequest posts a grant to a token endpoint with the provider's client
// authentication and reads the tokens.
func (p *Providers) tokenRequest(ctx context.Context, pr *provider, endpoint *url.URL, form url.Values) (connections.Token, error) {
	if pr.basicAuth {
		// RFC 6749 section 2.3.1: the id and secret are form-encoded first.
		req, err := newTokenPost(ctx, endpoint, form)
		if err != nil {
			return connections.Token{}, err
		}
		req.SetBasicAuth(url.QueryEscape(pr.clientID), url.QueryEscape(pr.clientSecret))
		return p.send(req)
	}
	form.Set("client_id", pr.clientID)
	if pr.clientSecret != "" {
		form.Set("client_secret", pr.clientSecret)
	}
	req, err := newTokenPost(ctx, endpoint, form)
	if err != nil {
		return connections.Token{}, err
	}
	return p.send(req)
}

func newTokenPost(ctx context.Context, endpoint *url.URL, form url.Values) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("building the token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// send performs a token request and parses the answer.
func (p *Providers) send(req *http.Request) (connections.Token, error) {
	resp, err := p.client.Do(req)
	if err != nil {
		return connections.Token{}, fmt.Errorf("reaching the token endpoint %s: %w", req.URL.Redacted(), scrubURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return connections.Token{}, fmt.Errorf("reading the token endpoint's answer: %w", err)
	}
	if len(body) > maxTokenResponse {
		return connections.Token{}, &ProviderError{Status: resp.StatusCode, Description: fmt.Sprintf("answer larger than %d bytes", maxTokenResponse)}
	}
	tr, perr := parseTokenResponse(resp, body)
	if perr != nil {
		return connections.Token{}, perr
	}
	if tr.Error != "" {
		return connections.Token{}, &ProviderError{Status: resp.StatusCode, Code: cleanText(tr.Error, 64), Description: cleanText(tr.ErrorDescription, maxProviderMessage)}
	}
	if resp.StatusCode != http.StatusOK {
		return connections.Token{}, &ProviderError{Status: resp.StatusCode, Description: "no OAuth error in the answer"}
	}
	if tr.AccessToken == "" {
		return connections.Token{}, &ProviderError{Status: resp.StatusCode, Description: "the answer has no access_token"}
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return connections.Token{}, &ProviderError{Status: resp.StatusCode, Description: fmt.Sprintf("token_type %q is not bearer", cleanText(tr.TokenType, 32))}
	}
	tok := connections.Token{AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken}
	if secs, ok := expiresIn(tr.ExpiresIn); ok {
		tok.ExpiresAt = p.now().Add(secs)
	}
	return tok, nil
}

// parseTokenResponse reads a JSON answer, or a form-encoded one (some
// providers ignore Accept).
func parseTokenResponse(resp *http.Response, body []byte) (tokenResponse, error) {
	var tr tokenResponse
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "application/x-www-form-urlencoded" || mediaType == "text/plain" && !json.Valid(body) {
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return tr, &ProviderError{Status: resp.StatusCode, Description: "the answer is neither JSON nor form-encoded"}
		}
		tr = tokenResponse{AccessToken: v.Get("access_token"), TokenType: v.Get("token_type"), RefreshToken: v.Get("refresh_token"),
			Error: v.Get("error"), ErrorDescription: v.Get("error_description")}
		if e := v.Get("expires_in"); e != "" {
			tr.ExpiresIn = json.RawMessage(strconv.Quote(e))
		}
		return tr, nil
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return tr, &ProviderError{Status: resp.StatusCode, Description: "the answer is not a JSON object"}
	}
	return tr, nil
}

// expiresIn reads expires_in, a number of seconds given as a JSON number or
// string. Absent, zero, negative or absurd values mean no known expiry.
func expiresIn(raw json.RawMessage) (time.Duration, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n > maxExpiresIn.Seconds() {
		return 0, false
	}
	return time.Duration(n * float64(time.Second)), true
}

// scrubURLError drops the URL from a client error (Go puts it in
// *url.Error), keeping the cause.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// cleanText trims s to max characters and replaces control characters, so a
// provider's text is safe to store and show.
func cleanText(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// newVerifier returns a PKCE code verifier: 32 random bytes, base64url (43
// characters, RFC 7636 section 4.1).
func newVerifier() string {
	return randomString(32)
}

// pkceChallenge returns the S256 code challenge of a verifier.
func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
