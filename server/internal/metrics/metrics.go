package metrics

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Route is where Mount serves the metrics.
const Route = "/metrics"

// Catalog is where the plugin counters come from.
type Catalog interface{ Current() *registry.Snapshot }

// Options configure Metrics. Catalog is required.
type Options struct {
	Catalog Catalog
	// Token, when set, must come as "Authorization: Bearer <Token>" with
	// every scrape (METRICS_TOKEN); empty leaves /metrics open.
	Token string
}

// Metrics holds the server's Prometheus registry.
type Metrics struct {
	token    string
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// New registers the plugin collector, the HTTP metrics and the Go and
// process collectors.
func New(opts Options) *Metrics {
	m := &Metrics{
		token:    opts.Token,
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_http_requests_total",
			Help: "HTTP requests by route pattern, method and status class.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workbench_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request (for streams, until the handler returned), by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
	}
	m.registry.MustRegister(m.requests, m.duration, pluginCollector{opts.Catalog},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// methods maps the methods counted by name to their label; any other
// method counts as OTHER. The label is this map's constant, never the
// request's own string, which fasthttp reuses for the next request.
var methods = map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH", "DELETE": "DELETE", "OPTIONS": "OPTIONS"}

// Middleware counts every request by the pattern of the route that answered
// it, never by its URL; a request no route takes (Fiber's own 404 or 405,
// which a handler may also return) counts as "unmatched". It answers errors
// through the app's error handler first, to count their final status.
func (m *Metrics) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		route := c.Route().Path
		if err != nil {
			var fe *fiber.Error
			if errors.As(err, &fe) && (fe.Code == http.StatusNotFound || fe.Code == http.StatusMethodNotAllowed) {
				route = "unmatched"
			}
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(http.StatusInternalServerError)
			}
		}
		method, ok := methods[c.Method()]
		if !ok {
			method = "OTHER"
		}
		status := strconv.Itoa(c.Response().StatusCode()/100) + "xx"
		m.requests.WithLabelValues(route, method, status).Inc()
		m.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		return nil
	}
}

// Mount serves the metrics at Route.
func (m *Metrics) Mount(app *fiber.App) {
	app.Get(Route, func(c *fiber.Ctx) error {
		if m.token != "" && subtle.ConstantTimeCompare([]byte(c.Get(fiber.HeaderAuthorization)), []byte("Bearer "+m.token)) != 1 {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="metrics"`)
			return &httpapi.Error{Status: http.StatusUnauthorized, Code: failure.Unauthenticated, Message: "send METRICS_TOKEN as Authorization: Bearer <token>"}
		}
		families, err := m.registry.Gather()
		if err != nil {
			return err
		}
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		c.Set(fiber.HeaderContentType, string(format))
		c.Set(fiber.HeaderCacheControl, "no-store")
		enc := expfmt.NewEncoder(c.Response().BodyWriter(), format)
		for _, f := range families {
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
		return nil
	})
}
