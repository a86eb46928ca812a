package jots

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// cookieLifetime is how long an unlocked jot stays unlocked.
const cookieLifetime = 12 * time.Hour

// GuessPolicy limits password guesses per jot and client address: five in
// a row, then a wait of 12 s that doubles per further guess, at most 15
// minutes. A right password clears the count.
var GuessPolicy = store.AttemptPolicy{Free: 5, Wait: 12 * time.Second, MaxWait: 15 * time.Minute, Forget: time.Hour}

// cookieName is the jot's unlock cookie; jot names are cookie-safe.
func cookieName(name string) string { return "jot_" + name }

// cookieMAC signs a jot's unlock cookie expiring at exp.
func cookieMAC(j *store.Jot, exp int64) string {
	m := hmac.New(sha256.New, j.CookieKey)
	fmt.Fprintf(m, "jot-unlock\n%s\n%s\n%d", j.ID, j.Name, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// tokenMark starts the path segment that carries an unlock token.
const tokenMark = "~"

// cutToken splits "~<token>/<inner>" off a password jot's path.
func cutToken(rest string) (token, inner string, ok bool) {
	after, found := strings.CutPrefix(rest, tokenMark)
	if !found {
		return "", rest, false
	}
	token, inner, _ = strings.Cut(after, "/")
	return token, inner, true
}

// newToken returns an unlock token of the jot valid until exp:
// "<exp>.<hmac>", safe in a cookie and in a path segment.
func newToken(j *store.Jot, exp int64) string {
	return strconv.FormatInt(exp, 10) + "." + cookieMAC(j, exp)
}

// validToken reports whether v is an unexpired unlock token signed with the
// jot's current key.
func (s *Service) validToken(j *store.Jot, v string) bool {
	expStr, mac, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if err != nil || s.now().Unix() >= exp {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(cookieMAC(j, exp)))
}

// secureCookies reports whether unlock cookies can be SameSite=None;
// Secure: over https, and on loopback, which browsers treat as secure.
func (s *Service) secureCookies() bool {
	u, err := url.Parse(s.origin)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return u.Scheme == "https" || h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// unlock checks a posted password, rate limited, and on success sets the
// unlock cookie and sends the browser to the path under the jot's unlocked
// address /j/<name>/~<token>/ with a GET.
//
// Why a token in the path: the jot's documents run on an opaque origin, so
// for the browser every request they make (scripts, styles, images) is
// third-party, and Chromium sends no cookies with them, SameSite=None or
// not; top-level navigations do carry the cookie. Relative URLs in the jot
// resolve under the token segment, so its subresources carry the token.
func (s *Service) unlock(ctx context.Context, c *fiber.Ctx, st *site, rest string) error {
	j := &st.jot
	// The guess is counted before it is checked, so a burst of guesses is
	// refused past the policy instead of being checked in full.
	key := "jot:" + j.ID + ":" + s.clientAddr.Key(c)
	wait, err := s.store.TakeAttempt(ctx, key, GuessPolicy)
	if err != nil {
		s.logger.Warn("counting a jot password guess", "jot", j.Name, "err", err)
		return textResponse(c, http.StatusServiceUnavailable, "the password cannot be checked right now; try again")
	}
	if wait > 0 {
		return s.tooMany(c, j, wait)
	}
	password := string(c.Request().PostArgs().Peek("password"))
	ok := false
	if password != "" {
		ok, err = s.passwords.Verify(ctx, password, j.PasswordHash)
	}
	if errors.Is(err, secrets.ErrBusy) {
		c.Response().Header.Set("Retry-After", strconv.Itoa(int(secrets.BusyRetryAfter.Seconds())))
		return textResponse(c, http.StatusServiceUnavailable, "the server is checking too many passwords right now; try again in a moment")
	}
	if err != nil {
		s.logger.Warn("checking a jot password", "jot", j.Name, "err", err)
		return textResponse(c, http.StatusServiceUnavailable, "the password cannot be checked right now; try again")
	}
	if !ok {
		return s.passwordForm(c, j, http.StatusUnauthorized, "Wrong password.")
	}
	if err := s.store.ClearAttempts(ctx, key); err != nil {
		s.logger.Warn("clearing jot password guesses", "jot", j.Name, "err", err)
	}
	token := newToken(j, s.now().Add(cookieLifetime).Unix())
	ck := &unlockCookie{name: cookieName(j.Name), value: token, path: "/j/" + j.Name + "/",
		maxAge: int(cookieLifetime.Seconds()), secure: s.secureCookies()}
	c.Response().Header.Add("Set-Cookie", ck.String())
	c.Response().Header.Set("Location", "/j/"+j.Name+"/"+tokenMark+token+"/"+escapePath(rest))
	return textResponse(c, http.StatusSeeOther, "unlocked")
}

type unlockCookie struct {
	name, value, path string
	maxAge            int
	secure            bool
}

func (k *unlockCookie) String() string {
	attrs := fmt.Sprintf("%s=%s; Path=%s; Max-Age=%d; HttpOnly", k.name, k.value, k.path, k.maxAge)
	if k.secure {
		return attrs + "; Secure; SameSite=None"
	}
	return attrs + "; SameSite=Lax"
}

var formPage = template.Must(template.New("form").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}}: password required</title>
<style>body{font:16px system-ui,sans-serif;max-width:24rem;margin:15vh auto;padding:0 1rem;color:#1d2433}
input,button{font:inherit;padding:.5rem;margin:.25rem 0;width:100%;box-sizing:border-box}.err{color:#b42318}</style></head>
<body><h1>{{.Name}}</h1><p>This jot is protected by a password.</p>
{{if .Message}}<p class="err" id="jot-error" role="alert">{{.Message}}</p>{{end}}
<form method="post"><label for="jot-password">Password</label>
<input type="password" id="jot-password" name="password" autocomplete="current-password" required autofocus>
<button type="submit" id="jot-unlock">Open</button></form></body></html>
`))

// passwordForm answers with the password form.
func (s *Service) passwordForm(c *fiber.Ctx, j *store.Jot, status int, msg string) error {
	c.Response().Header.Set("Cache-Control", "no-store")
	c.Response().Header.SetContentType("text/html; charset=utf-8")
	c.Status(status)
	var b strings.Builder
	if err := formPage.Execute(&b, struct{ Name, Message string }{j.Name, msg}); err != nil {
		return textResponse(c, http.StatusInternalServerError, "the password form failed")
	}
	return c.SendString(b.String())
}

// tooMany answers 429 with Retry-After, in HTML for browsers and JSON
// otherwise.
func (s *Service) tooMany(c *fiber.Ctx, j *store.Jot, wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	c.Response().Header.Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("Too many wrong passwords for this jot from your address; try again in %d seconds.", secs)
	if strings.Contains(string(c.Request().Header.Peek("Accept")), "text/html") {
		return s.passwordForm(c, j, http.StatusTooManyRequests, msg)
	}
	c.Response().Header.Set("Cache-Control", "no-store")
	c.Status(http.StatusTooManyRequests)
	return c.JSON(fiber.Map{"error": fiber.Map{"code": "RATE_LIMITED", "message": msg, "retryAfterSeconds": secs}})
}
