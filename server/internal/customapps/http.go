package customapps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// DefaultMaxResponseBytes caps one response body of an app when
// NewHTTPClient is given no cap.
const DefaultMaxResponseBytes = 4 << 20

// maxRedirects bounds the redirects one request to an app follows.
const maxRedirects = 5

// errResponseTooLarge is wrapped by a response body read past its cap. The
// go-sdk client flattens transport errors into text, so classify also
// recognises its message.
var errResponseTooLarge = errors.New("workbench: app response over its size cap")

// Dialer connects to host:port; egress.Client.DialContext is the one to use:
// it refuses private, loopback and link-local addresses (unless
// EGRESS_ALLOW_PRIVATE=1) after resolving every address, and dials the
// checked address, so a second DNS answer cannot move the connection.
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// NewHTTPClient returns the client that carries every request to apps:
// every dial goes through dial (HTTPS included: TLS runs over the pinned
// connection and keeps the URL's host name for SNI and the certificate),
// no environment proxy, every redirect re-checked (http or https, no
// embedded credentials, at most 5 hops, each hop dialed through dial
// again), and every response body capped at maxResponseBytes (0 means
// DefaultMaxResponseBytes).
func NewHTTPClient(dial Dialer, maxResponseBytes int64) *http.Client {
	if maxResponseBytes <= 0 {
		maxResponseBytes = DefaultMaxResponseBytes
	}
	return &http.Client{
		Transport: cappedTransport{max: maxResponseBytes, next: &http.Transport{
			Proxy:                  nil, // a proxy would bypass the address rule
			DialContext:            dial,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  30 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		}},
		CheckRedirect: checkRedirect,
	}
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("customapps: stopped after %d redirects (the limit)", maxRedirects)
	}
	if err := store.CheckCustomAppURL(req.URL.String()); err != nil {
		return fmt.Errorf("customapps: refused redirect: %w", err)
	}
	return nil
}

// cappedTransport caps every response body at max bytes.
type cappedTransport struct {
	max  int64
	next http.RoundTripper
}

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// cappedBody fails a read past max bytes with errResponseTooLarge.
type cappedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var probe [1]byte
		if n, err := b.ReadCloser.Read(probe[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("the app's response is over %d bytes (the limit): %w", b.max, errResponseTooLarge)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// bearerTransport attaches a token to requests to the app's own origin
// only, so a redirect elsewhere never carries it.
type bearerTransport struct {
	origin string // scheme://host[:port] of the app's URL
	token  string
	next   http.RoundTripper
}

func (t bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	if req.URL.Scheme+"://"+req.URL.Host == t.origin {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.next.RoundTrip(req)
}
