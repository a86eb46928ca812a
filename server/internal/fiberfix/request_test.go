package fiberfix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

var errUserContextEnded = errors.New("the user context ended")

// requestEnd is one way a request's context can end.
type requestEnd struct {
	conn       net.Conn                // the client's connection
	cancelUser context.CancelCauseFunc // ends the context set by middleware
	stop       context.CancelFunc      // RequestContext's stop
}

func TestRequestContext(t *testing.T) {
	tests := []struct {
		name string
		end  func(requestEnd)
		want error // nil: the context must stay live
	}{
		{"client goes away", func(e requestEnd) { e.conn.Close() }, ErrPeerGone},
		{"client resets", func(e requestEnd) { e.conn.(*net.TCPConn).SetLinger(0); e.conn.Close() }, ErrPeerGone},
		{"user context ends", func(e requestEnd) { e.cancelUser(errUserContextEnded) }, errUserContextEnded},
		{"stopped", func(e requestEnd) { e.stop() }, context.Canceled},
		{"client waits", func(requestEnd) {}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			userCtx, cancelUser := context.WithCancelCause(context.Background())
			defer cancelUser(nil)
			stops := make(chan context.CancelFunc, 1)
			causes := make(chan error, 1)
			app := fiber.New(fiber.Config{DisableStartupMessage: true})
			app.Use(func(c *fiber.Ctx) error {
				c.SetUserContext(userCtx)
				return c.Next()
			})
			app.Get("/h", func(c *fiber.Ctx) error {
				ctx, stop := RequestContext(c)
				defer stop()
				stops <- stop
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
				case <-time.After(time.Second):
					causes <- nil
				}
				return nil
			})
			conn, err := net.Dial("tcp", listen(t, app))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprint(conn, "GET /h HTTP/1.1\r\nHost: x\r\n\r\n")
			tt.end(requestEnd{conn: conn, cancelUser: cancelUser, stop: <-stops})
			cause := <-causes
			if tt.want == nil && cause != nil {
				t.Fatalf("the context ended (%v) while the client was still there", cause)
			}
			if !errors.Is(cause, tt.want) {
				t.Errorf("cause = %v, want %v (within 1s)", cause, tt.want)
			}
		})
	}
}

// stalledBody is a response body that sends a first part, then stalls
// until its context ends, as a slow upstream does; Close stops the watch.
type stalledBody struct {
	ctx    context.Context
	stop   context.CancelFunc
	sent   bool
	causes chan<- error
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "first part\n"), nil
	}
	select {
	case <-b.ctx.Done():
		b.causes <- context.Cause(b.ctx)
		return 0, b.ctx.Err()
	case <-time.After(5 * time.Second):
		b.causes <- nil
		return 0, io.EOF
	}
}

func (b *stalledBody) Close() error {
	b.stop()
	return nil
}

// TestRequestContext_StreamedResponse checks that a context kept past the
// handler, for a response streamed after it returns, still ends when the
// client goes away.
func TestRequestContext_StreamedResponse(t *testing.T) {
	causes := make(chan error, 1)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/h", func(c *fiber.Ctx) error {
		ctx, stop := RequestContext(c)
		c.Context().SetBodyStream(&stalledBody{ctx: ctx, stop: stop, causes: causes}, -1)
		return nil
	})
	addr := listen(t, app)
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Get("http://" + addr + "/h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // unread: the transport closes the connection
	start := time.Now()
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrPeerGone) || time.Since(start) > time.Second {
			t.Errorf("the stream's context ended with %v after %v, want ErrPeerGone within 1s", cause, time.Since(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream never ended")
	}
}
