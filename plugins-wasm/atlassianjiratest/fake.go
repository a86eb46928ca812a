package atlassianjiratest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
)

// Fake is an in-memory Jira Cloud REST API v3 served on 127.0.0.1. It
// answers the endpoints the atlassian-jira plugin uses the way Atlassian
// documents them: paths, methods, query and body parameters, the enhanced
// search's nextPageToken pagination, startAt/maxResults/isLast pages, ADF
// bodies, and Jira's error body {"errorMessages": [...], "errors": {...}}
// with its statuses. Every request is recorded.
//
// It is stricter than Jira in two respects, so that a careless plugin is
// caught: every request must send Accept: application/json, and request
// bodies are decoded strictly (Jira ignores some unknown members).
type Fake struct {
	// URL is the base URL of the site, such as http://127.0.0.1:41234.
	URL string

	srv  *httptest.Server
	auth string // the exact Authorization header accepted

	mu         sync.Mutex
	requests   plugintest.Recorder[Request]
	me         string // account id of the authenticated user
	users      []*User
	projects   []*projectRecord
	issues     []*issueRecord
	nextIssue  int
	nextCmt    int
	clock      time.Time
	retryAfter int  // seconds; > 0 while rate limiting
	outage     bool // answer 503 while true
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// maxBodyBytes caps a request body the fake reads.
const maxBodyBytes = 1 << 20

// NewFake starts a fake that accepts only HTTP basic auth with email and
// apiToken, as Jira Cloud documents for API tokens. The authenticated user
// is "Ada Lovelace" with that email. The server is closed when the test
// ends.
func NewFake(t testing.TB, email, apiToken string) *Fake {
	t.Helper()
	f := &Fake{
		auth:      "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+apiToken)),
		nextIssue: 10000,
		nextCmt:   20000,
		clock:     time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Fatalf("atlassianjiratest: fake listens on %s, want 127.0.0.1", f.URL)
	}
	f.me = f.AddUser(User{AccountID: "5b10a2844c20165700ede21g", DisplayName: "Ada Lovelace", Email: email})
	return f
}

// Me returns the authenticated user's account id.
func (f *Fake) Me() string { return f.me }

// Requests returns a copy of every request received so far.
func (f *Fake) Requests() []Request { return f.requests.All() }

// ClearRequests forgets the recorded requests.
func (f *Fake) ClearRequests() { f.requests.Clear() }

// LimitRate makes every following request fail as Jira does when a rate
// limit is hit: 429 with Retry-After set to seconds. 0 lifts the limit.
func (f *Fake) LimitRate(seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retryAfter = seconds
}

// SetOutage makes every following request fail with 503 and an HTML page,
// as a proxy in front of Jira does during an outage.
func (f *Fake) SetOutage(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outage = on
}

// apiError is an error response: Jira's JSON error body, or raw text.
type apiError struct {
	status      int
	messages    []string
	fieldErrors map[string]string
	text        string // when set, sent as text/plain instead of JSON
}

func jiraError(status int, format string, args ...any) *apiError {
	return &apiError{status: status, messages: []string{fmt.Sprintf(format, args...)}}
}

// fieldError is a 400 naming one field, as Jira reports validation failures.
func fieldError(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, fieldErrors: map[string]string{field: fmt.Sprintf(format, args...)}}
}

func issueNotFound() *apiError {
	return jiraError(http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
}

// exchange is one request being served.
type exchange struct {
	r      *http.Request
	body   []byte
	header http.Header // response headers
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"errorMessages": []string{"request body too large"}, "errors": map[string]string{}})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests.Add(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	x := &exchange{r: r, body: body, header: w.Header()}
	status, out, apiErr := f.handle(x)
	switch {
	case apiErr != nil && apiErr.text != "":
		w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
		w.WriteHeader(apiErr.status)
		_, _ = io.WriteString(w, apiErr.text)
	case apiErr != nil:
		msgs, fields := apiErr.messages, apiErr.fieldErrors
		if msgs == nil {
			msgs = []string{}
		}
		if fields == nil {
			fields = map[string]string{}
		}
		writeJSON(w, apiErr.status, map[string]any{"errorMessages": msgs, "errors": fields})
	case status == http.StatusNoContent:
		w.WriteHeader(status)
	default:
		writeJSON(w, status, out)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handle checks what every request must carry, then routes.
func (f *Fake) handle(x *exchange) (int, any, *apiError) {
	h := x.r.Header
	if got := h.Values("Authorization"); len(got) != 1 || got[0] != f.auth {
		x.header.Set("WWW-Authenticate", `Basic realm="protected-area"`)
		return 0, nil, &apiError{status: http.StatusUnauthorized, text: "Client must be authenticated to access this resource."}
	}
	if f.outage {
		return 0, nil, &apiError{status: http.StatusServiceUnavailable, text: "<html><body><h1>503 Service Unavailable</h1></body></html>"}
	}
	if f.retryAfter > 0 {
		x.header.Set("Retry-After", strconv.Itoa(f.retryAfter))
		x.header.Set("X-RateLimit-Limit", "350")
		x.header.Set("X-RateLimit-Remaining", "0")
		x.header.Set("RateLimit-Reason", "jira-quota-tenant-based")
		return 0, nil, jiraError(http.StatusTooManyRequests, "Rate limit exceeded.")
	}
	if !acceptsJSON(h.Values("Accept")) {
		return 0, nil, jiraError(http.StatusNotAcceptable, "The request must accept application/json.")
	}
	if len(x.body) > 0 {
		if ct := h.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
			return 0, nil, jiraError(http.StatusUnsupportedMediaType, "Unsupported Media Type: %q", ct)
		}
	}
	return f.route(x)
}

// acceptsJSON reports whether Accept admits application/json.
func acceptsJSON(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			media, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(media), "application/json") {
				return true
			}
		}
	}
	return false
}

type handler func(*exchange, []string) (int, any, *apiError)

// route dispatches on the path, then on the method (405 for a known path
// with another method).
func (f *Fake) route(x *exchange) (int, any, *apiError) {
	p := strings.TrimPrefix(x.r.URL.Path, "/rest/api/3/")
	if p == x.r.URL.Path {
		return 0, nil, jiraError(http.StatusNotFound, "null for uri: %s", x.r.URL.Path)
	}
	parts := strings.Split(p, "/")
	var methods map[string]handler
	switch {
	case match(parts, "search", "jql"):
		methods = map[string]handler{"GET": f.searchGet, "POST": f.searchPost}
	case match(parts, "search", "approximate-count"):
		methods = map[string]handler{"POST": f.approximateCount}
	case match(parts, "issue"):
		methods = map[string]handler{"POST": f.createIssue}
	case match(parts, "issue", "*"):
		methods = map[string]handler{"GET": f.getIssue, "PUT": f.editIssue, "DELETE": f.deleteIssue}
	case match(parts, "issue", "*", "transitions"):
		methods = map[string]handler{"GET": f.getTransitions, "POST": f.doTransition}
	case match(parts, "issue", "*", "comment"):
		methods = map[string]handler{"GET": f.getComments, "POST": f.addComment}
	case match(parts, "issue", "*", "assignee"):
		methods = map[string]handler{"PUT": f.assign}
	case match(parts, "project", "search"):
		methods = map[string]handler{"GET": f.searchProjects}
	case match(parts, "project", "*"):
		methods = map[string]handler{"GET": f.getProject}
	case match(parts, "user", "search"):
		methods = map[string]handler{"GET": f.searchUsers}
	case match(parts, "myself"):
		methods = map[string]handler{"GET": f.myself}
	default:
		return 0, nil, jiraError(http.StatusNotFound, "null for uri: %s", x.r.URL.Path)
	}
	h, ok := methods[x.r.Method]
	if !ok {
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		x.header.Set("Allow", strings.Join(allowed, ","))
		return 0, nil, jiraError(http.StatusMethodNotAllowed, "Method Not Allowed")
	}
	if (x.r.Method == "GET" || x.r.Method == "DELETE") && len(x.body) > 0 {
		return 0, nil, jiraError(http.StatusBadRequest, "A %s request must not have a body.", x.r.Method)
	}
	return h(x, parts)
}

// match reports whether path parts fit a pattern where "*" is any
// non-empty segment.
func match(parts []string, pattern ...string) bool {
	if len(parts) != len(pattern) {
		return false
	}
	for i, p := range pattern {
		if p == "*" {
			if parts[i] == "" {
				return false
			}
		} else if parts[i] != p {
			return false
		}
	}
	return true
}

// decodeBody decodes a JSON request body strictly.
func (x *exchange) decodeBody(v any) *apiError {
	if len(bytes.TrimSpace(x.body)) == 0 {
		return jiraError(http.StatusBadRequest, "No content to map due to end-of-input")
	}
	dec := json.NewDecoder(bytes.NewReader(x.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jiraError(http.StatusBadRequest, "Unrecognized or invalid request body: %v", err)
	}
	return nil
}

// intParam reads a non-negative integer query parameter; a value that is
// not one is Jira's 400.
func (x *exchange) intParam(name string, def int) (int, *apiError) {
	v := x.r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, jiraError(http.StatusBadRequest, "The value '%s' is invalid for the parameter '%s'.", v, name)
	}
	return n, nil
}

// now advances the fake's clock by a minute and returns it, so timestamps
// are distinct and deterministic.
func (f *Fake) now() time.Time {
	f.clock = f.clock.Add(time.Minute)
	return f.clock
}

// jiraTime formats a time as Jira does: 2024-01-02T03:04:05.000+0000.
func jiraTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000-0700")
}
