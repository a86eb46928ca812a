package fiberfix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// listen serves app on 127.0.0.1 until the test ends and returns its address.
func listen(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return ln.Addr().String()
}

// serve runs a Fiber app with h bridged at /h and returns its address.
func serve(t *testing.T, base context.Context, h http.Handler) string {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All("/h", Bridge(base, h, 10*time.Millisecond))
	return listen(t, app)
}

func TestBridge_ClientGoesAway(t *testing.T) {
	causes := make(chan error, 1)
	started := make(chan struct{})
	addr := serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
			causes <- context.Cause(r.Context())
		case <-time.After(10 * time.Second):
			causes <- errors.New("the handler's context outlived its client")
		}
	}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /h HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n\r\n{}", addr)
	<-started
	start := time.Now()
	conn.Close()
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrPeerGone) {
			t.Fatalf("cause = %v, want ErrPeerGone", cause)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("noticed the disconnect after %v", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("handler never returned")
	}
}

func TestBridge_StreamsAndEnds(t *testing.T) {
	ended := make(chan error, 1)
	ctxs := make(chan context.Context, 1)
	release := make(chan struct{})
	addr := serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctxs <- r.Context()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "data: second\n\n")
	}))
	resp, err := http.Get("http://" + addr + "/h")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event %q, %v: the response did not stream", line, err)
	}
	close(release)
	rest, err := io.ReadAll(r)
	if err != nil || !strings.Contains(string(rest), "data: second") {
		t.Fatalf("rest %q, %v", rest, err)
	}
	handlerCtx := <-ctxs
	go func() {
		select {
		case <-handlerCtx.Done():
			ended <- context.Cause(handlerCtx)
		case <-time.After(5 * time.Second):
			ended <- errors.New("context live after the handler returned")
		}
	}()
	if cause := <-ended; !errors.Is(cause, context.Canceled) || errors.Is(cause, ErrPeerGone) {
		t.Errorf("cause after the handler returned = %v, want context.Canceled", cause)
	}
}

func TestBridge_BaseEnds(t *testing.T) {
	base, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	addr := serve(t, base, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
		close(done)
		w.WriteHeader(http.StatusNoContent)
	}))
	resp, err := http.Get("http://" + addr + "/h")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ending the base context did not end the request's")
	}
}

func TestBridge_KeepAlive(t *testing.T) {
	// Several requests on one connection each get their own context, and a
	// finished request's watch does not end the next one's.
	addr := serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			http.Error(w, "ended early", http.StatusInternalServerError)
		case <-time.After(30 * time.Millisecond):
			fmt.Fprint(w, "ok")
		}
	}))
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for i := range 3 {
		resp, err := client.Get("http://" + addr + "/h")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Errorf("request %d: %s", i, b)
		}
	}
}

// TestPlainAdaptor_NeverCancels measures why the bridge exists: through
// Fiber's usual route (fasthttpadaptor), a handler's context stays live
// after its client has gone. If fasthttp ever starts canceling it, this
// test fails and the bridge can be reconsidered.
func TestPlainAdaptor_NeverCancels(t *testing.T) {
	started := make(chan struct{})
	result := make(chan error, 1)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All("/h", func(c *fiber.Ctx) error {
		fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			select {
			case <-r.Context().Done():
				result <- context.Cause(r.Context())
			case <-time.After(time.Second):
				result <- nil
			}
		}))(c.Context())
		return nil
	})
	conn, err := net.Dial("tcp", listen(t, app))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /h HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	<-started
	conn.Close()
	if cause := <-result; cause != nil {
		t.Errorf("fasthttp canceled the request context on disconnect (%v); the bridge may no longer be needed", cause)
	}
}
