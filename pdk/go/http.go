package pdk

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Header is a set of HTTP header fields. Lookups ignore case; Set and Add
// store the canonical form (Content-Type).
type Header map[string][]string

// Get returns the first value of name, or "".
func (h Header) Get(name string) string {
	if v := h.Values(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values returns every value of name.
func (h Header) Values(name string) []string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// Set replaces the values of name with value.
func (h Header) Set(name, value string) {
	h.Del(name)
	h[canonicalHeaderKey(name)] = []string{value}
}

// Add appends value to the values of name.
func (h Header) Add(name, value string) {
	key := canonicalHeaderKey(name)
	for k := range h {
		if strings.EqualFold(k, name) {
			key = k
			break
		}
	}
	h[key] = append(h[key], value)
}

// Del removes name in any case.
func (h Header) Del(name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// canonicalHeaderKey upper-cases the first letter and every letter after a
// '-', and lower-cases the rest.
func canonicalHeaderKey(name string) string {
	b := []byte(name)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// Request is one outbound HTTP request.
type Request struct {
	// Method defaults to GET.
	Method string
	// URL is absolute; the host checks it against the manifest's hosts.
	URL string
	// Header is sent as is, except credential headers, which the host
	// replaces with the caller's credential.
	Header Header
	// Body is sent as the request body; nil sends none.
	Body []byte
	// Timeout, when positive, bounds the request; the host cuts it to the
	// call's remaining time.
	Timeout time.Duration
}

// Response is the upstream's answer. A 4xx or 5xx status is a Response, not
// an error: the plugin decides what it means.
type Response struct {
	Status int
	Header Header
	Body   []byte
	// URL is the final URL after redirects.
	URL string
}

// OK reports whether the status is 2xx.
func (r *Response) OK() bool { return r.Status >= 200 && r.Status <= 299 }

// DecodeJSON decodes the body into v as json.Unmarshal does. A body that is
// not the expected JSON is an UPSTREAM_ERROR.
func (r *Response) DecodeJSON(v any) error {
	if err := decodeJSON(r.Body, v); err != nil {
		return UpstreamError("decoding the response from %s (status %d): %v", r.URL, r.Status, err)
	}
	return nil
}

// HTTPClient sends requests through the host's http_request import. Its
// Header and Timeout apply to every request that does not set its own.
type HTTPClient struct {
	Header  Header
	Timeout time.Duration
}

// HTTP is a client without default headers.
var HTTP = &HTTPClient{}

// wireRequest is the request JSON of http_request (docs/abi.md section 5).
type wireRequest struct {
	Method    string `json:"method,omitempty"`
	URL       string `json:"url"`
	Headers   Header `json:"headers,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// wireResponseHead is the head JSON http_request returns.
type wireResponseHead struct {
	Status  int    `json:"status"`
	Headers Header `json:"headers"`
	URL     string `json:"url"`
}

// Do sends req. Host failures (EGRESS_DENIED, NOT_CONNECTED,
// UPSTREAM_TIMEOUT, ...) are returned as *Error with the host's code.
func (c *HTTPClient) Do(req *Request) (*Response, error) {
	if req == nil || req.URL == "" {
		return nil, errors.New("pdk: HTTP request without a URL")
	}
	headers := Header{}
	for k, v := range req.Header {
		headers[k] = v
	}
	for k, v := range c.Header {
		if headers.Values(k) == nil {
			headers[k] = v
		}
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = c.Timeout
	}
	wr := wireRequest{Method: req.Method, URL: req.URL, Headers: headers, TimeoutMs: timeout.Milliseconds()}
	if len(wr.Headers) == 0 {
		wr.Headers = nil
	}
	reqJSON, err := encodeJSON(wr)
	if err != nil {
		return nil, err
	}
	head, body, failure := hostHTTPRequest(reqJSON, req.Body)
	if failure != nil {
		e := &Error{}
		if err := json.Unmarshal(failure, e); err != nil || e.Code == "" {
			return nil, Errorf(CodeToolError, "the host reported an unreadable HTTP failure: %q", failure)
		}
		return nil, e
	}
	var h wireResponseHead
	if err := decodeJSON(head, &h); err != nil {
		return nil, Errorf(CodeToolError, "the host returned an unreadable response head: %v", err)
	}
	if h.Headers == nil {
		h.Headers = Header{}
	}
	return &Response{Status: h.Status, Header: h.Headers, Body: body, URL: h.URL}, nil
}

// Get sends a GET request.
func (c *HTTPClient) Get(url string) (*Response, error) {
	return c.Do(&Request{Method: "GET", URL: url})
}

// Post sends a POST request with body of the given content type.
func (c *HTTPClient) Post(url, contentType string, body []byte) (*Response, error) {
	return c.Do(&Request{Method: "POST", URL: url, Header: Header{"Content-Type": {contentType}}, Body: body})
}

// SendJSON sends a request whose body is v encoded as JSON (no body when v is
// nil), with Content-Type application/json.
func (c *HTTPClient) SendJSON(method, url string, v any) (*Response, error) {
	req := &Request{Method: method, URL: url}
	if v != nil {
		body, err := encodeJSON(v)
		if err != nil {
			return nil, err
		}
		req.Body = body
		req.Header = Header{"Content-Type": {"application/json"}}
	}
	return c.Do(req)
}
