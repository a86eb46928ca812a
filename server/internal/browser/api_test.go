package browser

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
)

// TestManager_Reset: a reset is refused while the browser starts or a call
// holds it, and otherwise kills the browser and deletes the profile.
func TestManager_Reset(t *testing.T) {
	dir := t.TempDir()
	m, err := NewManager(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	spawn, spawning, closing := make(chan struct{}), make(chan string, 1), make(chan struct{})
	close(closing)
	closed := fakeLaunch(m, map[string]chan struct{}{"bob": spawn}, spawning, closing)
	ctx := testContext(t)
	profile := func(user string) string {
		t.Helper()
		p := filepath.Join(dir, user)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "Cookies"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := func(p string) {
		t.Helper()
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("profile %s survived the reset: %v", p, err)
		}
	}

	// No browser: the profile goes.
	p := profile("carol")
	if err := m.Reset(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	gone(p)

	// Starting: busy.
	bobDone := acquireAsync(ctx, m, "bob")
	<-spawning
	wantCode(t, m.Reset(ctx, "bob"), failure.BrowserSessionBusy, "starting")
	close(spawn)
	if err := <-bobDone; err != nil {
		t.Fatal(err)
	}

	// Held by a call: busy; idle: reset.
	p = profile("alice")
	_, release, err := m.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.Reset(ctx, "alice"), failure.BrowserSessionBusy, "a call is using your browser")
	release()
	if err := m.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	gone(p)
	if closed() != 1 || m.alive() != 1 {
		t.Fatalf("after the reset: %d closed, %d alive; want alice's closed and bob's alive", closed(), m.alive())
	}
	wantCode(t, m.Reset(ctx, "../etc"), failure.InvalidArguments, "user ID")
}

// callers authenticates "Bearer <user>" as that user.
type callers struct{}

func (callers) Bearer(_ context.Context, token string) (httpapi.Caller, error) {
	return httpapi.Caller{UserID: token}, nil
}

func (callers) Session(context.Context, string) (httpapi.Caller, string, error) {
	return httpapi.Caller{}, "", failure.ErrUnauthenticated
}

func (callers) SessionCookie() string { return "session" }

type healthy struct{}

func (healthy) PluginHealth() httpapi.PluginHealth { return httpapi.PluginHealth{} }
func (healthy) Readiness(context.Context) error    { return nil }

// TestManager_Mount: POST /api/browser-session/reset answers 200, 409
// BROWSER_SESSION_BUSY while the caller's browser is in use, and 400 for a
// caller whose ID cannot name a profile.
func TestManager_Mount(t *testing.T) {
	m, err := NewManager(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	closing := make(chan struct{})
	close(closing)
	fakeLaunch(m, nil, nil, closing)
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(slog.New(slog.DiscardHandler))})
	m.Mount(httpapi.Register(app, httpapi.Deps{Health: healthy{}, Ready: healthy{}, Callers: callers{}}).User)
	_, release, err := m.Acquire(testContext(t), "held")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tests := []struct {
		user   string
		status int
		code   failure.Code
	}{
		{"alice", http.StatusOK, ""},
		{"held", http.StatusConflict, failure.BrowserSessionBusy},
		{"bad.user", http.StatusBadRequest, failure.InvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/api"+ResetRoute, nil)
			req.Header.Set("Authorization", "Bearer "+tt.user)
			resp, err := app.Test(req, int((10 * time.Second).Milliseconds()))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tt.status)
			}
			var out struct {
				Reset bool `json:"reset"`
				Error struct {
					Code failure.Code `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if out.Error.Code != tt.code || out.Reset != (tt.code == "") {
				t.Fatalf("body %s, want code %q", body, tt.code)
			}
		})
	}
}
