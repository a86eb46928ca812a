package fiberfix

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestBoundBodies(t *testing.T) {
	const limit = 1000
	app := fiber.New(fiber.Config{DisableStartupMessage: true, StreamRequestBody: true, BodyLimit: limit})
	app.Use(BoundBodies(limit, "/stream/"))
	app.Post("/bounded", func(c *fiber.Ctx) error {
		return c.SendString(fmt.Sprint(len(c.Body())))
	})
	app.Post("/stream/*", func(c *fiber.Ctx) error {
		n, err := io.Copy(io.Discard, c.Context().RequestBodyStream())
		if err != nil {
			return err
		}
		return c.SendString(fmt.Sprint(n))
	})
	base := "http://" + listen(t, app)
	// chunked hides a body's length, so the client sends it chunked.
	chunked := func(n int) io.Reader { return io.MultiReader(bytes.NewReader(make([]byte, n))) }
	declared := func(n int) io.Reader { return bytes.NewReader(make([]byte, n)) }
	tests := []struct {
		name     string
		path     string
		body     io.Reader
		status   int
		wantBody string // the byte count the handler saw
	}{
		{"declared within the limit", "/bounded", declared(limit), 200, "1000"},
		{"chunked within the limit", "/bounded", chunked(limit), 200, "1000"},
		{"declared over the limit", "/bounded", declared(limit + 1), 413, ""},
		{"chunked over the limit", "/bounded", chunked(3 * limit), 413, ""},
		{"streamed route, declared", "/stream/x", declared(5 * limit), 200, "5000"},
		{"streamed route, chunked", "/stream/x", chunked(5 * limit), 200, "5000"},
		{"a route beside a streamed prefix", "/streamed", chunked(3 * limit), 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(base+tt.path, "application/octet-stream", tt.body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tt.status)
			}
			if tt.status == 413 && !strings.Contains(string(b), "1000") {
				t.Errorf("refusal %q does not name the limit", b)
			}
			if tt.wantBody != "" && string(b) != tt.wantBody {
				t.Errorf("the handler saw %s bytes, want %s", b, tt.wantBody)
			}
		})
	}
}
