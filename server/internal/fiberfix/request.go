package fiberfix

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// RequestContext returns a context for the request in c, derived from
// c.UserContext(), that ends with cause ErrPeerGone once the client has
// closed or reset its connection, and a stop function that ends the watch
// and the context.
//
// The caller must call stop once the request is done, and not before: a
// handler that answers in full calls it when it returns; one that streams
// its response (fasthttp's SetBodyStream) calls it when the stream is
// closed, after the handler has returned. A second call is harmless.
func RequestContext(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return watchConn(c.UserContext(), c.Context().Conn(), DefaultInterval)
}
