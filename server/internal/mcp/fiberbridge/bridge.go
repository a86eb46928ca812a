package fiberbridge

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/workbench-dev/workbench/server/internal/mcp/connwatch"
)

// watchKey is the fasthttp user value that carries a request's watch from
// the Fiber handler into the net/http handler.
type watchKey struct{}

type watch struct {
	ctx     context.Context
	stop    context.CancelFunc
	entered atomic.Bool
}

// Handler returns a Fiber handler that serves h. The context h sees is
// derived from base, ends with cause connwatch.ErrPeerGone when the client
// disconnects (checked every interval; <= 0 means connwatch.DefaultInterval),
// and ends when h returns.
func Handler(base context.Context, h http.Handler, interval time.Duration) fiber.Handler {
	adapted := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wt, _ := r.Context().Value(watchKey{}).(*watch)
		if wt == nil {
			http.Error(w, "request was not bridged", http.StatusInternalServerError)
			return
		}
		wt.entered.Store(true)
		defer wt.stop()
		h.ServeHTTP(w, r.WithContext(wt.ctx))
	}))
	return func(c *fiber.Ctx) error {
		fctx := c.Context()
		ctx, stop := connwatch.Watch(base, fctx.Conn(), interval)
		wt := &watch{ctx: ctx, stop: stop}
		fctx.SetUserValue(watchKey{}, wt)
		adapted(fctx)
		// When the adaptor could not build the request, h never ran and
		// nothing else stops the watch.
		if !wt.entered.Load() {
			stop()
		}
		return nil
	}
}
