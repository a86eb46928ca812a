package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/workbench-dev/workbench/failure"
)

// Error is an error a handler returns to answer with a given status, code
// and message. Any other error becomes a 500 whose details are only logged.
type Error struct {
	Status  int          // HTTP status
	Code    failure.Code // e.g. NOT_FOUND
	Message string       // shown to the client
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// RetryAfter is what a 503 tells the client to wait.
const RetryAfter = time.Second

// errorBody is the JSON every error response carries.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    failure.Code `json:"code"`
	Message string       `json:"message"`
}

// ErrorHandler returns the Fiber error handler that turns every error into
// {"error": {"code": ..., "message": ...}} with the matching status. Fiber's
// own errors (no route, method not allowed, body too large) keep their
// status; anything unexpected is logged and answered with a bare 500.
func ErrorHandler(logger *slog.Logger) fiber.ErrorHandler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(c *fiber.Ctx, err error) error {
		e := describe(c, err)
		if e.Status >= http.StatusInternalServerError {
			logger.Error("request failed", "method", c.Method(), "path", c.Path(), "status", e.Status, "err", err)
		}
		if e.Status == http.StatusServiceUnavailable {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(RetryAfter.Seconds())))
		}
		return c.Status(e.Status).JSON(errorBody{Error: errorDetail{Code: e.Code, Message: e.Message}})
	}
}

// describe maps an error returned by a handler or by Fiber to the response.
func describe(c *fiber.Ctx, err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if errors.Is(err, failure.ErrUnavailable) {
		return &Error{Status: http.StatusServiceUnavailable, Code: failure.Unavailable,
			Message: "a service Workbench depends on is unavailable; retry shortly"}
	}
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return &Error{Status: http.StatusInternalServerError, Code: codeForStatus(http.StatusInternalServerError), Message: "internal server error"}
	}
	e := &Error{Status: fe.Code, Code: codeForStatus(fe.Code), Message: fe.Message}
	switch fe.Code {
	case http.StatusNotFound:
		// Fiber's message for an unmatched route is HTML-escaped prose.
		e.Message = fmt.Sprintf("no route for %s %s", c.Method(), c.Path())
	case http.StatusMethodNotAllowed:
		e.Message = fmt.Sprintf("method %s is not allowed for %s", c.Method(), c.Path())
	}
	if e.Status >= http.StatusInternalServerError {
		e.Message = "internal server error"
	}
	return e
}

// codeForStatus is the upper-snake-case form of the status text: 404 ->
// NOT_FOUND, 413 -> REQUEST_ENTITY_TOO_LARGE.
func codeForStatus(status int) failure.Code {
	text := http.StatusText(status)
	if text == "" {
		return failure.Code(fmt.Sprintf("HTTP_%d", status))
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(text) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-':
			b.WriteByte('_')
		}
	}
	return failure.Code(b.String())
}
