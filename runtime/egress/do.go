package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/workbench-dev/workbench/failure"
)

// Request is one outbound HTTP request as a plugin describes it.
type Request struct {
	Method string // default GET
	URL    string // absolute http or https URL
	Header http.Header
	Body   []byte
	// Timeout bounds the whole exchange, redirects and body included. Zero
	// leaves ctx's deadline in charge, or 30 seconds when ctx has none.
	Timeout time.Duration
}

// Response is an upstream answer. Status 4xx and 5xx are responses, not
// errors.
type Response struct {
	Status int
	Header http.Header
	URL    string // final URL after redirects, without credential parameters
	Body   []byte
}

// Injector attaches a credential to a request. Apply strips whatever the
// plugin set and attaches the real credential; Strip only removes. Errors from
// Apply must not contain secrets.
type Injector interface {
	Strip(*http.Request)
	Apply(*http.Request) error
}

// Limits caps one request.
type Limits struct {
	MaxResponseBytes int64 // 0 means DefaultMaxResponseBytes
}

// DefaultMaxResponseBytes is the response body cap when Limits sets none.
const DefaultMaxResponseBytes = 8 << 20

const (
	defaultTimeout     = 30 * time.Second
	maxURLBytes        = 16 << 10
	maxHeaderBytes     = 256 << 10
	redirectDrainBytes = 64 << 10
)

// hostOwnedHeaders are set by the HTTP stack, never by a plugin.
var hostOwnedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Upgrade"}

// credentialHeaders are dropped on every hop that leaves the original host.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// bodyHeaders describe a request body and go when a redirect drops it.
var bodyHeaders = []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Location"}

// Do sends r if p allows it and returns the final response after following
// redirects. inj (may be nil) attaches the credential on hops whose scheme,
// host and port equal the original request's, and strips credential-bearing
// headers and parameters on every other hop. Every failure is an *Error.
func (c *Client) Do(ctx context.Context, p Policy, r Request, inj Injector, lim Limits) (*Response, error) {
	method, u, header, err := validateRequest(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := requestContext(ctx, r.Timeout)
	defer cancel()
	maxBody := lim.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBytes
	}
	origin, _ := targetOf(u)
	body := r.Body
	for redirects := 0; ; redirects++ {
		if inj != nil {
			inj.Strip(&http.Request{URL: u, Header: http.Header{}}) // keep credential parameters out of URLs the plugin sees
		}
		if !p.Allows(u) {
			return nil, newError(failure.EgressDenied, describe(u)+" is not an allowed destination", nil)
		}
		hc := c.http
		if p.internal(u) {
			hc = c.internalHTTP
		}
		resp, err := c.send(ctx, hc, method, u, header, body, inj, origin)
		if err != nil {
			return nil, err
		}
		next, err := redirectTarget(resp, u)
		if err != nil || next == nil {
			if err != nil {
				resp.Body.Close()
				return nil, err
			}
			return c.readResponse(ctx, resp, u, maxBody)
		}
		_, _ = io.CopyN(io.Discard, resp.Body, redirectDrainBytes)
		resp.Body.Close()
		if redirects >= c.maxRedirects {
			return nil, newError(failure.TooManyRedirects, fmt.Sprintf("stopped after %d redirects", c.maxRedirects), nil)
		}
		if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
			if method != http.MethodHead {
				method = http.MethodGet
			}
			body = nil
			header = header.Clone()
			for _, h := range bodyHeaders {
				header.Del(h)
			}
		}
		u = next
	}
}

// send performs one hop with hc.
func (c *Client) send(ctx context.Context, hc *http.Client, method string, u *url.URL, header http.Header, body []byte, inj Injector, origin Destination) (*http.Response, error) {
	var reader io.Reader
	if len(body) > 0 {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), reader)
	if err != nil {
		return nil, newError(failure.InvalidRequest, "cannot build request for "+describe(u), nil)
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if t, _ := targetOf(u); t == origin {
		if inj != nil {
			if err := inj.Apply(req); err != nil {
				return nil, newError(failure.NotConnected, "cannot attach credential: "+err.Error(), err)
			}
		}
	} else {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
		if inj != nil {
			inj.Strip(req)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, transportError(ctx, err, u)
	}
	return resp, nil
}

// readResponse reads the final body through the cap.
func (c *Client) readResponse(ctx context.Context, resp *http.Response, u *url.URL, maxBody int64) (*Response, error) {
	defer resp.Body.Close()
	tooLarge := newError(failure.ResponseTooLarge, fmt.Sprintf("response from %s exceeds %d bytes", describe(u), maxBody), nil)
	if resp.ContentLength > maxBody {
		return nil, tooLarge
	}
	limit := maxBody
	if limit < math.MaxInt64 {
		limit++
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, transportError(ctx, err, u)
	}
	if int64(len(data)) > maxBody {
		return nil, tooLarge
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, URL: u.String(), Body: data}, nil
}

// redirectTarget returns the next URL when resp is a redirect to follow, or
// nil when resp is final.
func redirectTarget(resp *http.Response, u *url.URL) (*url.URL, error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, nil
	}
	next, err := u.Parse(loc)
	if err != nil {
		return nil, newError(failure.UpstreamUnreachable, describe(u)+" sent an invalid redirect location", nil)
	}
	if next.User != nil {
		return nil, newError(failure.EgressDenied, "redirect to "+describe(next)+" carries userinfo", nil)
	}
	next.Fragment, next.RawFragment = "", ""
	return next, nil
}

// transportError turns a failed exchange into an *Error. The message uses the
// innermost cause, never the request URL, which may carry a credential.
func transportError(ctx context.Context, err error, u *url.URL) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return newError(failure.UpstreamTimeout, fmt.Sprintf("request to %s did not finish in time", describe(u)), ctxErr)
	}
	var ne net.Error
	if errors.As(cause, &ne) && ne.Timeout() {
		return newError(failure.UpstreamTimeout, fmt.Sprintf("request to %s timed out", describe(u)), cause)
	}
	return newError(failure.UpstreamUnreachable, fmt.Sprintf("request to %s failed: %v", describe(u), cause), cause)
}

// describe names u's destination (scheme://host:port) without path or query.
func describe(u *url.URL) string {
	if t, ok := targetOf(u); ok {
		return t.String()
	}
	return fmt.Sprintf("%q", u.Scheme+"://"+u.Host)
}

func requestContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	if _, ok := ctx.Deadline(); !ok {
		return context.WithTimeout(ctx, defaultTimeout)
	}
	return context.WithCancel(ctx)
}

// validateRequest checks what the plugin sent and returns the method, the
// parsed URL and the header with canonical keys.
func validateRequest(r Request) (string, *url.URL, http.Header, error) {
	invalid := func(msg string) (string, *url.URL, http.Header, error) {
		return "", nil, nil, newError(failure.InvalidRequest, msg, nil)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if !httpguts.ValidHeaderFieldName(method) || len(method) > 32 {
		return invalid("method is not a valid HTTP method")
	}
	switch strings.ToUpper(method) {
	case http.MethodConnect, http.MethodTrace, "TRACK": // TRACE would echo the credential back
		return invalid("method " + method + " is not allowed")
	}
	if len(r.URL) > maxURLBytes {
		return invalid(fmt.Sprintf("url is longer than %d bytes", maxURLBytes))
	}
	u, err := url.Parse(r.URL)
	switch {
	case err != nil:
		return invalid("url does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return invalid("url must be an absolute http or https URL")
	case u.User != nil:
		return invalid("url must not contain userinfo")
	case u.Opaque != "" || u.Host == "":
		return invalid("url has no host")
	}
	if _, ok := targetOf(u); !ok {
		return invalid("url has an invalid host or port")
	}
	u.Fragment, u.RawFragment = "", ""

	header := make(http.Header, len(r.Header))
	size := 0
	for name, values := range r.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return invalid(fmt.Sprintf("header name %q is not valid", name))
		}
		key := http.CanonicalHeaderKey(name)
		size += len(key)
		for _, h := range hostOwnedHeaders {
			if key == h {
				return invalid("header " + key + " is set by the host")
			}
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return invalid("header " + key + " has a value with control characters")
			}
			size += len(key) + len(v) + 4
		}
		if size > maxHeaderBytes {
			return invalid(fmt.Sprintf("headers exceed %d bytes", maxHeaderBytes))
		}
		header[key] = append(header[key], values...)
	}
	return method, u, header, nil
}
