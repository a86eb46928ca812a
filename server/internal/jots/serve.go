package jots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/jots/tarball"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Headers on every response under /j/.
const (
	// SandboxCSP puts a jot's documents on an opaque origin: no
	// allow-same-origin, so no access to Workbench's cookies or
	// credentialed same-origin requests.
	SandboxCSP = "sandbox allow-scripts allow-forms allow-popups"
)

// requestTimeout bounds the store reads of one request.
const requestTimeout = 10 * time.Second

// Mount adds the upload endpoint and /j/<name>/ to r.
func (s *Service) Mount(r fiber.Router) {
	r.Put(UploadPrefix+":token", s.onJotsHost(s.upload))
	r.All(RoutePrefix+":name", s.onJotsHost(s.serve))
	r.All(RoutePrefix+":name/*", s.onJotsHost(s.serve))
}

// onJotsHost serves with h the requests that name the jots host, and
// redirects the others there (308, so an upload stays a PUT), when jots
// have an origin of their own. The app's cookies, host-only, never reach
// that host.
func (s *Service) onJotsHost(h fiber.Handler) fiber.Handler {
	if s.jotsHost == nil {
		return h
	}
	return func(c *fiber.Ctx) error {
		if s.jotsHost.Admits(string(c.Request().Host())) {
			return h(c)
		}
		baseHeaders(c)
		loc := s.origin + string(c.Request().RequestURI())
		c.Response().Header.Set("Location", loc)
		return textResponse(c, http.StatusPermanentRedirect, "jots are served from "+s.origin+": moved to "+loc)
	}
}

// baseHeaders sets the headers every /j/ response carries.
func baseHeaders(c *fiber.Ctx) {
	h := &c.Response().Header
	h.Set("Content-Security-Policy", SandboxCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// splitPath splits a raw request path /j/<name>/<rest> into the name, the
// unescaped rest and whether the name had a slash after it.
func splitPath(raw string) (name, rest string, slash bool, err error) {
	p, ok := strings.CutPrefix(raw, "/j/")
	if !ok {
		return "", "", false, errors.New("not a jot path")
	}
	name, rest, slash = strings.Cut(p, "/")
	if store.CheckJotName(name) != nil {
		return "", "", false, fmt.Errorf("%q is not a jot name", name)
	}
	rest, err = url.PathUnescape(rest)
	if err != nil {
		return "", "", false, fmt.Errorf("bad escape in path: %w", err)
	}
	return name, rest, slash, nil
}

// textResponse answers with a short plain-text message.
func textResponse(c *fiber.Ctx, status int, msg string) error {
	c.Response().Header.Set("Cache-Control", "no-store")
	c.Response().Header.SetContentType("text/plain; charset=utf-8")
	c.Status(status)
	return c.SendString(msg + "\n")
}

var errNoJot = errors.New("no such jot")

// serve answers GET, HEAD, OPTIONS and (password jots) POST under /j/.
func (s *Service) serve(c *fiber.Ctx) error {
	baseHeaders(c)
	method := c.Method()
	switch method {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodOptions:
	default:
		c.Response().Header.Set("Allow", "GET, HEAD, OPTIONS, POST")
		return textResponse(c, http.StatusMethodNotAllowed, "jots are read-only: GET or HEAD")
	}
	name, rest, slash, err := splitPath(string(c.Request().URI().PathOriginal()))
	if err != nil {
		return textResponse(c, http.StatusNotFound, "not found: "+err.Error())
	}
	if !slash {
		loc := "/j/" + name + "/"
		if q := c.Request().URI().QueryString(); len(q) > 0 {
			loc += "?" + string(q)
		}
		c.Response().Header.Set("Location", loc)
		return textResponse(c, http.StatusMovedPermanently, "moved to "+loc)
	}
	ctx, stop := fiberfix.RequestContext(c)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	st, err := s.site(ctx, name)
	if errors.Is(err, errNoJot) {
		return textResponse(c, http.StatusNotFound, fmt.Sprintf("there is no jot named %q", name))
	}
	if err != nil {
		s.logger.Error("loading a jot", "jot", name, "err", err)
		return textResponse(c, http.StatusServiceUnavailable, "the jot cannot be loaded right now; try again")
	}
	j := &st.jot
	prefix := "/j/" + name + "/"
	if j.Access == store.JotPassword {
		// Password jots are served under /j/<name>/~<token>/: see gate.go.
		token, inner, tokened := cutToken(rest)
		if method == fiber.MethodPost {
			return s.unlock(ctx, c, st, inner)
		}
		switch {
		case tokened && s.validToken(j, token):
			rest, prefix = inner, prefix+tokenMark+token+"/"
		case !tokened && s.validToken(j, string(c.Request().Header.Cookie(cookieName(name)))):
			loc := prefix + tokenMark + string(c.Request().Header.Cookie(cookieName(name))) + "/" + escapePath(rest)
			if q := c.Request().URI().QueryString(); len(q) > 0 {
				loc += "?" + string(q)
			}
			c.Response().Header.Set("Location", loc)
			return textResponse(c, http.StatusFound, "unlocked: moved to the jot's unlocked address")
		default:
			return s.passwordForm(c, j, http.StatusUnauthorized, "")
		}
		c.Response().Header.Set("Cache-Control", "private, no-cache")
	} else {
		c.Response().Header.Set("Cache-Control", "no-cache")
	}
	if j.CORS {
		c.Response().Header.Set("Access-Control-Allow-Origin", "*")
	}
	switch method {
	case fiber.MethodPost:
		c.Response().Header.Set("Allow", "GET, HEAD, OPTIONS")
		return textResponse(c, http.StatusMethodNotAllowed, "jots are read-only: GET or HEAD")
	case fiber.MethodOptions:
		c.Response().Header.Set("Allow", "GET, HEAD, OPTIONS")
		if j.CORS {
			c.Response().Header.Set("Access-Control-Allow-Methods", "GET, HEAD")
			c.Response().Header.Set("Access-Control-Allow-Headers", "Range, If-None-Match, If-Modified-Since")
			c.Response().Header.Set("Access-Control-Max-Age", "600")
		}
		return c.SendStatus(http.StatusNoContent)
	}
	p := rest
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	if _, err := tarball.CleanPath(p); err != nil {
		return textResponse(c, http.StatusNotFound, "not found: the path is not clean")
	}
	f, ok := st.files[p]
	if !ok {
		if _, dir := st.files[p+"/index.html"]; dir {
			c.Response().Header.Set("Location", prefix+escapePath(p)+"/")
			return textResponse(c, http.StatusMovedPermanently, "moved to the directory")
		}
		return textResponse(c, http.StatusNotFound, fmt.Sprintf("jot %q has no file %q", name, p))
	}
	data, f, err := s.content(ctx, st, f)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) { // changed under us
			s.cache.forget(name)
			return textResponse(c, http.StatusNotFound, fmt.Sprintf("jot %q has no file %q", name, p))
		}
		s.logger.Error("loading a jot file", "jot", name, "path", p, "err", err)
		return textResponse(c, http.StatusServiceUnavailable, "the file cannot be loaded right now; try again")
	}
	serveContent(c, f, data)
	return nil
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// site returns the jot's cached state, rereading its row when the entry is
// older than the recheck interval and its files when the version moved.
func (s *Service) site(ctx context.Context, name string) (*site, error) {
	now := s.now()
	cached := s.cache.site(name)
	if cached != nil && cached.fresh(now, s.recheck) {
		return cached, nil
	}
	j, err := s.store.Jot(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		s.cache.forget(name)
		return nil, errNoJot
	}
	if err != nil {
		return nil, err
	}
	if cached != nil && cached.jot.ID == j.ID && cached.jot.Version == j.Version {
		cached.checked.Store(now.UnixNano())
		return cached, nil
	}
	files, err := s.store.JotFiles(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	st := &site{jot: j, files: make(map[string]store.JotFile, len(files))}
	for _, f := range files {
		st.files[f.Path] = f
	}
	st.checked.Store(now.UnixNano())
	s.cache.put(name, st)
	return st, nil
}

// content returns a file's bytes from the cache or the store. A file the
// store holds in another version than the cached list is served as stored,
// with its own metadata.
func (s *Service) content(ctx context.Context, st *site, f store.JotFile) ([]byte, store.JotFile, error) {
	if data, ok := s.cache.content(f.SHA256); ok {
		return data, f, nil
	}
	got, data, err := s.store.JotFile(ctx, st.jot.ID, f.Path)
	if err != nil {
		return nil, f, err
	}
	s.cache.putContent(got.SHA256, data)
	return data, got, nil
}

// serveContent writes a file with its validators, answering conditional
// and single-range requests (RFC 9110 sections 13 and 14).
func serveContent(c *fiber.Ctx, f store.JotFile, data []byte) {
	h := &c.Response().Header
	etag := `"` + f.SHA256 + `"`
	modified := f.ModifiedAt.UTC().Truncate(time.Second)
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	h.SetContentType(f.ContentType)
	req := &c.Request().Header
	if inm := req.Peek("If-None-Match"); len(inm) > 0 {
		if etagMatch(string(inm), f.SHA256) {
			notModified(c)
			return
		}
	} else if ims := req.Peek("If-Modified-Since"); len(ims) > 0 {
		if t, err := http.ParseTime(string(ims)); err == nil && !modified.After(t) {
			notModified(c)
			return
		}
	}
	size := int64(len(data))
	start, end := int64(0), size-1
	status := http.StatusOK
	if rng := req.Peek("Range"); len(rng) > 0 && c.Method() == fiber.MethodGet && ifRange(string(req.Peek("If-Range")), etag, modified) {
		a, b, ok, satisfiable := parseRange(string(rng), size)
		switch {
		case ok && !satisfiable:
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			h.SetContentType("text/plain; charset=utf-8")
			c.Status(http.StatusRequestedRangeNotSatisfiable)
			c.Response().SetBodyString("range not satisfiable\n")
			return
		case ok:
			start, end, status = a, b, http.StatusPartialContent
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, size))
		}
	}
	c.Status(status)
	body := data[start : end+1]
	if c.Method() == fiber.MethodHead {
		c.Response().SkipBody = true
		h.SetContentLength(len(body))
		return
	}
	c.Response().SetBodyRaw(body)
}

func notModified(c *fiber.Ctx) {
	c.Response().Header.Del(fiber.HeaderContentType)
	c.Response().SkipBody = true
	c.Status(http.StatusNotModified)
}

// etagMatch reports whether an If-None-Match list names sha (weak
// comparison) or is "*".
func etagMatch(list, sha string) bool {
	for tag := range strings.SplitSeq(list, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" {
			return true
		}
		tag = strings.TrimPrefix(tag, "W/")
		if tag == `"`+sha+`"` {
			return true
		}
	}
	return false
}

// ifRange reports whether a Range may apply given an If-Range value: absent,
// the strong ETag itself, or a date not older than the modification.
func ifRange(v, etag string, modified time.Time) bool {
	switch {
	case v == "":
		return true
	case strings.HasPrefix(v, `"`):
		return v == etag
	default:
		t, err := http.ParseTime(v)
		return err == nil && t.Equal(modified)
	}
}

// parseRange parses a single "bytes=" range. ok is false for anything it
// ignores (other units, several ranges, malformed): the whole file is sent.
func parseRange(v string, size int64) (start, end int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(v, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	if a == "" { // suffix: the last b bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, true, false
		}
		return max(0, size-n), size - 1, true, true
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false, false
	}
	end = size - 1
	if b != "" {
		e, err := strconv.ParseInt(b, 10, 64)
		if err != nil || e < start {
			return 0, 0, false, false
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, true, false
	}
	return start, end, true, true
}
