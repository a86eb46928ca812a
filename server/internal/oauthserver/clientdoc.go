package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/runtime/egress"
	"github.com/workbench-dev/workbench/server/internal/store"
)

// Limits of client ID metadata document fetches.
const (
	// MaxClientDocumentBytes caps a client ID metadata document.
	MaxClientDocumentBytes = 5 << 10
	// clientDocumentTimeout bounds one fetch, connection included.
	clientDocumentTimeout = 10 * time.Second
	// clientDocumentTTL is how long a fetched document (or a failure to
	// fetch one) is reused.
	clientDocumentTTL = 5 * time.Minute
	// failedDocumentTTL is how long a failure is remembered, so that a
	// flood of authorization requests cannot turn into a flood of fetches.
	failedDocumentTTL = time.Minute
	// maxCachedDocuments bounds the cache.
	maxCachedDocuments = 1024
)

// ErrClientDocument is wrapped by every failure to resolve a client ID
// metadata document: unreachable, refused, malformed or inconsistent.
var ErrClientDocument = errors.New("client ID metadata document")

// isDocumentClientID reports whether a client_id names a client ID metadata
// document (an http(s) URL) rather than a registered client ("oac_...").
func isDocumentClientID(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// clientDocument is the part of a client ID metadata document Workbench
// reads (the RFC 7591 client metadata, plus client_id).
type clientDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientSecret            *string  `json:"client_secret"`
}

// cachedDocument is one cache entry: a client or the reason there is none.
type cachedDocument struct {
	client  store.OAuthClient
	err     error
	expires time.Time
}

// clientDocuments fetches client ID metadata documents under the egress
// address rule and keeps a bounded cache of what it found.
type clientDocuments struct {
	http          *http.Client
	allowLoopback bool
	timeout       time.Duration // bounds one fetch
	now           func() time.Time
	logger        *slog.Logger

	mu    sync.Mutex
	cache map[string]cachedDocument
}

// newClientDocuments returns a fetcher. allowLoopback (EGRESS_ALLOW_PRIVATE)
// admits http URLs on loopback IP literals, dialed directly; every other
// URL must be https and is dialed through runtime/egress, which refuses
// internal addresses after resolving the host with resolver (nil means the
// system's) and pins the checked address. Redirects are not followed. Why a
// fetch failed (which can say what a host resolved to) goes to logger only.
func newClientDocuments(allowLoopback bool, resolver egress.Resolver, now func() time.Time, logger *slog.Logger) *clientDocuments {
	guarded := egress.NewClient(egress.Options{Resolver: resolver, MaxRedirects: -1, DialTimeout: clientDocumentTimeout})
	direct := &net.Dialer{Timeout: clientDocumentTimeout}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		if allowLoopback {
			if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Unmap().IsLoopback() {
				return direct.DialContext(ctx, network, address)
			}
		}
		return guarded.DialContext(ctx, network, address)
	}
	return &clientDocuments{
		http: &http.Client{
			Timeout: clientDocumentTimeout,
			Transport: &http.Transport{
				Proxy:                  nil, // an environment proxy would bypass the address rule
				DialContext:            dial,
				ForceAttemptHTTP2:      true,
				MaxIdleConns:           16,
				IdleConnTimeout:        90 * time.Second,
				TLSHandshakeTimeout:    clientDocumentTimeout,
				ResponseHeaderTimeout:  clientDocumentTimeout,
				MaxResponseHeaderBytes: 16 << 10,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		allowLoopback: allowLoopback,
		timeout:       clientDocumentTimeout,
		now:           now,
		logger:        logger,
		cache:         make(map[string]cachedDocument),
	}
}

// checkURL applies the rules for a client_id URL: https with a host and a
// path other than "/", without credentials, fragment, query or dot
// segments; http only on a loopback IP literal when allowed.
func (d *clientDocuments) checkURL(raw string) error {
	if len(raw) > store.MaxRedirectURILen {
		return fmt.Errorf("%w: the client_id URL is longer than %d characters", ErrClientDocument, store.MaxRedirectURILen)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: the client_id %q is not an absolute URL", ErrClientDocument, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && d.allowLoopback && isLoopbackLiteral(u.Hostname()):
	default:
		return fmt.Errorf("%w: the client_id URL must use https", ErrClientDocument)
	}
	switch {
	case u.User != nil:
		return fmt.Errorf("%w: the client_id URL must not carry credentials", ErrClientDocument)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%w: the client_id URL must not have a fragment", ErrClientDocument)
	case u.RawQuery != "" || strings.Contains(raw, "?"):
		return fmt.Errorf("%w: the client_id URL must not have a query", ErrClientDocument)
	case u.Path == "" || u.Path == "/":
		return fmt.Errorf("%w: the client_id URL needs a path", ErrClientDocument)
	case strings.ContainsAny(raw, " \t\r\n\x00"):
		return fmt.Errorf("%w: the client_id URL contains white space", ErrClientDocument)
	}
	for seg := range strings.SplitSeq(u.EscapedPath(), "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") {
			return fmt.Errorf("%w: the client_id URL must not have dot segments", ErrClientDocument)
		}
	}
	return nil
}

// isLoopbackLiteral reports whether host is a loopback IP literal.
func isLoopbackLiteral(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// resolve returns the client a metadata document URL describes, from the
// cache or fetched now. admit is asked before a fetch (never for a cache
// hit), and its error is returned as it is. fresh reports a fetch (the
// caller stores the client). Failures wrap ErrClientDocument and say what
// is wrong in terms a client developer can act on.
func (d *clientDocuments) resolve(ctx context.Context, id string, admit func() error) (cl store.OAuthClient, fresh bool, err error) {
	if err := d.checkURL(id); err != nil {
		return store.OAuthClient{}, false, err
	}
	now := d.now()
	d.mu.Lock()
	e, ok := d.cache[id]
	d.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.client, false, e.err
	}
	if err := admit(); err != nil {
		return store.OAuthClient{}, false, err
	}
	cl, err = d.fetch(ctx, id)
	if ctx.Err() != nil {
		return store.OAuthClient{}, false, err // the caller gave up: remember nothing
	}
	e = cachedDocument{client: cl, err: err, expires: now.Add(clientDocumentTTL)}
	if err != nil {
		e.expires = now.Add(failedDocumentTTL)
	}
	d.remember(id, e, now)
	return cl, err == nil, err
}

// remember caches e, first dropping expired entries when the cache is full
// and then, if still full, an arbitrary one.
func (d *clientDocuments) remember(id string, e cachedDocument, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.cache[id]; !ok && len(d.cache) >= maxCachedDocuments {
		for k, v := range d.cache {
			if !now.Before(v.expires) {
				delete(d.cache, k)
			}
		}
		for k := range d.cache {
			if len(d.cache) < maxCachedDocuments {
				break
			}
			delete(d.cache, k)
		}
	}
	d.cache[id] = e
}

// forget drops a document from the cache, so that the next request
// fetches it again.
func (d *clientDocuments) forget(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.cache, id)
}

// forgetAll empties the cache.
func (d *clientDocuments) forgetAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.cache)
}

// fetch downloads and checks one document.
func (d *clientDocuments) fetch(ctx context.Context, id string) (store.OAuthClient, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: %q is not a URL Workbench can fetch", ErrClientDocument, id)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		// The detail stays in the log: an egress refusal says what the
		// host resolved to, which the asker must not learn.
		d.logger.Info("a client ID metadata document could not be fetched", "client_id", id, "err", err)
		return store.OAuthClient{}, fmt.Errorf("%w: %s could not be fetched (refused, unreachable or too slow); it must be served over https from a public address",
			ErrClientDocument, id)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return store.OAuthClient{}, fmt.Errorf("%w: %s answered %d, want 200 (redirects are not followed)", ErrClientDocument, id, resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return store.OAuthClient{}, fmt.Errorf("%w: %s is not served as application/json", ErrClientDocument, id)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxClientDocumentBytes+1))
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: reading %s failed", ErrClientDocument, id)
	}
	if len(body) > MaxClientDocumentBytes {
		return store.OAuthClient{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrClientDocument, id, MaxClientDocumentBytes)
	}
	return parseClientDocument(id, body)
}

// parseClientDocument checks a document fetched from id and returns the
// client it describes.
func parseClientDocument(id string, body []byte) (store.OAuthClient, error) {
	var doc clientDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: %s is not a JSON object of client metadata", ErrClientDocument, id)
	}
	switch {
	case doc.ClientID != id:
		return store.OAuthClient{}, fmt.Errorf("%w: its client_id %q is not the URL it was fetched from, %q", ErrClientDocument, doc.ClientID, id)
	case doc.ClientSecret != nil:
		return store.OAuthClient{}, fmt.Errorf("%w: a metadata document must not carry a client_secret", ErrClientDocument)
	case doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none":
		return store.OAuthClient{}, fmt.Errorf("%w: token_endpoint_auth_method %q is not supported; use none (a public client)", ErrClientDocument, doc.TokenEndpointAuthMethod)
	case len(doc.RedirectURIs) == 0 || len(doc.RedirectURIs) > store.MaxRedirectURIs:
		return store.OAuthClient{}, fmt.Errorf("%w: give 1 to %d redirect_uris", ErrClientDocument, store.MaxRedirectURIs)
	}
	for _, g := range doc.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return store.OAuthClient{}, fmt.Errorf("%w: grant type %q is not supported", ErrClientDocument, g)
		}
	}
	for _, rt := range doc.ResponseTypes {
		if rt != "code" {
			return store.OAuthClient{}, fmt.Errorf("%w: response type %q is not supported", ErrClientDocument, rt)
		}
	}
	for _, u := range doc.RedirectURIs {
		if err := CheckRedirectURI(u); err != nil {
			return store.OAuthClient{}, fmt.Errorf("%w: %w", ErrClientDocument, err)
		}
	}
	name := strings.TrimSpace(doc.ClientName)
	if name == "" {
		u, _ := url.Parse(id) // checked by checkURL
		name = u.Host
	}
	if err := store.CheckName("client", name); err != nil {
		return store.OAuthClient{}, fmt.Errorf("%w: client_name must be valid UTF-8 of at most %d bytes", ErrClientDocument, store.MaxNameLen)
	}
	return store.OAuthClient{ID: id, Name: name, RedirectURIs: slices.Clone(doc.RedirectURIs)}, nil
}
