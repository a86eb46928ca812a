package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/workbench-dev/workbench/failure"
)

// CSRFHeader carries a portal session's CSRF secret on /api writes made
// with the session cookie.
const CSRFHeader = "X-CSRF-Token"

// Caller is the user an /api request acts for.
type Caller struct {
	UserID   string `json:"userId"`
	TenantID string `json:"tenantId"`
	Email    string `json:"email"`
	Admin    bool   `json:"admin"`
}

// Callers resolves the credentials of /api requests.
type Callers interface {
	// Bearer returns the caller of an API token.
	Bearer(ctx context.Context, token string) (Caller, error)
	// Session returns the caller of a portal session cookie's value and
	// the session's CSRF secret.
	Session(ctx context.Context, cookie string) (Caller, string, error)
	// SessionCookie is the name of the portal's session cookie.
	SessionCookie() string
}

// API is where services add /api routes: User for every signed-in caller,
// Admin for admins only (under /api/admin). A handler reads its caller with
// CallerOf and answers errors by returning them (ErrorHandler turns them
// into the JSON error body).
type API struct {
	User  fiber.Router
	Admin fiber.Router
}

const callerKey = "httpapi.caller"

// CallerOf returns the caller of an /api request.
func CallerOf(c *fiber.Ctx) Caller {
	v, _ := c.Locals(callerKey).(Caller)
	return v
}

// mountAPI adds /api with its authentication: a bearer API token, or the
// portal's session cookie with the session's CSRF secret in CSRFHeader on
// every method but GET and HEAD. /api/admin needs an admin.
func mountAPI(app *fiber.App, callers Callers) API {
	user := app.Group("/api", func(c *fiber.Ctx) error {
		caller, err := authenticate(c, callers)
		if errors.Is(err, failure.ErrUnauthenticated) {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="workbench"`)
			return &Error{Status: http.StatusUnauthorized, Code: failure.Unauthenticated, Message: "sign in: send an API token as Authorization: Bearer <token>, or a portal session"}
		}
		if err != nil {
			return err
		}
		c.Locals(callerKey, caller)
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Next()
	})
	admin := user.Group("/admin", func(c *fiber.Ctx) error {
		if !CallerOf(c).Admin {
			return &Error{Status: http.StatusForbidden, Code: failure.Forbidden, Message: "this route is for admins"}
		}
		return c.Next()
	})
	user.Get("/whoami", func(c *fiber.Ctx) error { return c.JSON(CallerOf(c)) })
	return API{User: user, Admin: admin}
}

// authenticate resolves the request's bearer token or session cookie.
func authenticate(c *fiber.Ctx, callers Callers) (Caller, error) {
	if auth := c.Get(fiber.HeaderAuthorization); auth != "" {
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			return Caller{}, failure.ErrUnauthenticated
		}
		return callers.Bearer(c.UserContext(), strings.TrimSpace(token))
	}
	cookie := c.Cookies(callers.SessionCookie())
	if cookie == "" {
		return Caller{}, failure.ErrUnauthenticated
	}
	caller, csrf, err := callers.Session(c.UserContext(), cookie)
	if err != nil {
		return Caller{}, err
	}
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead &&
		(csrf == "" || subtle.ConstantTimeCompare([]byte(c.Get(CSRFHeader)), []byte(csrf)) != 1) {
		return Caller{}, &Error{Status: http.StatusForbidden, Code: failure.CSRFMismatch, Message: "a write with the session cookie needs the session's CSRF token in " + CSRFHeader}
	}
	return caller, nil
}
