package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/fiberfix"
	"github.com/workbench-dev/workbench/server/internal/secrets"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// allowedMethods are the methods the proxy forwards, as Allow lists them.
const allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"

// lookupTimeout bounds the token and credential lookups of one call.
const lookupTimeout = 10 * time.Second

// copyBufferBytes is how much of a body the proxy holds at a time.
const copyBufferBytes = 32 << 10

// A call whose client left is audited with codeClientAborted and, if it
// left before the answer, statusClientClosed (nginx's "client closed
// request"; nobody reads it).
const (
	codeClientAborted  = "CLIENT_ABORTED"
	statusClientClosed = 499
)

// wwwAuthenticate is the challenge of every 401.
const wwwAuthenticate = `Bearer realm="workbench curl session", error="invalid_token", error_description=%q`

// Mount adds the proxy's route (every method of Route + "*") to r.
func (s *Service) Mount(r fiber.Router) {
	r.All(Route+"*", s.Handle)
}

// apiError is a failure answered as {"error": {"code", "message"}}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func fail(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// call is one proxied request in flight: what its audit row will say.
type call struct {
	s       *Service
	ctx     context.Context // ends when the client goes away (fiberfix.RequestContext)
	stop    context.CancelFunc
	start   time.Time
	row     store.ProxyCall
	session string // set once the caller is known: then the call is audited
	slot    bool   // holds one of the session's MaxConcurrent slots
	cancel  context.CancelFunc
	body    *requestBody
	once    sync.Once
}

// finish ends the call: it stops reading the client's body, cancels the
// upstream exchange, stops watching the client, frees the session's slot
// and queues the audit row.
func (c *call) finish(status int, bytesOut int64, code string) {
	c.once.Do(func() {
		if c.body != nil {
			c.row.BytesIn = c.body.detach()
		}
		if c.cancel != nil {
			c.cancel()
		}
		c.stop()
		if c.session == "" {
			return
		}
		if c.slot {
			c.s.release(c.session)
		}
		c.row.Status, c.row.BytesOut, c.row.Error = status, bytesOut, code
		c.row.Duration = time.Since(c.start)
		c.s.record(c.row)
	})
}

// clientGone reports whether the call's client has closed its connection.
func (c *call) clientGone() bool {
	return errors.Is(context.Cause(c.ctx), fiberfix.ErrPeerGone)
}

// Handle serves one request to Route + <integration>/<path>. The call runs
// on a context that ends when the client goes away, until its response has
// been streamed.
func (s *Service) Handle(c *fiber.Ctx) error {
	ctx, stop := fiberfix.RequestContext(c)
	cl := &call{s: s, ctx: ctx, stop: stop, start: time.Now()}
	if err := s.serve(c, cl); err != nil {
		var ae *apiError
		switch {
		case cl.clientGone():
			ae = fail(statusClientClosed, codeClientAborted, "the client closed the connection")
		case !errors.As(err, &ae):
			s.logger.Error("proxy call failed", "err", err)
			ae = fail(http.StatusInternalServerError, "INTERNAL", "the proxy could not complete this request")
		}
		writeError(c, ae)
		cl.finish(ae.status, 0, ae.code)
	}
	return nil
}

// writeError is the one place where the proxy's failures become responses.
func writeError(c *fiber.Ctx, e *apiError) {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.code, "message": e.message}})
	resp := c.Response()
	resp.Reset()
	resp.SetStatusCode(e.status)
	resp.Header.SetContentType(fiber.MIMEApplicationJSONCharsetUTF8)
	resp.Header.Set(fiber.HeaderCacheControl, "no-store")
	resp.Header.Set("X-Content-Type-Options", "nosniff")
	switch e.status {
	case http.StatusUnauthorized:
		resp.Header.Set(fiber.HeaderWWWAuthenticate, fmt.Sprintf(wwwAuthenticate, e.message))
	case http.StatusMethodNotAllowed:
		resp.Header.Set(fiber.HeaderAllow, allowedMethods)
	}
	resp.SetBody(body)
}

// serve proxies one request, filling in cl once the caller is known (so a
// failure is audited). It returns an error when nothing was streamed.
func (s *Service) serve(c *fiber.Ctx, cl *call) error {
	method := strings.Clone(c.Method()) // Fiber's strings live only as long as the request
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		return fail(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "the proxy forwards %s, not %s", allowedMethods, truncate(method, 16))
	}
	target := c.Request().Header.RequestURI()
	if len(target) > s.lim.MaxTargetBytes {
		return fail(http.StatusRequestURITooLong, "URI_TOO_LONG", "the request target is %d bytes, over the limit of %d", len(target), s.lim.MaxTargetBytes)
	}
	integration, rawPath, rawQuery, err := splitTarget(string(target))
	if err != nil {
		return fail(http.StatusBadRequest, "INVALID_PATH", "%v", err)
	}
	ctx, cancelLookup := context.WithTimeout(cl.ctx, lookupTimeout)
	defer cancelLookup()
	sess, err := s.authenticate(ctx, c)
	if err != nil {
		return err
	}
	// From here on the caller is known and the call is audited.
	path, pathErr := checkPath(rawPath)
	cl.session = sess.ID
	cl.row = store.ProxyCall{UserID: sess.UserID, SessionID: sess.ID,
		Integration: integration, Method: method, Path: auditPath(rawPath, rawQuery), At: cl.start}
	if pathErr == nil {
		cl.row.Path = auditPath(path, rawQuery)
	}
	if !sess.Allows(integration) {
		return fail(http.StatusForbidden, "WRONG_INTEGRATION", "this curl session was minted for %s, not %s; call curl_session with %s to get a token for it",
			strings.Join(sess.Integrations, ", "), integration, integration)
	}
	if !s.acquire(sess.ID) {
		return fail(http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "at most %d calls of one curl session may run at once", s.lim.MaxConcurrent)
	}
	cl.slot = true
	if pathErr != nil {
		return fail(http.StatusBadRequest, "INVALID_PATH", "%v", pathErr)
	}
	m, ok := s.opts.Catalog.Manifest(integration)
	if !ok {
		return fail(http.StatusNotFound, "UNKNOWN_INTEGRATION", "%s is no longer loaded on this server", integration)
	}
	if m.Proxy == nil {
		return fail(http.StatusNotFound, "NO_PROXY", "%s declares no proxy base URL", integration)
	}
	base, internal, err := s.baseURL(m)
	if err != nil {
		return err
	}
	u, err := upstreamURL(base, rawPath, path, rawQuery)
	if err != nil {
		return fail(http.StatusBadRequest, "INVALID_PATH", "%v", err)
	}
	dest, err := egress.ParseDestination(base.Scheme + "://" + base.Host)
	if err != nil || !(egress.Policy{Allow: []egress.Destination{dest}}).Allows(u) {
		return fail(http.StatusBadGateway, "EGRESS_DENIED", "the base URL of %s is not a valid destination", integration)
	}
	header, err := s.requestHeader(c)
	if err != nil {
		return err
	}
	var cred *credential.Credential
	if m.Auth.Mode != manifest.ModeNone {
		cred, err = s.opts.Credentials.Credential(ctx, sess.UserID, integration)
		if err != nil {
			return credentialError(integration, err)
		}
	}
	transport := s.transport
	if internal {
		transport = s.internal
	}
	return s.forward(c, cl, transport, m, u, header, cred)
}

// authenticate finds the session of the request's token.
func (s *Service) authenticate(ctx context.Context, c *fiber.Ctx) (store.CurlSession, error) {
	token, err := tokenOf(string(c.Request().Header.Peek(fiber.HeaderAuthorization)))
	if err != nil {
		return store.CurlSession{}, err
	}
	sess, err := s.opts.Store.CurlSessionByHash(ctx, secrets.HashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.CurlSession{}, fail(http.StatusUnauthorized, "INVALID_TOKEN", "the curl token is unknown; call curl_session for a new one")
	case err != nil:
		return store.CurlSession{}, fmt.Errorf("looking up a curl token: %w", err)
	case !sess.RevokedAt.IsZero():
		return store.CurlSession{}, fail(http.StatusUnauthorized, "TOKEN_REVOKED", "the curl token was revoked at %s", sess.RevokedAt.Format(time.RFC3339))
	case !s.opts.Now().Before(sess.ExpiresAt):
		return store.CurlSession{}, fail(http.StatusUnauthorized, "TOKEN_EXPIRED", "the curl token expired at %s; call curl_session for a new one", sess.ExpiresAt.Format(time.RFC3339))
	}
	return sess, nil
}

// tokenOf takes the curl token from an Authorization header: "Bearer
// <token>", or Basic with the token as user name (curl -u <token>:).
func tokenOf(authz string) (string, error) {
	if authz == "" {
		return "", fail(http.StatusUnauthorized, "MISSING_TOKEN", `send the curl token as "Authorization: Bearer <token>" (or curl -u <token>:)`)
	}
	scheme, cred, _ := strings.Cut(authz, " ")
	cred = strings.TrimSpace(cred)
	token := ""
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		token = cred
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return "", fail(http.StatusUnauthorized, "INVALID_TOKEN", "the Basic credentials are not valid base64")
		}
		token, _, _ = strings.Cut(string(raw), ":")
	default:
		return "", fail(http.StatusUnauthorized, "INVALID_TOKEN", "the Authorization scheme must be Bearer or Basic")
	}
	if !looksLikeToken(token) {
		return "", fail(http.StatusUnauthorized, "INVALID_TOKEN", "that is not a curl token (they start with %q)", TokenPrefix)
	}
	return token, nil
}

// credentialError answers a failed credential lookup.
func credentialError(integration string, err error) error {
	if errors.Is(err, failure.ErrNotConnected) {
		return fail(http.StatusConflict, "NOT_CONNECTED", "you are no longer connected to %s; call connect('%s'), then curl_session again", integration, integration)
	}
	return fmt.Errorf("reading the credential for %s: %w", integration, err)
}

// requestHeader checks the client's headers against the limits and returns
// the ones that may go upstream.
func (s *Service) requestHeader(c *fiber.Ctx) (http.Header, error) {
	h := &c.Request().Header
	out := make(http.Header, 16)
	count, size := 0, 0
	var connection []string
	for k, v := range h.All() {
		count++
		size += len(k) + len(v)
		if count > s.lim.MaxHeaders || size > s.lim.MaxHeaderBytes {
			return nil, fail(http.StatusRequestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE",
				"request headers are limited to %d lines and %d bytes", s.lim.MaxHeaders, s.lim.MaxHeaderBytes)
		}
		name := textproto.CanonicalMIMEHeaderKey(string(k))
		if name == "Connection" {
			connection = append(connection, string(v))
		}
		out[name] = append(out[name], string(v))
	}
	named := connectionNamed(connection)
	for name := range out {
		if !forwardable(name, requestOnlyDropped, named) {
			delete(out, name)
		}
	}
	return out, nil
}

// forward sends the request upstream through t and starts streaming the
// response.
func (s *Service) forward(c *fiber.Ctx, cl *call, t *http.Transport, m *manifest.Manifest, u *url.URL, header http.Header, cred *credential.Credential) error {
	ctx, cancel := context.WithTimeout(cl.ctx, s.lim.ExchangeTimeout)
	cl.cancel = cancel
	length := int64(c.Request().Header.ContentLength())
	if length > s.lim.MaxRequestBytes {
		return fail(http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", "the request body of %d bytes is over the limit of %d", length, s.lim.MaxRequestBytes)
	}
	var body io.ReadCloser = http.NoBody
	switch {
	case length == 0 || length == -2: // none
		length = 0
	default:
		src := c.Context().RequestBodyStream()
		if src == nil {
			src = bytes.NewReader(c.Request().Body())
		}
		cl.body = &requestBody{r: src, max: s.lim.MaxRequestBytes}
		body = cl.body
		if length < 0 {
			length = -1 // chunked
		}
	}
	req, err := http.NewRequestWithContext(ctx, cl.row.Method, u.String(), body)
	if err != nil {
		return fail(http.StatusBadRequest, "INVALID_PATH", "the upstream request cannot be built")
	}
	req.ContentLength = length
	if length == 0 {
		req.Body = http.NoBody
	}
	req.Header = header
	if err := credential.SchemeOf(&m.Auth).Apply(req, cred); err != nil {
		return credentialError(m.Name, err)
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		return s.upstreamError(ctx, cl, err)
	}
	return s.respond(c, cl, resp)
}

// upstreamError answers a failed exchange without naming the URL (its
// query may hold a credential).
func (s *Service) upstreamError(ctx context.Context, cl *call, err error) error {
	if cl.body != nil && cl.body.over() {
		return fail(http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", "the request body is over the limit of %d bytes", s.lim.MaxRequestBytes)
	}
	var ee *egress.Error
	if errors.As(err, &ee) {
		switch ee.Code {
		case failure.EgressDenied:
			return fail(http.StatusBadGateway, "EGRESS_DENIED", "the upstream address is refused: %s", ee.Message)
		case failure.UpstreamTimeout:
			return fail(http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT", "%s", ee.Message)
		}
		return fail(http.StatusBadGateway, "UPSTREAM_UNREACHABLE", "%s", ee.Message)
	}
	var ne net.Error
	if ctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
		return fail(http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT", "the upstream did not answer within %s", s.lim.HeaderTimeout)
	}
	s.logger.Warn("proxy upstream failed", "integration", cl.row.Integration, "err", err)
	return fail(http.StatusBadGateway, "UPSTREAM_UNREACHABLE", "the request to %s's API failed", cl.row.Integration)
}

// respond copies the upstream status and headers and streams the body.
func (s *Service) respond(c *fiber.Ctx, cl *call, up *http.Response) error {
	if up.ContentLength > s.lim.MaxResponseBytes {
		up.Body.Close()
		return fail(http.StatusBadGateway, "RESPONSE_TOO_LARGE", "the upstream response of %d bytes is over the limit of %d", up.ContentLength, s.lim.MaxResponseBytes)
	}
	resp := c.Response()
	resp.SetStatusCode(up.StatusCode)
	resp.Header.SetNoDefaultContentType(true)
	filterResponse(up.Header, func(name, value string) {
		if name == "Date" || name == "Content-Security-Policy" {
			return
		}
		resp.Header.Add(name, value)
	})
	// The proxy serves upstream bytes from Workbench's origin: sandbox them.
	for _, csp := range up.Header.Values("Content-Security-Policy") {
		resp.Header.Add("Content-Security-Policy", csp)
	}
	resp.Header.Add("Content-Security-Policy", "sandbox")
	resp.Header.Set("X-Content-Type-Options", "nosniff")
	noBody := cl.row.Method == http.MethodHead || up.StatusCode < 200 || up.StatusCode == http.StatusNoContent || up.StatusCode == http.StatusNotModified
	if noBody {
		up.Body.Close()
		if up.ContentLength >= 0 && cl.row.Method == http.MethodHead {
			resp.Header.SetContentLength(int(up.ContentLength))
		}
		resp.SkipBody = true
		cl.finish(up.StatusCode, 0, "")
		return nil
	}
	size := -1
	if up.ContentLength >= 0 {
		size = int(up.ContentLength)
	}
	resp.SetBodyStream(&responseBody{up: up.Body, cl: cl, status: up.StatusCode, max: s.lim.MaxResponseBytes}, size)
	return nil
}

// errRequestTooLarge cuts a request body over MaxRequestBytes.
var errRequestTooLarge = errors.New("proxy: request body over the limit")

// errDetached stops the upstream transport reading a body the client's
// request no longer owns.
var errDetached = errors.New("proxy: the request has ended")

// requestBody streams the client's body upstream, counting it. The
// transport may read it from another goroutine; detach (under the same
// lock) ends that before the client's request is reused.
type requestBody struct {
	mu       sync.Mutex
	r        io.Reader
	n, max   int64
	detached bool
	tooLarge bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.detached {
		return 0, errDetached
	}
	if b.tooLarge {
		return 0, errRequestTooLarge
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		b.tooLarge = true
		return 0, errRequestTooLarge
	}
	return n, err
}

// Close is a no-op: the transport closes the body when it is done with it,
// but the client's request owns the stream; detach ends it.
func (b *requestBody) Close() error { return nil }

// detach ends the body and returns how many bytes were read.
func (b *requestBody) detach() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.detached = true
	return b.n
}

func (b *requestBody) over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tooLarge
}

// responseBody streams the upstream body to the client, counting it and
// cutting it at MaxResponseBytes. fasthttp closes it once the response is
// written (or failed), which finishes the call.
type responseBody struct {
	up     io.ReadCloser
	cl     *call
	status int
	n, max int64
	err    string
}

func (r *responseBody) Read(p []byte) (int, error) {
	if len(p) > copyBufferBytes {
		p = p[:copyBufferBytes]
	}
	n, err := r.up.Read(p)
	r.n += int64(n)
	if r.n > r.max {
		r.err = "RESPONSE_TOO_LARGE"
		return 0, fmt.Errorf("proxy: the upstream response is over the limit of %d bytes", r.max)
	}
	switch {
	case err == nil || err == io.EOF:
	case r.cl.clientGone():
		r.err = codeClientAborted
	default:
		r.err = "UPSTREAM_ABORTED"
	}
	return n, err
}

// CloseWithError implements fasthttp's ReadCloserWithError: err is the
// failure writing to the client, if any.
func (r *responseBody) CloseWithError(err error) error {
	cerr := r.up.Close()
	code := r.err
	if err != nil && code == "" {
		code = codeClientAborted
	}
	r.cl.finish(r.status, r.n, code)
	return cerr
}
