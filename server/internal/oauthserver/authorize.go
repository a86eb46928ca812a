package oauthserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// consentPage asks the signed-in user to let a client use the resource.
const consentPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Allow access - Workbench</title>
<link rel="stylesheet" href="/static/portal.css"></head>
<body><main>
<h1>Allow {{.Client}} to use Workbench?</h1>
<p><strong>{{.Client}}</strong> asks to act as <strong>{{.Email}}</strong> on <code>{{.Resource}}</code>.</p>
{{if .ClientURL}}<p>The client describes itself at <code>{{.ClientURL}}</code>; its name is its own claim.</p>
{{end}}<p>It asks for:</p>
<ul>{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Meaning}}</li>
{{end}}</ul>
<p>It will be sent back to <code>{{.RedirectURI}}</code>.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf" value="{{.CSRF}}">
{{range $k, $v := .Params}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></main></body></html>
`

// authRequest is a checked authorization request.
type authRequest struct {
	client      store.OAuthClient
	redirectURI string
	challenge   string
	resource    string
	scope       string // the scope to grant, normalized
	state       string
}

// params returns the request as the consent form's hidden fields.
func (a authRequest) params() map[string]string {
	return map[string]string{"response_type": "code", "client_id": a.client.ID, "redirect_uri": a.redirectURI,
		"code_challenge": a.challenge, "code_challenge_method": "S256", "resource": a.resource, "scope": a.scope, "state": a.state}
}

// errorRedirect is an authorization error the client hears about through
// its (verified) redirect URI.
type errorRedirect struct{ code, description string }

func (e *errorRedirect) Error() string { return e.code + ": " + e.description }

// parseAuthRequest checks the request's parameters; addr is the client
// address that a document fetch is counted against. An unknown client or
// redirect URI is answered with 400 (never a redirect), a fetch past the
// limit with 429; other problems are an *errorRedirect.
func (s *Server) parseAuthRequest(ctx context.Context, addr string, get func(string) string) (authRequest, error) {
	var a authRequest
	cl, err := s.client(ctx, get("client_id"), addr)
	if err != nil {
		return a, err
	}
	a.client, a.redirectURI, a.state = cl, get("redirect_uri"), get("state")
	if !slices.Contains(cl.RedirectURIs, a.redirectURI) {
		return a, fmt.Errorf("%w: redirect_uri is not one the client registered", errBadRequest)
	}
	switch {
	case get("response_type") != "code":
		return a, &errorRedirect{"unsupported_response_type", "response_type must be code"}
	case get("code_challenge_method") != "S256":
		return a, &errorRedirect{"invalid_request", "code_challenge_method must be S256"}
	case len(get("code_challenge")) != 43:
		return a, &errorRedirect{"invalid_request", "code_challenge must be a base64url SHA-256 (43 characters)"}
	}
	a.challenge = get("code_challenge")
	a.resource = get("resource")
	if a.resource != s.resource {
		return a, &errorRedirect{"invalid_target", "resource must be " + s.resource}
	}
	if a.scope, err = grantScope(get("scope")); err != nil {
		return a, &errorRedirect{"invalid_scope", err.Error()}
	}
	return a, nil
}

// client returns the client a client_id names: a registered one, or one
// described by a client ID metadata document, which is fetched (or taken
// from the cache) and stored so that the codes and tokens issued to it can
// refer to it. A fetch counts against the client address addr (a 429
// refusal past documentFetchPolicy). Unknown clients and unusable documents
// are errBadRequest.
func (s *Server) client(ctx context.Context, id, addr string) (store.OAuthClient, error) {
	if !isDocumentClientID(id) {
		cl, err := s.store.OAuthClient(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return cl, fmt.Errorf("%w: unknown client_id", errBadRequest)
		}
		return cl, err
	}
	bound := fmt.Sprintf("too many client ID metadata document fetches from your address (at most %d an hour)", documentFetchPolicy.Free)
	cl, fresh, err := s.docs.resolve(ctx, id, func() error {
		return s.take(ctx, "oauth:clientdoc:"+addr, documentFetchPolicy, bound)
	})
	if errors.Is(err, ErrClientDocument) {
		return cl, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	if err != nil || !fresh {
		return cl, err
	}
	stored, err := s.store.PutOAuthClientDocument(ctx, cl)
	if err != nil {
		s.docs.forget(id) // a cache hit must mean a stored client
	}
	return stored, err
}

// scopeMeanings say what each scope allows, for the consent page.
var scopeMeanings = map[string]string{
	ScopeMCP:           "list, search and call the tools of your connected integrations over MCP",
	ScopeOfflineAccess: "stay signed in: renew its access without asking you again",
}

// errBadRequest marks an authorization request that cannot be redirected.
var errBadRequest = errors.New("invalid authorization request")

// session returns the signed-in portal session and its user, or nil.
func (s *Server) session(c *fiber.Ctx, ctx context.Context) (*store.Session, *store.User, error) {
	raw := c.Cookies(s.cookie)
	if raw == "" || len(raw) > 128 {
		return nil, nil, nil
	}
	sess, err := s.store.SessionByHash(ctx, secrets.HashToken(raw))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	u, err := s.store.User(ctx, sess.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &sess, &u, nil
}

// answerAuthError turns a parseAuthRequest error into a response.
func (s *Server) answerAuthError(c *fiber.Ctx, a authRequest, err error) error {
	var er *errorRedirect
	switch {
	case errors.As(err, &er):
		return s.redirectBack(c, a, url.Values{"error": {er.code}, "error_description": {er.description}})
	case errors.Is(err, errBadRequest):
		return oauthError(c, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), errBadRequest.Error()+": "))
	}
	return s.refuse(c, err)
}

// redirectBack sends the browser to the client's redirect URI with v, the
// state and the issuer (RFC 9207).
func (s *Server) redirectBack(c *fiber.Ctx, a authRequest, v url.Values) error {
	if a.state != "" {
		v.Set("state", a.state)
	}
	v.Set("iss", s.issuer)
	sep := "?"
	if strings.Contains(a.redirectURI, "?") {
		sep = "&"
	}
	return c.Redirect(a.redirectURI+sep+v.Encode(), http.StatusFound)
}

// authorize shows the consent page, sending a browser without a session to
// the portal's sign-in first.
func (s *Server) authorize(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
	defer cancel()
	setPageHeaders(c)
	a, err := s.parseAuthRequest(ctx, s.addr.Key(c), func(k string) string { return strings.Clone(c.Query(k)) })
	if err != nil {
		return s.answerAuthError(c, a, err)
	}
	sess, u, err := s.session(c, ctx)
	if err != nil {
		return s.internalError(c, err)
	}
	if sess == nil {
		return c.Redirect("/login?"+url.Values{"next": {string(c.Request().URI().RequestURI())}}.Encode(), http.StatusSeeOther)
	}
	var buf bytes.Buffer
	type scope struct{ Name, Meaning string }
	var scopes []scope
	for _, n := range strings.Fields(a.scope) {
		scopes = append(scopes, scope{n, scopeMeanings[n]})
	}
	clientURL := ""
	if isDocumentClientID(a.client.ID) {
		clientURL = a.client.ID
	}
	err = s.consent.Execute(&buf, map[string]any{"Client": a.client.Name, "ClientURL": clientURL, "Email": u.Email, "Resource": a.resource,
		"Scopes": scopes, "RedirectURI": a.redirectURI, "CSRF": sess.CSRFSecret, "Params": a.params()})
	if err != nil {
		return s.internalError(c, err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(buf.Bytes())
}

// approve handles the consent form: on allow it issues a code and sends
// the browser back to the client.
func (s *Server) approve(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
	defer cancel()
	setPageHeaders(c)
	sess, u, err := s.session(c, ctx)
	if err != nil {
		return s.internalError(c, err)
	}
	if sess == nil || !sameString(c.FormValue("csrf"), sess.CSRFSecret) {
		return oauthError(c, http.StatusForbidden, "access_denied", "the consent form is out of date or was not sent by Workbench; start again")
	}
	a, err := s.parseAuthRequest(ctx, s.addr.Key(c), func(k string) string { return strings.Clone(c.FormValue(k)) })
	if err != nil {
		return s.answerAuthError(c, a, err)
	}
	if c.FormValue("decision") != "allow" {
		return s.redirectBack(c, a, url.Values{"error": {"access_denied"}, "error_description": {"the user denied access"}})
	}
	code, hash := newSecret()
	_, err = s.store.CreateOAuthToken(ctx, store.NewOAuthToken{Kind: store.OAuthCode, Hash: hash, UserID: u.ID, ClientID: a.client.ID,
		Resource: a.resource, Family: store.NewID(store.PrefixOAuthGrant), Scope: a.scope, RedirectURI: a.redirectURI,
		CodeChallenge: a.challenge, ExpiresAt: s.now().Add(CodeTTL)})
	if err != nil {
		return s.internalError(c, err)
	}
	return s.redirectBack(c, a, url.Values{"code": {code}})
}

// setPageHeaders sets the headers of the browser-facing answers.
func setPageHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self' https: http://127.0.0.1:* http://localhost:* http://[::1]:*; frame-ancestors 'none'; base-uri 'none'")
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "no-referrer")
}
