package hostguard

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Options configure Middleware.
type Options struct {
	// App are the hosts every route answers on. Required.
	App *Hosts
	// Jots, when set, is a host of its own for jots: requests naming it
	// reach only paths under JotsPrefix. It is checked before App, so it
	// may be a loopback name.
	Jots *Hosts
	// JotsPrefix is the path prefix of the jots routes, such as "/j/".
	JotsPrefix string
	// Open are paths any host reaches (health probes by address).
	Open []string
	// Logger hears of refusals; nil discards.
	Logger *slog.Logger
}

// Middleware refuses with 403 a request whose Host is neither an App nor
// the Jots host, and with 404 a request to the Jots host outside
// JotsPrefix. Paths in Open pass whatever their host.
func Middleware(opts Options) fiber.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(c *fiber.Ctx) error {
		path := c.Path()
		if slices.Contains(opts.Open, path) {
			return c.Next()
		}
		host := string(c.Request().Host())
		switch {
		case opts.Jots != nil && opts.Jots.Admits(host):
			if strings.HasPrefix(path, opts.JotsPrefix) {
				return c.Next()
			}
			return refuse(c, http.StatusNotFound, "this host serves jots only, under "+opts.JotsPrefix)
		case opts.App.Admits(host):
			return c.Next()
		}
		why := "Host " + quote(host) + " is not this server"
		logger.Warn("refused a request", "reason", why, "remote", c.Context().RemoteAddr().String())
		return refuse(c, http.StatusForbidden, "Forbidden: "+why)
	}
}

func refuse(c *fiber.Ctx, status int, msg string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(status).SendString(msg + "\n")
}
