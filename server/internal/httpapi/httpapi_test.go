package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

type fixedHealth PluginHealth

func (h fixedHealth) PluginHealth() PluginHealth { return PluginHealth(h) }

func newTestApp(t *testing.T, health PluginHealth, logs *bytes.Buffer) *fiber.App {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: ErrorHandler(logger)})
	Register(app, Deps{Health: fixedHealth(health)})
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
		wantCode    string
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
		want   string
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
