package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/workbench-dev/workbench/failure"
)

type fixedHealth PluginHealth

func (h fixedHealth) PluginHealth() PluginHealth { return PluginHealth(h) }

func newTestApp(t *testing.T, health PluginHealth, logs *bytes.Buffer) *fiber.App {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: ErrorHandler(logger)})
	api := Register(app, Deps{Health: fixedHealth(health), Ready: &readiness{}, Callers: testCallers{}})
	api.User.Post("/echo", func(c *fiber.Ctx) error { return c.JSON(CallerOf(c)) })
	api.Admin.Get("/ping", func(c *fiber.Ctx) error { return c.SendString("pong") })
	app.Get("/teapot", func(*fiber.Ctx) error {
		return &Error{Status: http.StatusTeapot, Code: "TEAPOT", Message: "short and stout"}
	})
	app.Get("/boom", func(*fiber.Ctx) error { return errors.New("database password is hunter2") })
	app.Get("/fiber-conflict", func(*fiber.Ctx) error { return fiber.NewError(http.StatusConflict, "already there") })
	return app
}

func do(t *testing.T, app *fiber.App, method, path string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest(method, path, nil), 5000)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, body
}

func TestRegister_Healthz(t *testing.T) {
	tests := []struct {
		name   string
		health PluginHealth
		want   string
	}{
		{"loading", PluginHealth{Loading: true}, `{"status":"ok","plugins":{"loading":true,"loaded":0,"failed":0}}`},
		{"loaded", PluginHealth{Loaded: 3, Failed: 1}, `{"status":"ok","plugins":{"loading":false,"loaded":3,"failed":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newTestApp(t, tt.health, new(bytes.Buffer))
			status, header, body := do(t, app, http.MethodGet, "/healthz")
			if status != http.StatusOK {
				t.Fatalf("status = %d, want 200", status)
			}
			if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if string(body) != tt.want {
				t.Errorf("body = %s, want %s", body, tt.want)
			}
		})
	}
}

func TestErrorHandler(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		path        string
		wantStatus  int
		wantCode    failure.Code
		wantMessage string
		wantLogged  bool
	}{
		{"unknown route", http.MethodGet, "/nope/<b>", 404, "NOT_FOUND", "no route for GET /nope/<b>", false},
		{"wrong method", http.MethodPost, "/healthz", 405, "METHOD_NOT_ALLOWED", "method POST is not allowed for /healthz", false},
		{"handler error", http.MethodGet, "/teapot", 418, "TEAPOT", "short and stout", false},
		{"fiber error", http.MethodGet, "/fiber-conflict", 409, "CONFLICT", "already there", false},
		{"unexpected error", http.MethodGet, "/boom", 500, "INTERNAL_SERVER_ERROR", "internal server error", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := new(bytes.Buffer)
			app := newTestApp(t, PluginHealth{}, logs)
			status, header, body := do(t, app, tt.method, tt.path)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			var got errorBody
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("body %s is not an error object: %v", body, err)
			}
			if got.Error.Code != tt.wantCode || got.Error.Message != tt.wantMessage {
				t.Errorf("error = %+v, want code %q message %q", got.Error, tt.wantCode, tt.wantMessage)
			}
			if strings.Contains(string(body), "hunter2") {
				t.Errorf("body leaks the internal error: %s", body)
			}
			if logged := strings.Contains(logs.String(), "hunter2"); logged != tt.wantLogged {
				t.Errorf("internal error logged = %v, want %v (logs: %s)", logged, tt.wantLogged, logs)
			}
		})
	}
}

func TestCodeForStatus(t *testing.T) {
	tests := []struct {
		status int
		want   failure.Code
	}{
		{400, "BAD_REQUEST"},
		{401, "UNAUTHORIZED"},
		{413, "REQUEST_ENTITY_TOO_LARGE"},
		{503, "SERVICE_UNAVAILABLE"},
		{599, "HTTP_599"},
	}
	for _, tt := range tests {
		if got := codeForStatus(tt.status); got != tt.want {
			t.Errorf("codeForStatus(%d) = %q, want %q", tt.status, got, tt.want)
		}
	}
}

// readiness fails with err when set.
type readiness struct{ err error }

func (r *readiness) Readiness(context.Context) error { return r.err }

// testCallers knows the API token "tok-alice" (a user), "tok-root" (an
// admin) and the session cookie "sess-alice" with CSRF secret "csrf-1".
type testCallers struct{}

var (
	alice = Caller{UserID: "usr_alice", TenantID: "ten_default", Email: "alice@example.com"}
	root  = Caller{UserID: "usr_root", TenantID: "ten_default", Email: "root@example.com", Admin: true}
)

func (testCallers) Bearer(_ context.Context, token string) (Caller, error) {
	switch token {
	case "tok-alice":
		return alice, nil
	case "tok-root":
		return root, nil
	case "tok-broken":
		return Caller{}, errors.New("store is down: password hunter2")
	}
	return Caller{}, fmt.Errorf("unknown token: %w", failure.ErrUnauthenticated)
}

func (testCallers) Session(_ context.Context, cookie string) (Caller, string, error) {
	if cookie == "sess-alice" {
		return alice, "csrf-1", nil
	}
	return Caller{}, "", fmt.Errorf("unknown session: %w", failure.ErrUnauthenticated)
}

func (testCallers) SessionCookie() string { return "wb_session" }

func TestRegister_API(t *testing.T) {
	app := newTestApp(t, PluginHealth{}, new(bytes.Buffer))
	tests := []struct {
		name       string
		method     string
		path       string
		headers    map[string]string
		wantStatus int
		wantCode   failure.Code
		wantBody   string
	}{
		{"no credential", "GET", "/api/whoami", nil, 401, failure.Unauthenticated, ""},
		{"unknown token", "GET", "/api/whoami", map[string]string{"Authorization": "Bearer nope"}, 401, failure.Unauthenticated, ""},
		{"not bearer", "GET", "/api/whoami", map[string]string{"Authorization": "Basic eDp5"}, 401, failure.Unauthenticated, ""},
		{"token", "GET", "/api/whoami", map[string]string{"Authorization": "Bearer tok-alice"}, 200, "", `"userId":"usr_alice"`},
		{"store failure is a 500 without detail", "GET", "/api/whoami", map[string]string{"Authorization": "Bearer tok-broken"}, 500, "INTERNAL_SERVER_ERROR", ""},
		{"session read", "GET", "/api/whoami", map[string]string{"Cookie": "wb_session=sess-alice"}, 200, "", `"email":"alice@example.com"`},
		{"session write without CSRF", "POST", "/api/echo", map[string]string{"Cookie": "wb_session=sess-alice"}, 403, failure.CSRFMismatch, ""},
		{"session write with a wrong CSRF", "POST", "/api/echo", map[string]string{"Cookie": "wb_session=sess-alice", CSRFHeader: "csrf-2"}, 403, failure.CSRFMismatch, ""},
		{"session write with CSRF", "POST", "/api/echo", map[string]string{"Cookie": "wb_session=sess-alice", CSRFHeader: "csrf-1"}, 200, "", `"userId":"usr_alice"`},
		{"token write needs no CSRF", "POST", "/api/echo", map[string]string{"Authorization": "Bearer tok-alice"}, 200, "", `"userId":"usr_alice"`},
		{"unknown session", "GET", "/api/whoami", map[string]string{"Cookie": "wb_session=stolen"}, 401, failure.Unauthenticated, ""},
		{"admin route, user", "GET", "/api/admin/ping", map[string]string{"Authorization": "Bearer tok-alice"}, 403, failure.Forbidden, ""},
		{"admin route, admin", "GET", "/api/admin/ping", map[string]string{"Authorization": "Bearer tok-root"}, 200, "", "pong"},
		{"admin route, no credential", "GET", "/api/admin/ping", nil, 401, failure.Unauthenticated, ""},
		{"unknown route, signed in", "GET", "/api/nope", map[string]string{"Authorization": "Bearer tok-alice"}, 404, "NOT_FOUND", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := app.Test(req, 5000)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantCode != "" {
				var got errorBody
				if err := json.Unmarshal(body, &got); err != nil || got.Error.Code != tt.wantCode || got.Error.Message == "" {
					t.Fatalf("body %s, want code %s", body, tt.wantCode)
				}
				if strings.Contains(string(body), "hunter2") {
					t.Fatalf("body leaks the cause: %s", body)
				}
			}
			if !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("body %s lacks %s", body, tt.wantBody)
			}
			if tt.wantStatus == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestRegister_Readyz(t *testing.T) {
	logs := new(bytes.Buffer)
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: ErrorHandler(slog.New(slog.NewTextHandler(logs, nil)))})
	ready := &readiness{}
	Register(app, Deps{Health: fixedHealth{}, Ready: ready, Callers: testCallers{}})
	if status, _, body := do(t, app, "GET", "/readyz"); status != 200 || string(body) != `{"status":"ready"}` {
		t.Fatalf("ready: %d %s", status, body)
	}
	ready.err = errors.New("plugins are still loading")
	if status, _, body := do(t, app, "GET", "/readyz"); status != 503 || string(body) != `{"status":"not ready","reason":"plugins are still loading"}` {
		t.Fatalf("not ready: %d %s", status, body)
	}
}
