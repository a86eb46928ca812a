package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// PluginHealth is the plugin part of /healthz.
type PluginHealth struct {
	Loading bool `json:"loading"` // plugins are still being compiled
	Loaded  int  `json:"loaded"`  // integrations in the registry
	Failed  int  `json:"failed"`  // plugins that failed to load
}

// HealthSource reports the state /healthz shows. It must answer without
// waiting for plugins to load.
type HealthSource interface {
	PluginHealth() PluginHealth
}

// Readiness tells /readyz whether the server can serve: plugins loaded and
// the store reachable.
type Readiness interface {
	Readiness(ctx context.Context) error
}

// Deps are the services the routes use.
type Deps struct {
	Health  HealthSource
	Ready   Readiness
	Callers Callers
}

type healthBody struct {
	Status  string       `json:"status"`
	Plugins PluginHealth `json:"plugins"`
}

// The probe paths: any host may reach them, so that load balancers and
// orchestrators can probe by address.
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
)

// Register adds /healthz, /readyz and /api to app and returns where
// services add /api routes. The app should use ErrorHandler so that unknown
// routes and handler errors answer in JSON.
func Register(app *fiber.App, deps Deps) API {
	app.Get(HealthPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(healthBody{Status: "ok", Plugins: deps.Health.PluginHealth()})
	})
	app.Get(ReadyPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
		defer cancel()
		if err := deps.Ready.Readiness(ctx); err != nil {
			return c.Status(http.StatusServiceUnavailable).JSON(readyBody{Status: "not ready", Reason: err.Error()})
		}
		return c.JSON(readyBody{Status: "ready"})
	})
	return mountAPI(app, deps.Callers)
}

// readyTimeout bounds the store check of /readyz.
const readyTimeout = 2 * time.Second

type readyBody struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}
