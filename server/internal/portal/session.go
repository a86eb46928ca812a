package portal

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/accounts"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Cookie names. Over https they carry the __Host- prefix, which browsers
// accept only from a secure origin, for path /, without a domain.
const (
	sessionCookie = "wb_session"
	loginCookie   = "wb_login" // the CSRF token of the sign-in forms
)

// loginCookieTTL is how long a sign-in form stays usable.
const loginCookieTTL = time.Hour

// maxNextLen caps the page a sign-in returns to.
const maxNextLen = 2048

// cookieName returns the name a cookie has under this portal's scheme.
func (p *Portal) cookieName(name string) string {
	if p.secure {
		return "__Host-" + name
	}
	return name
}

// SessionCookieName returns the name of the portal's session cookie (its
// value's SHA-256 is the session's IDHash): "wb_session", with the __Host-
// prefix when the portal is served over https.
func (p *Portal) SessionCookieName() string { return p.cookieName(sessionCookie) }

// setCookie sets an HttpOnly, SameSite=Lax cookie for path /; a negative
// maxAge deletes it.
func (p *Portal) setCookie(c *fiber.Ctx, name, value string, maxAge time.Duration) {
	ck := &fiber.Cookie{Name: p.cookieName(name), Value: value, Path: "/", HTTPOnly: true, Secure: p.secure, SameSite: fiber.CookieSameSiteLaxMode}
	if maxAge < 0 {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(maxAge / time.Second)
	}
	c.Cookie(ck)
}

// randomToken returns 32 random bytes in base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// sameSecret compares a submitted token with the expected one in constant
// time; an empty expected value never matches.
func sameSecret(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// loadSession reads the session cookie into r. An unknown or expired
// session counts as signed out, and its cookie is deleted.
func (p *Portal) loadSession(c *fiber.Ctx, r *request) error {
	raw := c.Cookies(p.cookieName(sessionCookie))
	if raw == "" {
		return nil
	}
	s, u, err := p.Session(r.ctx, raw)
	if errors.Is(err, store.ErrNotFound) {
		p.setCookie(c, sessionCookie, "", -1)
		return nil
	}
	if err != nil {
		return err
	}
	r.session, r.user = &s, &u
	return nil
}

// Session returns the unexpired session a session cookie's value names and
// its user. An unknown, malformed or expired session, or one whose user is
// gone, wraps store.ErrNotFound. The JSON API signs portal users in with it.
func (p *Portal) Session(ctx context.Context, raw string) (store.Session, store.User, error) {
	if raw == "" || len(raw) > 128 {
		return store.Session{}, store.User{}, fmt.Errorf("portal: malformed session cookie: %w", store.ErrNotFound)
	}
	s, err := p.store.SessionByHash(ctx, secrets.HashToken(raw))
	if err != nil {
		return store.Session{}, store.User{}, err
	}
	u, err := p.store.User(ctx, s.UserID)
	if err != nil {
		return store.Session{}, store.User{}, err
	}
	return s, u, nil
}

// startSession signs the browser in as u: it ends the browser's previous
// session, stores a new one and sets its cookie.
func (p *Portal) startSession(c *fiber.Ctx, r *request, u store.User) error {
	if r.session != nil {
		if err := p.store.DeleteSession(r.ctx, r.session.IDHash); err != nil {
			return err
		}
	}
	raw := randomToken()
	_, err := p.store.CreateSession(r.ctx, store.Session{IDHash: secrets.HashToken(raw), UserID: u.ID,
		CSRFSecret: randomToken(), ExpiresAt: p.now().Add(p.sessionTTL)})
	if err != nil {
		return err
	}
	p.setCookie(c, sessionCookie, raw, p.sessionTTL)
	p.setCookie(c, loginCookie, "", -1)
	return nil
}

// loginToken returns the sign-in forms' CSRF token, setting its cookie when
// the browser has none.
func (p *Portal) loginToken(c *fiber.Ctx) string {
	if t := c.Cookies(p.cookieName(loginCookie)); len(t) == 43 {
		return strings.Clone(t)
	}
	t := randomToken()
	p.setCookie(c, loginCookie, t, loginCookieTTL)
	return t
}

// checkLoginToken refuses a sign-in form whose token does not match its
// cookie.
func (p *Portal) checkLoginToken(c *fiber.Ctx) error {
	if !sameSecret(c.FormValue("csrf"), c.Cookies(p.cookieName(loginCookie))) {
		return failPage(http.StatusForbidden, "Form expired", "This sign-in form is out of date or did not come from Workbench. Reload the page and try again.")
	}
	return nil
}

// safeNext returns next when it is a path on this server other than the
// sign-in pages, else the integrations page, so a sign-in never redirects
// elsewhere or in a loop.
func safeNext(next string) string {
	if next == "" || len(next) > maxNextLen || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.HasPrefix(next, "/login") || strings.ContainsAny(next, "\\\x00\r\n\t") {
		return "/integrations"
	}
	return next
}

type loginPage struct {
	base
	Next, Email, Error string
}

// home sends the browser to its integrations or to sign-in.
func (p *Portal) home(c *fiber.Ctx, r *request) error {
	if r.user != nil {
		return redirect(c, "/integrations")
	}
	return redirect(c, "/login")
}

// loginForm shows the sign-in form.
func (p *Portal) loginForm(c *fiber.Ctx, r *request) error {
	next := safeNext(c.Query("next"))
	if r.user != nil {
		return redirect(c, next)
	}
	data := loginPage{base: p.base(r, "Sign in", ""), Next: next}
	data.CSRF = p.loginToken(c)
	data.Notice = notice(c)
	return p.render(c, http.StatusOK, "login", data)
}

// login checks an email and password and starts a session.
func (p *Portal) login(c *fiber.Ctx, r *request) error {
	if err := p.checkLoginToken(c); err != nil {
		return err
	}
	email, password, next := formValue(c, "email"), formValue(c, "password"), safeNext(formValue(c, "next"))
	u, err := p.signIn.Login(r.ctx, p.clientAddr.Key(c), store.DefaultTenant, email, password)
	if errors.Is(err, failure.ErrUnauthenticated) {
		data := loginPage{base: p.base(r, "Sign in", ""), Next: next, Email: email, Error: "Wrong email or password."}
		data.CSRF = p.loginToken(c)
		return p.render(c, http.StatusUnauthorized, "login", data)
	}
	if err != nil {
		return signInRefusal(err)
	}
	if err := p.startSession(c, r, u); err != nil {
		return err
	}
	return redirect(c, next)
}

// signInRefusal turns a throttled or busy password check into its page:
// 429 or 503 with Retry-After, answered before any password work.
func signInRefusal(err error) error {
	var throttled *accounts.ThrottledError
	switch {
	case errors.As(err, &throttled):
		return &pageError{status: http.StatusTooManyRequests, heading: "Too many attempts", retryAfter: throttled.Wait,
			message: fmt.Sprintf("Too many sign-in attempts from this %s. Try again in %v.", throttled.Scope, throttled.Wait.Round(time.Second))}
	case errors.Is(err, secrets.ErrBusy):
		return &pageError{status: http.StatusServiceUnavailable, heading: "Busy", retryAfter: secrets.BusyRetryAfter,
			message: "The server is checking too many passwords right now. Try again in a moment."}
	}
	return err
}

type oncePage struct {
	base
	Token string
}

// onceForm shows the button that spends a one-time sign-in link. Spending
// it takes a POST, so link previews and scanners that fetch the URL do not
// use it up.
func (p *Portal) onceForm(c *fiber.Ctx, r *request) error {
	data := oncePage{base: p.base(r, "Sign in", ""), Token: strings.Clone(c.Params("token"))}
	data.CSRF = p.loginToken(c)
	return p.render(c, http.StatusOK, "once", data)
}

// onceLogin spends a one-time sign-in link and starts a session.
func (p *Portal) onceLogin(c *fiber.Ctx, r *request) error {
	if err := p.checkLoginToken(c); err != nil {
		return err
	}
	u, err := accounts.UseLoginLink(r.ctx, p.store, c.Params("token"))
	switch {
	case errors.Is(err, accounts.ErrLinkExpired):
		return failPage(http.StatusGone, "Link expired", "This sign-in link has expired. Ask an operator for a new one (workbench user login-link).")
	case errors.Is(err, failure.ErrUnauthenticated):
		return failPage(http.StatusBadRequest, "Link not valid", "This sign-in link is not valid or was already used. Ask an operator for a new one (workbench user login-link).")
	case err != nil:
		return err
	}
	if err := p.startSession(c, r, u); err != nil {
		return err
	}
	return redirect(c, "/account?notice=signed-in-once")
}

// logout ends the session.
func (p *Portal) logout(c *fiber.Ctx, r *request) error {
	if err := p.store.DeleteSession(r.ctx, r.session.IDHash); err != nil {
		return err
	}
	p.setCookie(c, sessionCookie, "", -1)
	return redirect(c, "/login?notice=signed-out")
}
