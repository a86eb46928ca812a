package httpapi

import "github.com/gofiber/fiber/v2"

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

// Deps are the services the routes use.
type Deps struct {
	Health HealthSource
}

type healthBody struct {
	Status  string       `json:"status"`
	Plugins PluginHealth `json:"plugins"`
}

// Register adds the routes to app. The app should use ErrorHandler so that
// unknown routes and handler errors answer in JSON.
func Register(app *fiber.App, deps Deps) {
	app.Get("/healthz", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(healthBody{Status: "ok", Plugins: deps.Health.PluginHealth()})
	})
}
