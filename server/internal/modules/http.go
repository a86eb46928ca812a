package modules

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Route is where Mount adds the routes under the admin router (/api/admin).
// Uploads to it stream: the server must not buffer its bodies under the
// default body limit (fiberfix.BoundBodies), since LoadBody bounds them.
const Route = "/api/admin/modules"

// Mount adds the module routes to admin, the router of /api/admin, which
// lets only admins in.
func (s *Service) Mount(admin fiber.Router) {
	admin.Get("/modules", func(c *fiber.Ctx) error { return c.JSON(s.List()) })
	admin.Get("/modules/:name", func(c *fiber.Ctx) error {
		d, err := s.Inspect(c.UserContext(), c.Params("name"))
		if err != nil {
			return apiError(err)
		}
		return c.JSON(d)
	})
	admin.Post("/modules", func(c *fiber.Ctx) error {
		return s.answer(c, func(ctx context.Context, by string) (Outcome, error) {
			body, err := s.body(c)
			if err != nil {
				return Outcome{}, err
			}
			return s.Load(ctx, body, by)
		})
	})
	admin.Post("/modules/:name/reload", func(c *fiber.Ctx) error {
		return s.answer(c, func(ctx context.Context, by string) (Outcome, error) {
			return s.Reload(ctx, c.Params("name"), by)
		})
	})
	admin.Post("/modules/:name/unload", func(c *fiber.Ctx) error {
		return s.answer(c, func(_ context.Context, by string) (Outcome, error) {
			return s.Unload(c.Params("name"), by)
		})
	})
}

// answer runs a change for the calling admin and answers its outcome.
func (s *Service) answer(c *fiber.Ctx, change func(ctx context.Context, by string) (Outcome, error)) error {
	out, err := change(c.UserContext(), httpapi.CallerOf(c).Email)
	if err != nil {
		return apiError(err)
	}
	return c.JSON(out)
}

// body returns the request body as a reader, streamed or not; a declared
// length over MaxUploadBytes is refused before anything is read.
func (s *Service) body(c *fiber.Ctx) (io.Reader, error) {
	if int64(c.Request().Header.ContentLength()) > s.opts.MaxUploadBytes {
		return nil, s.tooLarge()
	}
	if r := c.Context().RequestBodyStream(); r != nil {
		return r, nil
	}
	return bytes.NewReader(c.Body()), nil
}

// apiError maps the service's and the registry's errors to responses.
func apiError(err error) error {
	status, code := http.StatusUnprocessableEntity, failure.InvalidModule
	switch {
	case errors.Is(err, errStorage):
		return err
	case errors.Is(err, errUnreadable):
		status, code = http.StatusBadRequest, failure.InvalidModule
	case errors.Is(err, registry.ErrUnknown):
		status, code = http.StatusNotFound, failure.NotFound
	case errors.Is(err, registry.ErrNative):
		status, code = http.StatusConflict, failure.NativeModule
	case errors.Is(err, registry.ErrSlugCollision), errors.Is(err, registry.ErrDuplicateName):
		status, code = http.StatusConflict, failure.Collision
	case errors.Is(err, errTooLarge), errors.Is(err, registry.ErrTooLarge):
		status, code = http.StatusRequestEntityTooLarge, failure.TooLarge
	case errors.Is(err, errBusy):
		status, code = http.StatusConflict, failure.ChangeInProgress
	case errors.Is(err, errLoading):
		status, code = http.StatusServiceUnavailable, failure.Unavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err // the client left; logged as a 500
	}
	return &httpapi.Error{Status: status, Code: code, Message: err.Error()}
}
