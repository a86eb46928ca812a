package portal

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/clientaddr"
	"github.com/workbench-dev/workbench/server/internal/connect"
	"github.com/workbench-dev/workbench/server/internal/connections"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Defaults of Options.
const (
	DefaultSessionTTL    = 12 * time.Hour
	DefaultSweepInterval = time.Hour
)

// maxRenderedPage caps a rendered page; a page larger than this is a bug.
const maxRenderedPage = 4 << 20

// pageTimeout bounds one page request, the OAuth code exchange (30 s at
// most) included.
const pageTimeout = 45 * time.Second

// stylesheetPath is where the portal's one stylesheet is served.
const stylesheetPath = "/static/portal.css"

// securityHeaders returns the headers sent with every page of the portal at
// origin (the public URL's scheme and host). The pages have no script;
// styles come only from the portal's stylesheet, not from anything else on
// the origin (such as a jot's uploaded CSS under /j/); images come from this
// origin, https and data: URLs (integration logos).
func securityHeaders(origin string) map[string]string {
	return map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src " + origin + stylesheetPath +
			"; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options":       "nosniff",
		"X-Frame-Options":              "DENY",
		"Referrer-Policy":              "no-referrer",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
}

//go:embed templates/*.html static/portal.css
var files embed.FS

// Store is the part of the store the portal works on: sessions, the
// signed-in user's tokens and curl sessions, and the sweeps it runs.
type Store interface {
	accounts.Store
	CreateSession(ctx context.Context, s store.Session) (store.Session, error)
	SessionByHash(ctx context.Context, idHash string) (store.Session, error)
	DeleteSession(ctx context.Context, idHash string) error
	PruneSessions(ctx context.Context) (int, error)
	PruneLoginLinks(ctx context.Context) (int, error)
	PruneAttempts(ctx context.Context, quiet time.Duration) (int, error)
	Tokens(ctx context.Context, userID string) ([]store.Token, error)
	RevokeToken(ctx context.Context, userID, tokenID string) error
	Connections(ctx context.Context, userID string) ([]store.Connection, error)
	CurlSessions(ctx context.Context, userID string) ([]store.CurlSession, error)
	RevokeCurlSession(ctx context.Context, userID, id string) error
	ProxyCalls(ctx context.Context, f store.ProxyCallFilter) ([]store.ProxyCall, error)
}

// Catalog lists the loaded integrations.
type Catalog interface {
	// Manifests returns every loaded integration's manifest, by name.
	Manifests() []*manifest.Manifest
}

// Connections reports and removes users' stored connections;
// *connections.Service is one.
type Connections interface {
	Status(ctx context.Context, userID, integration, mode string) (connections.State, error)
	Disconnect(ctx context.Context, userID, integration string) error
}

// Connector runs connect handshakes; *connect.Service is one.
type Connector interface {
	Connect(ctx context.Context, userID, integration string) (url, connectionID string, err error)
	Handshake(ctx context.Context, userID, id string) (connect.Handshake, error)
	AuthorizeURL(ctx context.Context, userID, id, state string) (string, error)
	SubmitAPIKey(ctx context.Context, userID, id string, values map[string]string) (store.PendingConnection, error)
	CompleteOAuth(ctx context.Context, userID, integration string, cb connect.Callback) (store.PendingConnection, error)
}

// Options configure a Portal. Store, Catalog, Connections, Connector,
// SignIn and Passwords are required.
type Options struct {
	Store       Store
	Catalog     Catalog
	Connections Connections
	Connector   Connector
	// SignIn checks sign-ins (throttled); Passwords hashes new passwords.
	// Both are the process's, shared with everything else that hashes.
	SignIn    *accounts.SignIn
	Passwords *secrets.Passwords
	// ClientAddr finds the address a sign-in came from; the zero value
	// trusts no proxy.
	ClientAddr clientaddr.Resolver
	// PublicURL is SERVER_PUBLIC_URL; an https URL makes the cookies Secure.
	PublicURL string
	// SessionTTL is how long a sign-in lasts; 0 means 12 hours.
	SessionTTL time.Duration
	// SweepInterval is how often Run prunes expired sessions and
	// used sign-in links; 0 means an hour.
	SweepInterval time.Duration
	// Now is the clock of sessions and sign-in links; nil means time.Now.
	// It should be the store's clock.
	Now func() time.Time
	// Logger reports failures behind 500 pages; nil discards.
	Logger *slog.Logger
}

// Portal serves the pages. It is safe for concurrent use.
type Portal struct {
	store       Store
	catalog     Catalog
	connections Connections
	connector   Connector
	signIn      *accounts.SignIn
	passwords   *secrets.Passwords
	clientAddr  clientaddr.Resolver
	secure      bool
	sessionTTL  time.Duration
	interval    time.Duration
	now         func() time.Time
	logger      *slog.Logger
	pages       map[string]*template.Template
	css         []byte
	headers     map[string]string // securityHeaders of the public URL's origin
}

// New returns a Portal for o.
func New(o Options) (*Portal, error) {
	if o.Store == nil || o.Catalog == nil || o.Connections == nil || o.Connector == nil || o.SignIn == nil || o.Passwords == nil {
		return nil, errors.New("portal: Options need a Store, a Catalog, Connections, a Connector, a SignIn and Passwords")
	}
	u, err := url.Parse(o.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("portal: public URL: %w", err)
	}
	p := &Portal{store: o.Store, catalog: o.Catalog, connections: o.Connections, connector: o.Connector,
		signIn: o.SignIn, passwords: o.Passwords, clientAddr: o.ClientAddr,
		secure: u.Scheme == "https", headers: securityHeaders(u.Scheme + "://" + u.Host), sessionTTL: o.SessionTTL, interval: o.SweepInterval, now: o.Now, logger: o.Logger,
		pages: map[string]*template.Template{}}
	if p.sessionTTL <= 0 {
		p.sessionTTL = DefaultSessionTTL
	}
	if p.interval <= 0 {
		p.interval = DefaultSweepInterval
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	for _, name := range []string{"login", "once", "integrations", "apikey", "oauth", "result", "account", "curl", "error"} {
		t, err := template.ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("portal: template %s: %w", name, err)
		}
		p.pages[name] = t
	}
	if p.css, err = files.ReadFile(strings.TrimPrefix(stylesheetPath, "/")); err != nil {
		return nil, fmt.Errorf("portal: stylesheet: %w", err)
	}
	return p, nil
}

// Mount adds the portal's routes to r.
func (p *Portal) Mount(r fiber.Router) {
	r.Get(stylesheetPath, p.stylesheet)
	r.Get("/", p.page(p.home, anyone))
	r.Get("/login", p.page(p.loginForm, anyone))
	r.Post("/login", p.page(p.login, anyone))
	r.Get("/login/once/:token", p.page(p.onceForm, anyone))
	r.Post("/login/once/:token", p.page(p.onceLogin, anyone))
	r.Post("/logout", p.page(p.logout, signedIn))
	r.Get("/integrations", p.page(p.integrations, signedIn))
	r.Post("/integrations/:name/connect", p.page(p.startConnect, signedIn))
	r.Post("/integrations/:name/disconnect", p.page(p.disconnect, signedIn))
	r.Get(connect.ConnectPath+":id", p.page(p.handshake, signedIn))
	r.Post(connect.ConnectPath+":id", p.page(p.submitAPIKey, signedIn))
	r.Get(connect.CallbackPath+":integration", p.page(p.oauthCallback, signedIn))
	r.Get("/account", p.page(p.account, signedIn))
	r.Post("/account/tokens", p.page(p.createToken, signedIn))
	r.Post("/account/tokens/:id/revoke", p.page(p.revokeToken, signedIn))
	r.Post("/account/password", p.page(p.setPassword, signedIn))
	r.Get("/curl", p.page(p.curl, signedIn))
	r.Post("/curl/sessions/:id/revoke", p.page(p.revokeCurl, signedIn))
}

// attemptsKept is how long a quiet attempt key (sign-ins, jot passwords) is
// kept: longer than any attempt policy's Forget, after which it counts for
// nothing.
const attemptsKept = 2 * time.Hour

// Run prunes expired sessions, used or expired sign-in links and quiet
// attempt keys every SweepInterval until ctx ends. Run it in one goroutine
// owned by the server.
func (p *Portal) Run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sessions, err1 := p.store.PruneSessions(ctx)
		links, err2 := p.store.PruneLoginLinks(ctx)
		attempts, err3 := p.store.PruneAttempts(ctx, attemptsKept)
		if err := errors.Join(err1, err2, err3); err != nil && ctx.Err() == nil {
			p.logger.Warn("pruning sessions, sign-in links and attempts", "err", err)
		} else if sessions+links+attempts > 0 {
			p.logger.Debug("pruned sessions, sign-in links and attempts", "sessions", sessions, "links", links, "attempts", attempts)
		}
	}
}

// access says who may open a route.
type access int

const (
	anyone   access = iota // the session, if any, is loaded
	signedIn               // GET without a session goes to sign-in; POST needs the CSRF token
)

// request is one page request with its session.
type request struct {
	ctx     context.Context
	session *store.Session // nil when not signed in
	user    *store.User    // nil when not signed in
}

// base is what every page's template data starts with.
type base struct {
	Title  string
	Nav    string // the highlighted navigation entry
	User   *store.User
	CSRF   string
	Notice string
}

// pageError is an error answered with a page of the given status.
type pageError struct {
	status     int
	heading    string
	message    string
	retryAfter time.Duration // sent as Retry-After when set
}

func (e *pageError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.heading, e.message) }

func failPage(status int, heading, message string) *pageError {
	return &pageError{status: status, heading: heading, message: message}
}

// page wraps a handler: it sets the security headers, loads the session,
// enforces the access rule, and turns a returned error into an error page
// (a *pageError as given, anything else as a logged 500).
func (p *Portal) page(h func(c *fiber.Ctx, r *request) error, who access) fiber.Handler {
	return func(c *fiber.Ctx) error {
		for k, v := range p.headers {
			c.Set(k, v)
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		ctx, cancel := context.WithTimeout(c.UserContext(), pageTimeout)
		defer cancel()
		r := &request{ctx: ctx}
		err := p.loadSession(c, r)
		if err == nil && who == signedIn {
			err = p.requireSession(c, r)
		}
		if err == nil {
			err = h(c, r)
		}
		if err == nil || errors.Is(err, errHandled) {
			return nil
		}
		var pe *pageError
		switch {
		case errors.As(err, &pe):
		case errors.Is(err, failure.ErrUnavailable):
			p.logger.Warn("portal page: the store is unavailable", "method", c.Method(), "path", c.Path(), "err", err)
			pe = &pageError{status: http.StatusServiceUnavailable, heading: "Try again shortly", retryAfter: time.Second,
				message: "Workbench cannot reach its database right now. Try again in a moment."}
		default:
			p.logger.Error("portal page failed", "method", c.Method(), "path", c.Path(), "err", err)
			pe = failPage(http.StatusInternalServerError, "Something went wrong", "The server could not complete this request. Try again in a moment.")
		}
		if pe.retryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(pe.retryAfter.Seconds()))))
		}
		data := struct {
			base
			Heading, Message string
		}{base: p.base(r, pe.heading, ""), Heading: pe.heading, Message: pe.message}
		return p.render(c, pe.status, "error", data)
	}
}

// requireSession redirects a GET without a session to the sign-in page
// (coming back afterwards) and refuses a POST without a session or without
// the session's CSRF token.
func (p *Portal) requireSession(c *fiber.Ctx, r *request) error {
	if c.Method() == fiber.MethodGet {
		if r.session == nil {
			return redirect(c, "/login?"+url.Values{"next": {string(c.Request().URI().RequestURI())}}.Encode())
		}
		return nil
	}
	if r.session == nil {
		return failPage(http.StatusForbidden, "Signed out", "Your session has ended. Sign in again and repeat what you were doing.")
	}
	if !sameSecret(c.FormValue("csrf"), r.session.CSRFSecret) {
		return failPage(http.StatusForbidden, "Form expired", "This form is out of date or did not come from Workbench. Reload the page and try again.")
	}
	return nil
}

// errHandled is returned by a handler that already answered (a redirect), so
// page sends nothing more.
var errHandled = errors.New("portal: response already written")

func redirect(c *fiber.Ctx, location string) error {
	if err := c.Redirect(location, http.StatusSeeOther); err != nil {
		return err
	}
	return errHandled
}

// base returns the common page data.
func (p *Portal) base(r *request, title, nav string) base {
	b := base{Title: title, Nav: nav, User: r.user}
	if r.session != nil {
		b.CSRF = r.session.CSRFSecret
	}
	return b
}

// render executes a page template and sends it.
func (p *Portal) render(c *fiber.Ctx, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := p.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("portal: rendering %s: %w", name, err)
	}
	if buf.Len() > maxRenderedPage {
		return fmt.Errorf("portal: page %s is %d bytes, over the %d byte cap", name, buf.Len(), maxRenderedPage)
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(buf.Bytes())
}

// stylesheet serves the embedded CSS.
func (p *Portal) stylesheet(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "text/css; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set("X-Content-Type-Options", "nosniff")
	return c.Send(p.css)
}

// formValue returns a form field as a string the handler may keep (Fiber's
// are only valid during the request).
func formValue(c *fiber.Ctx, name string) string {
	return strings.Clone(c.FormValue(name))
}

// notices are the messages a redirect can ask a page to show, by code.
var notices = map[string]string{
	"signed-out":     "You are signed out.",
	"disconnected":   "The integration was disconnected.",
	"token-revoked":  "The token was revoked.",
	"curl-revoked":   "The curl session was revoked; its token no longer works.",
	"password-set":   "Your password was saved.",
	"signed-in-once": "You are signed in. Set a password below to sign in with your email next time.",
}

// notice returns the message the notice query parameter names.
func notice(c *fiber.Ctx) string { return notices[c.Query("notice")] }
