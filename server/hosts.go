package server

import (
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/hostguard"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/jots"
)

// hostGuard returns the middleware that refuses requests naming a host
// other than SERVER_PUBLIC_URL's, loopback or JOTS_PUBLIC_URL's (which
// reaches jots only), on every route but the probes: DNS rebinding cannot
// reach the portal, /oauth or /j/ either.
func hostGuard(cfg Config, logger *slog.Logger) (fiber.Handler, error) {
	app, err := hostguard.App(cfg.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("SERVER_PUBLIC_URL: %w", err)
	}
	opts := hostguard.Options{App: app, JotsPrefix: jots.RoutePrefix, Open: []string{httpapi.HealthPath, httpapi.ReadyPath}, Logger: logger}
	if cfg.JotsPublicURL != "" {
		if opts.Jots, err = hostguard.Only(cfg.JotsPublicURL); err != nil {
			return nil, fmt.Errorf("JOTS_PUBLIC_URL: %w", err)
		}
	}
	return hostguard.Middleware(opts), nil
}
