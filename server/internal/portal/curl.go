package portal

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// curlCallsShown is how many audit rows the curl page lists.
const curlCallsShown = 100

// curlSessionRow is one curl session as the page shows it.
type curlSessionRow struct {
	ID, Prefix, Integrations, Created, Expires, Status string
}

// curlCallRow is one audited proxy call as the page shows it.
type curlCallRow struct {
	At, Integration, Method, Path, Error, Duration string
	Status                                         int
	BytesIn, BytesOut                              int64
}

// curl shows the user's curl sessions, with a revoke button each, and the
// calls made with them.
func (p *Portal) curl(c *fiber.Ctx, r *request) error {
	sessions, err := p.store.CurlSessions(r.ctx, r.user.ID)
	if err != nil {
		return err
	}
	calls, err := p.store.ProxyCalls(r.ctx, store.ProxyCallFilter{UserID: r.user.ID, Limit: curlCallsShown})
	if err != nil {
		return err
	}
	now := p.now()
	data := struct {
		base
		Sessions []curlSessionRow
		Calls    []curlCallRow
		Limit    int
	}{base: p.base(r, "Curl sessions", "curl"), Limit: curlCallsShown}
	data.Notice = notice(c)
	for _, s := range sessions {
		row := curlSessionRow{ID: s.ID, Prefix: s.Prefix, Integrations: strings.Join(s.Integrations, ", "),
			Created: s.CreatedAt.Format(timeFormat), Expires: s.ExpiresAt.Format(timeFormat), Status: "Active"}
		switch {
		case !s.RevokedAt.IsZero():
			row.Status = "Revoked"
		case !now.Before(s.ExpiresAt):
			row.Status = "Expired"
		}
		data.Sessions = append(data.Sessions, row)
	}
	for _, cl := range calls {
		data.Calls = append(data.Calls, curlCallRow{At: cl.At.Format(timeFormat), Integration: cl.Integration, Method: cl.Method,
			Path: cl.Path, Error: cl.Error, Duration: cl.Duration.Round(time.Millisecond).String(), Status: cl.Status,
			BytesIn: cl.BytesIn, BytesOut: cl.BytesOut})
	}
	return p.render(c, http.StatusOK, "curl", data)
}

// revokeCurl revokes one of the user's curl sessions.
func (p *Portal) revokeCurl(c *fiber.Ctx, r *request) error {
	err := p.store.RevokeCurlSession(r.ctx, r.user.ID, c.Params("id"))
	if errors.Is(err, store.ErrNotFound) {
		return failPage(http.StatusNotFound, "No such session", "You have no curl session with that id.")
	}
	if err != nil {
		return err
	}
	return redirect(c, "/curl?notice=curl-revoked")
}
