package fiberfix

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// BoundBodies returns a middleware that holds request bodies to limit bytes
// on every route except those under the path prefixes in streamed, whose
// handlers read the body as a stream and enforce their own limits while
// they read.
//
// It is needed once fiber.Config's StreamRequestBody is on: fasthttp then
// hands a body over the limit to the handler as a stream, and reading it
// whole (c.Body) would not stop at the limit. A declared length over limit
// gets 413; a chunked body is read up to limit+1 bytes and refused past it.
func BoundBodies(limit int, streamed ...string) fiber.Handler {
	tooLarge := fiber.NewError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over the limit of %d bytes", limit))
	return func(c *fiber.Ctx) error {
		for _, prefix := range streamed {
			if strings.HasPrefix(c.Path(), prefix) {
				return c.Next()
			}
		}
		stream := c.Context().RequestBodyStream()
		if stream == nil {
			return c.Next()
		}
		if c.Request().Header.ContentLength() > limit {
			return tooLarge
		}
		body, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
		if err != nil {
			return fiber.NewError(http.StatusBadRequest, "the request body could not be read")
		}
		if len(body) > limit {
			return tooLarge
		}
		c.Request().SetBodyRaw(body)
		return c.Next()
	}
}
