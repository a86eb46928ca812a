package fiberfix

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// bridgeKey is the fasthttp user value that carries a request's watch from
// the Fiber handler into the net/http handler.
type bridgeKey struct{}

// bridged is one request's watch, handed through the adaptor.
type bridged struct {
	ctx     context.Context
	stop    context.CancelFunc
	entered atomic.Bool
}

// Bridge returns a Fiber handler that serves h. The context h sees is
// derived from base, ends with cause ErrPeerGone when the client
// disconnects (checked every interval; <= 0 means DefaultInterval), and
// ends when h returns.
func Bridge(base context.Context, h http.Handler, interval time.Duration) fiber.Handler {
	adapted := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := r.Context().Value(bridgeKey{}).(*bridged)
		if b == nil {
			http.Error(w, "request was not bridged", http.StatusInternalServerError)
			return
		}
		b.entered.Store(true)
		defer b.stop()
		h.ServeHTTP(w, r.WithContext(b.ctx))
	}))
	return func(c *fiber.Ctx) error {
		fctx := c.Context()
		ctx, stop := watchConn(base, fctx.Conn(), interval)
		b := &bridged{ctx: ctx, stop: stop}
		fctx.SetUserValue(bridgeKey{}, b)
		adapted(fctx)
		// When the adaptor could not build the request, h never ran and
		// nothing else stops the watch.
		if !b.entered.Load() {
			stop()
		}
		return nil
	}
}
