package jots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// uploadTimeout bounds one upload's store work and extraction.
const uploadTimeout = 60 * time.Second

type uploadResult struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Version int64  `json:"version"`
	Files   int    `json:"files"`
	Bytes   int64  `json:"bytes"`
}

// uploadError answers an upload with a status and a JSON reason.
func uploadError(c *fiber.Ctx, status int, code, format string, args ...any) error {
	c.Response().Header.Set("Cache-Control", "no-store")
	c.Status(status)
	return c.JSON(fiber.Map{"error": fiber.Map{"code": code, "message": fmt.Sprintf(format, args...)}})
}

// MaxUploadBytes is the largest request body an upload may have: the
// decompressed stream limit, which no valid gzip tarball within the limits
// exceeds by more than gzip's own few bytes per block.
func (s *Service) MaxUploadBytes() int64 { return s.limits.tarball().StreamLimit() + 64<<10 }

// upload publishes the tarball in the body with the upload token in the
// path, atomically: on any failure the jot keeps its previous files.
func (s *Service) upload(c *fiber.Ctx) error {
	baseHeaders(c)
	ctx, stop := fiberfix.RequestContext(c)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	hash := secrets.HashToken(c.Params("token"))
	up, err := s.store.JotUpload(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return uploadError(c, http.StatusNotFound, "UPLOAD_NOT_FOUND", "this upload URL is unknown or was already used; call %s for a new one", ToolDeploy)
	case errors.Is(err, store.ErrExpired):
		return uploadError(c, http.StatusGone, "UPLOAD_EXPIRED", "this upload URL expired (upload URLs last %s, JOTS_UPLOAD_TTL_SECONDS); call %s for a new one", s.limits.UploadTTL, ToolDeploy)
	case err != nil:
		s.logger.Error("looking up a jot upload", "err", err)
		return uploadError(c, http.StatusServiceUnavailable, "UNAVAILABLE", "the upload cannot be checked right now; try again")
	}
	maxBody := s.MaxUploadBytes()
	var body io.Reader
	tooLarge := func(n int64) error {
		return uploadError(c, http.StatusRequestEntityTooLarge, "TOO_LARGE", "the body is over %d bytes; an upload may be at most %d bytes (from JOTS_MAX_BYTES=%d and JOTS_MAX_FILES=%d)",
			n, maxBody, s.limits.MaxBytes, s.limits.MaxFiles)
	}
	if c.Request().Header.ContentLength() > 0 && int64(c.Request().Header.ContentLength()) > maxBody {
		return tooLarge(maxBody)
	}
	capped := &cappedBody{left: maxBody}
	if c.Request().IsBodyStream() {
		capped.r = c.Request().BodyStream()
		body = capped
	} else {
		raw := c.Request().Body() // not c.Body(): that would decode a Content-Encoding without a limit
		if int64(len(raw)) > maxBody {
			return tooLarge(maxBody)
		}
		body = bytes.NewReader(raw)
	}
	files, err := tarball.Extract(body, s.limits.tarball())
	if err != nil && capped.r != nil {
		// Extraction stopped early. Read the rest of the compressed body,
		// bounded by the cap and without decompressing it, so the client
		// finishes sending and reads the answer instead of a reset.
		_, _ = io.Copy(io.Discard, capped)
	}
	if capped.over {
		return tooLarge(maxBody)
	}
	if err != nil {
		status, code := http.StatusBadRequest, "BAD_TARBALL"
		if errors.Is(err, tarball.ErrLimit) {
			status, code = http.StatusRequestEntityTooLarge, "TOO_LARGE"
		}
		return uploadError(c, status, code, "%v; nothing was published and this URL stays usable until it expires", err)
	}
	contents := make([]store.JotContent, len(files))
	for i, f := range files {
		contents[i] = store.JotContent{Path: f.Path, ContentType: ContentType(f.Path, f.Data), Data: f.Data}
	}
	j, err := s.store.PublishJot(ctx, hash, contents, s.limits.store())
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		return uploadError(c, http.StatusNotFound, "UPLOAD_NOT_FOUND", "this upload URL was used meanwhile or its jot deleted; call %s for a new one", ToolDeploy)
	case errors.Is(err, store.ErrExpired):
		return uploadError(c, http.StatusGone, "UPLOAD_EXPIRED", "this upload URL expired; call %s for a new one", ToolDeploy)
	case errors.Is(err, store.ErrJotQuota):
		return uploadError(c, http.StatusRequestEntityTooLarge, "LIMIT_EXCEEDED", "%s; nothing was published (limits: %s)", trimStore(err), s.limits.describeQuota())
	case errors.Is(err, store.ErrJotLimit):
		return uploadError(c, http.StatusRequestEntityTooLarge, "TOO_LARGE", "%v (%s)", err, s.limits.describe())
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrInvalid):
		return uploadError(c, http.StatusBadRequest, "BAD_TARBALL", "%v", err)
	default:
		s.logger.Error("publishing a jot", "jot", up.JotID, "err", err)
		return uploadError(c, http.StatusServiceUnavailable, "UNAVAILABLE", "the jot could not be stored; nothing was published; try again")
	}
	s.cache.forget(j.Name)
	s.logger.Info("jot published", "jot", j.Name, "user", j.UserID, "version", j.Version, "files", j.Files, "bytes", j.Bytes)
	c.Response().Header.Set("Cache-Control", "no-store")
	return c.JSON(uploadResult{Name: j.Name, URL: s.URL(j.Name), Version: j.Version, Files: j.Files, Bytes: j.Bytes})
}

// cappedBody reads a streamed request body and fails once it passes left
// bytes, remembering that it did.
type cappedBody struct {
	r    io.Reader
	left int64
	over bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.r.Read(one[:]); n > 0 {
			b.over = true
			return 0, errBodyTooLarge
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

var errBodyTooLarge = errors.New("upload body over its limit")
