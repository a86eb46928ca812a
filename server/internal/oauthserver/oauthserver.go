package oauthserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/clientaddr"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Lifetimes of what the server issues.
const (
	CodeTTL    = 5 * time.Minute
	AccessTTL  = time.Hour
	RefreshTTL = 30 * 24 * time.Hour
)

// requestTimeout bounds one request's store work.
const requestTimeout = 15 * time.Second

// maxRegistrationBody caps a registration request.
const maxRegistrationBody = 64 << 10

// Bounds on the clients outsiders can make the server keep. Each redirect
// URI list is capped by store.MaxRedirectURIs and store.MaxRedirectURILen.
const (
	// DefaultMaxClients is the default of Options.MaxClients.
	DefaultMaxClients = 10_000
	// UngrantedClientTTL is how long a client that was never issued an
	// access token is kept: the sweep deletes it after that (unless it
	// holds a code it has not exchanged yet).
	UngrantedClientTTL = 24 * time.Hour
	// fullRetryAfter is what a registration refused by MaxClients is told
	// to wait: about one sweep.
	fullRetryAfter = time.Hour
)

// registerPolicy lets one client address register 10 clients; the tenth
// starts a wait of an hour, after which the address starts over (an hour
// without a registration starts it over too).
var registerPolicy = store.AttemptPolicy{Free: 10, Wait: time.Hour, MaxWait: time.Hour, Forget: time.Hour}

// documentFetchPolicy lets one client address make the server fetch 20
// client ID metadata documents (cache hits are free), then wait an hour, as
// registerPolicy does.
var documentFetchPolicy = store.AttemptPolicy{Free: 20, Wait: time.Hour, MaxWait: time.Hour, Forget: time.Hour}

// Store is the part of the store the authorization server works on: its
// clients and credentials, the portal's sessions (for consent) and the
// attempt counter.
type Store interface {
	User(ctx context.Context, userID string) (store.User, error)
	SessionByHash(ctx context.Context, idHash string) (store.Session, error)
	CreateOAuthClient(ctx context.Context, c store.NewOAuthClient) (store.OAuthClient, error)
	OAuthClient(ctx context.Context, id string) (store.OAuthClient, error)
	PutOAuthClientDocument(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error)
	CountOAuthClients(ctx context.Context) (int, error)
	DeleteUngrantedOAuthClients(ctx context.Context, cutoff time.Time) (int, error)
	CreateOAuthToken(ctx context.Context, t store.NewOAuthToken) (store.OAuthToken, error)
	OAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error)
	ConsumeOAuthToken(ctx context.Context, kind store.OAuthTokenKind, hash string) (store.OAuthToken, error)
	PruneOAuthTokens(ctx context.Context) (int, error)
	store.AttemptStore
}

// Options configure a Server. Store and PublicURL are required.
type Options struct {
	Store Store
	// PublicURL is SERVER_PUBLIC_URL; the issuer, and PublicURL+"/mcp" the
	// one resource.
	PublicURL string
	// SessionCookie names the portal's session cookie (its value's SHA-256
	// is the session's IDHash).
	SessionCookie string
	// AllowLoopbackDocuments (EGRESS_ALLOW_PRIVATE, development and tests
	// only) lets a client_id be an http URL on a loopback IP literal. Client
	// ID metadata documents are otherwise fetched over https from public
	// addresses only.
	AllowLoopbackDocuments bool
	// Resolver resolves the hosts of client ID metadata documents; nil
	// means the system resolver.
	Resolver egress.Resolver
	// ClientAddr finds the client address that registrations and document
	// fetches are counted by (TRUSTED_PROXIES); the zero Resolver uses the
	// connection's peer.
	ClientAddr clientaddr.Resolver
	// MaxClients caps the OAuth clients kept, registered or described by
	// a metadata document; 0 means DefaultMaxClients. Past it registration
	// is refused until the sweep deletes clients that were never granted.
	MaxClients int
	// SweepInterval is how often Run prunes; 0 means an hour.
	SweepInterval time.Duration
	// Now is the clock; nil means time.Now. It should be the store's clock.
	Now func() time.Time
	// Logger reports failures behind 500 answers and why client ID
	// metadata documents could not be fetched; nil discards.
	Logger *slog.Logger
}

// Server serves the OAuth endpoints. It is safe for concurrent use.
type Server struct {
	store      Store
	issuer     string
	resource   string
	cookie     string
	docs       *clientDocuments
	addr       clientaddr.Resolver
	maxClients int
	interval   time.Duration
	now        func() time.Time
	logger     *slog.Logger
	consent    *template.Template
}

// New returns a Server for o.
func New(o Options) (*Server, error) {
	if o.Store == nil || o.SessionCookie == "" {
		return nil, errors.New("oauthserver: Options need a Store and a SessionCookie")
	}
	u, err := url.Parse(o.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("oauthserver: public URL %q is not an absolute http(s) URL", o.PublicURL)
	}
	issuer := strings.TrimRight(o.PublicURL, "/")
	s := &Server{store: o.Store, issuer: issuer, resource: issuer + "/mcp", cookie: o.SessionCookie, addr: o.ClientAddr,
		maxClients: o.MaxClients, interval: o.SweepInterval, now: o.Now, logger: o.Logger, consent: template.Must(template.New("consent").Parse(consentPage))}
	if s.interval <= 0 {
		s.interval = time.Hour
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.maxClients <= 0 {
		s.maxClients = DefaultMaxClients
	}
	s.docs = newClientDocuments(o.AllowLoopbackDocuments, o.Resolver, s.now, s.logger)
	return s, nil
}

// Resource returns the protected resource's identifier, PublicURL+"/mcp".
func (s *Server) Resource() string { return s.resource }

// Mount adds the metadata documents and the OAuth endpoints to r.
func (s *Server) Mount(r fiber.Router) {
	r.Get("/.well-known/oauth-protected-resource", s.protectedResource)
	r.Get("/.well-known/oauth-protected-resource/mcp", s.protectedResource)
	r.Get("/.well-known/oauth-authorization-server", s.authorizationServer)
	r.Post("/oauth/register", s.register)
	r.Get("/oauth/authorize", s.authorize)
	r.Post("/oauth/authorize", s.approve)
	r.Post("/oauth/token", s.token)
}

// Authenticate returns the live access token behind bearer, which must have
// been issued for this server's resource. Its Scope lists what it was
// granted (see ScopesOf).
func (s *Server) Authenticate(ctx context.Context, bearer string) (store.OAuthToken, error) {
	t, err := s.store.OAuthToken(ctx, store.OAuthAccess, secrets.HashToken(bearer))
	if errors.Is(err, store.ErrNotFound) {
		return store.OAuthToken{}, fmt.Errorf("%w: %w", failure.ErrUnauthenticated, err)
	}
	if err != nil {
		return store.OAuthToken{}, err
	}
	if t.Resource != s.resource {
		return store.OAuthToken{}, fmt.Errorf("%w: issued for %q", failure.ErrUnauthenticated, t.Resource)
	}
	return t, nil
}

// ScopesOf returns the scopes of an access token as a list.
func ScopesOf(t store.OAuthToken) []string { return strings.Fields(t.Scope) }

// Run prunes expired codes and tokens and deletes clients never granted
// within UngrantedClientTTL, every SweepInterval until ctx ends. Run it in
// one goroutine owned by the server.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweep(ctx)
	}
}

// sweep runs one round of Run. Expired codes go first, so that a
// client whose only code expired unused is deleted in the same round.
func (s *Server) sweep(ctx context.Context) {
	_, err1 := s.store.PruneOAuthTokens(ctx)
	n, err2 := s.store.DeleteUngrantedOAuthClients(ctx, s.now().Add(-UngrantedClientTTL))
	if n > 0 {
		s.docs.forgetAll() // a cached document must mean a stored client
	}
	if err := errors.Join(err1, err2); err != nil && ctx.Err() == nil {
		s.logger.Warn("sweeping OAuth tokens and clients", "err", err)
	}
}

func (s *Server) protectedResource(c *fiber.Ctx) error {
	return c.JSON(map[string]any{
		"resource":                 s.resource,
		"authorization_servers":    []string{s.issuer},
		"scopes_supported":         RequiredScopes(),
		"bearer_methods_supported": []string{"header"},
	})
}

func (s *Server) authorizationServer(c *fiber.Ctx) error {
	return c.JSON(map[string]any{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + "/oauth/authorize",
		"token_endpoint":                                 s.issuer + "/oauth/token",
		"registration_endpoint":                          s.issuer + "/oauth/register",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"scopes_supported":                               supportedScopes,
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

// oauthError answers an RFC 6749 error.
func oauthError(c *fiber.Ctx, status int, code, description string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).JSON(map[string]string{"error": code, "error_description": description})
}

// refusal is an OAuth error answer decided before the request's work is
// done; retryAfter, when set, is sent as Retry-After.
type refusal struct {
	status      int
	code        string
	description string
	retryAfter  time.Duration
}

func (r *refusal) Error() string { return r.code + ": " + r.description }

// tooMany returns the 429 refusal of a request that must wait: description
// names the bound.
func tooMany(description string, wait time.Duration) *refusal {
	return &refusal{status: http.StatusTooManyRequests, code: "temporarily_unavailable", retryAfter: wait,
		description: fmt.Sprintf("%s; try again in %d seconds", description, retryAfterSeconds(wait))}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least one.
func retryAfterSeconds(wait time.Duration) int { return max(1, int(math.Ceil(wait.Seconds()))) }

// refuse answers a *refusal in err, or 500 for any other error.
func (s *Server) refuse(c *fiber.Ctx, err error) error {
	var r *refusal
	if !errors.As(err, &r) {
		return s.internalError(c, err)
	}
	if r.retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retryAfterSeconds(r.retryAfter)))
	}
	return oauthError(c, r.status, r.code, r.description)
}

// take counts one attempt against key under p and returns a 429 refusal
// naming bound when it must wait first.
func (s *Server) take(ctx context.Context, key string, p store.AttemptPolicy, bound string) error {
	wait, err := s.store.TakeAttempt(ctx, key, p)
	if err != nil {
		return err
	}
	if wait > 0 {
		return tooMany(bound, wait)
	}
	return nil
}

// internalError logs err and answers 500 server_error.
func (s *Server) internalError(c *fiber.Ctx, err error) error {
	s.logger.Error("oauth request failed", "path", c.Path(), "err", err)
	return oauthError(c, http.StatusInternalServerError, "server_error", "the request could not be completed; try again later")
}

// registration is the part of an RFC 7591 request Workbench reads.
type registration struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// CheckRedirectURI accepts an https URL, or an http URL on a loopback
// address (RFC 8252), without a fragment, of at most
// store.MaxRedirectURILen bytes.
func CheckRedirectURI(raw string) error {
	if len(raw) > store.MaxRedirectURILen {
		return fmt.Errorf("a redirect URI of %d bytes is longer than the cap of %d bytes", len(raw), store.MaxRedirectURILen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("redirect URI %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI %q has a fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("redirect URI %q: http is allowed only on a loopback address", raw)
	}
	return fmt.Errorf("redirect URI %q: the scheme must be https (or http on loopback)", raw)
}

func (s *Server) register(c *fiber.Ctx) error {
	body := c.Body()
	if len(body) > maxRegistrationBody {
		return oauthError(c, http.StatusRequestEntityTooLarge, "invalid_client_metadata", "the registration request is too large")
	}
	var r registration
	if err := json.Unmarshal(body, &r); err != nil {
		return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON client registration")
	}
	if r.TokenEndpointAuthMethod != "" && r.TokenEndpointAuthMethod != "none" {
		return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", "only public clients (token_endpoint_auth_method none) may register")
	}
	for _, g := range r.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("grant type %q is not supported", g))
		}
	}
	for _, rt := range r.ResponseTypes {
		if rt != "code" {
			return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("response type %q is not supported", rt))
		}
	}
	if len(r.RedirectURIs) == 0 || len(r.RedirectURIs) > store.MaxRedirectURIs {
		return oauthError(c, http.StatusBadRequest, "invalid_redirect_uri",
			fmt.Sprintf("give 1 to %d redirect_uris, not %d", store.MaxRedirectURIs, len(r.RedirectURIs)))
	}
	for _, u := range r.RedirectURIs {
		if err := CheckRedirectURI(u); err != nil {
			return oauthError(c, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
		}
	}
	if r.ClientName == "" {
		r.ClientName = "Unnamed MCP client"
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
	defer cancel()
	if err := s.admitRegistration(ctx, s.addr.Key(c)); err != nil {
		return s.refuse(c, err)
	}
	cl, err := s.store.CreateOAuthClient(ctx, store.NewOAuthClient{Name: r.ClientName, RedirectURIs: r.RedirectURIs})
	if errors.Is(err, store.ErrInvalid) {
		return oauthError(c, http.StatusBadRequest, "invalid_client_metadata", strings.TrimPrefix(err.Error(), "invalid argument: "))
	}
	if err != nil {
		return s.internalError(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(map[string]any{
		"client_id":                  cl.ID,
		"client_id_issued_at":        cl.CreatedAt.Unix(),
		"client_name":                cl.Name,
		"redirect_uris":              cl.RedirectURIs,
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	})
}

// admitRegistration counts a registration from the client address addr
// and checks the total of clients; past either bound it returns a 429
// refusal naming the bound.
func (s *Server) admitRegistration(ctx context.Context, addr string) error {
	bound := fmt.Sprintf("too many client registrations from your address (at most %d an hour)", registerPolicy.Free)
	if err := s.take(ctx, "oauth:register:"+addr, registerPolicy, bound); err != nil {
		return err
	}
	n, err := s.store.CountOAuthClients(ctx)
	if err != nil {
		return err
	}
	if n >= s.maxClients {
		return tooMany(fmt.Sprintf("the server holds its maximum of %d OAuth clients; clients never granted are deleted after %s",
			s.maxClients, UngrantedClientTTL), fullRetryAfter)
	}
	return nil
}

// challengeOf returns the S256 PKCE challenge of a verifier.
func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validVerifier reports whether v is an RFC 7636 code verifier.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// newSecret returns a random credential and its hash.
func newSecret() (raw, hash string) {
	raw = store.NewState()
	return raw, secrets.HashToken(raw)
}

func sameString(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
