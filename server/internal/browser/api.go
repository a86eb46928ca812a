package browser

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/httpapi"
)

// ResetRoute is the path, under /api, that resets the caller's browser.
const ResetRoute = "/browser-session/reset"

// Mount adds the browser session routes to the /api router of signed-in
// callers: POST ResetRoute kills the caller's browser and deletes its
// profile, answering 409 BROWSER_SESSION_BUSY while it is starting or in use.
func (m *Manager) Mount(api fiber.Router) {
	api.Post(ResetRoute, func(c *fiber.Ctx) error {
		if err := m.Reset(c.UserContext(), httpapi.CallerOf(c).UserID); err != nil {
			return apiError(err)
		}
		return c.JSON(resetBody{Reset: true})
	})
}

type resetBody struct {
	Reset bool `json:"reset"`
}

// apiStatus is the HTTP status of each code Reset returns.
var apiStatus = map[failure.Code]int{
	failure.BrowserSessionBusy: http.StatusConflict,
	failure.InvalidArguments:   http.StatusBadRequest,
	failure.Timeout:            http.StatusGatewayTimeout,
	failure.Canceled:           http.StatusRequestTimeout,
	failure.Unavailable:        http.StatusServiceUnavailable,
}

// apiError turns a coded failure into the /api error response.
func apiError(err error) error {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		return err
	}
	status, ok := apiStatus[fe.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &httpapi.Error{Status: status, Code: fe.Code, Message: fe.Message}
}
