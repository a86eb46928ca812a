package hostguard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/hostguard"
)

func TestHosts_Check(t *testing.T) {
	app, err := hostguard.App("https://WB.example.com:8443/base")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host, origin string
		want               string // a fragment of the refusal; "" admits
	}{
		{"public host", "wb.example.com", "", ""},
		{"public host, port and case", "WB.Example.com:9999", "", ""},
		{"loopback", "127.0.0.1:8420", "", ""},
		{"other loopback address", "127.0.0.2:8420", "", ""},
		{"ipv6 loopback", "[::1]:8420", "", ""},
		{"localhost", "localhost:8420", "", ""},
		{"public origin", "127.0.0.1", "https://wb.example.com", ""},
		{"rebinding host", "evil.example:8420", "", `Host "evil.example:8420" is not this server`},
		{"empty host", "", "", `Host "" is not this server`},
		{"lookalike host", "wb.example.com.evil.example", "", "is not this server"},
		{"foreign origin", "127.0.0.1", "https://evil.example", `Origin "https://evil.example" may not call`},
		{"null origin", "127.0.0.1", "null", "may not call"},
		{"scheme-less origin", "127.0.0.1", "wb.example.com", "may not call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := app.Check(tt.host, tt.origin)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Check(%q, %q) = %q, want %q", tt.host, tt.origin, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "wb.example.com", "ftp://wb.example.com", "http://"} {
		if _, err := hostguard.App(bad); err == nil {
			t.Errorf("App(%q) accepted", bad)
		}
	}
}

// TestMiddleware_Serve reproduces DNS rebinding against the routes outside
// /mcp (sign-in, OAuth registration, jots): a page whose name re-resolves
// to the server sends its own Host and is refused on every route but the
// probes; the jots host reaches jots only.
func TestMiddleware_Serve(t *testing.T) {
	appHosts, err := hostguard.App("http://127.0.0.1:8420")
	if err != nil {
		t.Fatal(err)
	}
	jotsHosts, err := hostguard.Only("http://localhost:8420")
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Use(hostguard.Middleware(hostguard.Options{App: appHosts, Jots: jotsHosts, JotsPrefix: "/j/", Open: []string{"/healthz", "/readyz"}}))
	app.All("/*", func(c *fiber.Ctx) error { return c.SendString("served") })
	tests := []struct {
		name, host, path string
		want             int
		body             string
	}{
		{"app host", "127.0.0.1:8420", "/login", 200, "served"},
		{"app host jots", "127.0.0.1:8420", "/j/site/", 200, "served"},
		{"other loopback address", "127.0.0.3:8420", "/oauth/register", 200, "served"},
		{"rebinding sign-in", "evil.example:8420", "/login", 403, `Host "evil.example:8420" is not this server`},
		{"rebinding oauth registration", "evil.example", "/oauth/register", 403, "is not this server"},
		{"rebinding jots", "evil.example", "/j/site/", 403, "is not this server"},
		{"rebinding mcp", "evil.example", "/mcp", 403, "is not this server"},
		{"probe by any host", "10.1.2.3:8420", "/healthz", 200, "served"},
		{"readiness by any host", "evil.example", "/readyz", 200, "served"},
		{"probe lookalike", "evil.example", "/healthz/x", 403, "is not this server"},
		{"jots host jots", "localhost:8420", "/j/site/index.html", 200, "served"},
		{"jots host sign-in", "localhost:8420", "/login", 404, "serves jots only"},
		{"jots host api", "LOCALHOST", "/api/whoami", 404, "serves jots only"},
		{"jots host probe", "localhost", "/healthz", 200, "served"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.path, nil)
			req.Host = tt.host
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.body) {
				t.Errorf("%s %s = %d %q, want %d %q", tt.host, tt.path, resp.StatusCode, body, tt.want, tt.body)
			}
		})
	}
}
