package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
)

// Fake is an in-memory GitHub REST API (version 2022-11-28) served on
// 127.0.0.1. It answers the endpoints the GitHub plugin uses the way GitHub
// documents them: paths, methods, query parameters, Link pagination, and the
// error bodies and statuses GitHub sends. Every request is recorded.
//
// It is stricter than GitHub in one respect: a request without the
// Accept or X-GitHub-Api-Version header is refused (GitHub would assume
// defaults), so that a plugin that forgets them is caught.
type Fake struct {
	// URL is the base URL of the API, such as http://127.0.0.1:41234.
	URL string

	srv   *httptest.Server
	token string

	mu          sync.Mutex
	requests    plugintest.Recorder[Request]
	login       string
	userID      int64
	repos       map[string]*repoRecord // by lower-case owner/name
	nextID      int64
	clock       time.Time
	rateLimited time.Time // reset time while rate limiting; zero when not
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

// Version is the only REST API version the fake accepts.
const Version = "2022-11-28"

// NewFake starts a fake that accepts only "Authorization: Bearer <token>".
// The authenticated user is "octocat". The server is closed when the test
// ends.
func NewFake(t testing.TB, token string) *Fake {
	t.Helper()
	f := &Fake{
		token:  token,
		login:  "octocat",
		userID: 1,
		repos:  map[string]*repoRecord{},
		nextID: 1000,
		clock:  time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Fatalf("githubtest: fake listens on %s, want 127.0.0.1", f.URL)
	}
	return f
}

// Login returns the authenticated user's login.
func (f *Fake) Login() string { return f.login }

// Requests returns a copy of every request received so far.
func (f *Fake) Requests() []Request { return f.requests.All() }

// ClearRequests forgets the recorded requests.
func (f *Fake) ClearRequests() { f.requests.Clear() }

// LimitRate makes every following request fail as GitHub does when the
// primary rate limit is used up: 403 with X-RateLimit-Remaining: 0 and
// X-RateLimit-Reset set to reset. A zero reset lifts the limit.
func (f *Fake) LimitRate(reset time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rateLimited = reset
}

// apiError is an error response in GitHub's documented shape.
type apiError struct {
	status int
	body   map[string]any
}

const docsURL = "https://docs.github.com/rest"

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, body: map[string]any{"message": fmt.Sprintf(format, args...), "documentation_url": docsURL}}
}

func notFound() *apiError { return errorf(http.StatusNotFound, "Not Found") }

// validationFailed is GitHub's 422 with an errors array.
func validationFailed(errs ...map[string]any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Validation Failed", "errors": errs, "documentation_url": docsURL,
	}}
}

func fieldError(resource, field, code string) map[string]any {
	return map[string]any{"resource": resource, "field": field, "code": code}
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
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"message": "request body too large"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests.Add(Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
	})
	x := &exchange{r: r, body: body, header: w.Header()}
	status, out, apiErr := f.handle(x)
	if apiErr != nil {
		writeJSON(w, apiErr.status, apiErr.body)
		return
	}
	writeJSON(w, status, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handle checks what GitHub checks on every request, then routes.
func (f *Fake) handle(x *exchange) (int, any, *apiError) {
	h := x.r.Header
	if got := h.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+f.token {
		return 0, nil, errorf(http.StatusUnauthorized, "Bad credentials")
	}
	if h.Get("User-Agent") == "" {
		return 0, nil, errorf(http.StatusForbidden, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).")
	}
	if v := h.Get("X-GitHub-Api-Version"); v != Version {
		return 0, nil, errorf(http.StatusBadRequest, "API version '%s' is not supported.", v)
	}
	if accept := h.Get("Accept"); !acceptsGitHubJSON(accept) {
		return 0, nil, errorf(http.StatusUnsupportedMediaType, "Unsupported 'Accept' header: '%s'. Must accept 'application/json'.", accept)
	}
	x.header.Set("X-GitHub-Media-Type", "github.v3; format=json")
	x.header.Set("X-RateLimit-Limit", "5000")
	x.header.Set("X-RateLimit-Resource", "core")
	if !f.rateLimited.IsZero() {
		x.header.Set("X-RateLimit-Remaining", "0")
		x.header.Set("X-RateLimit-Used", "5000")
		x.header.Set("X-RateLimit-Reset", strconv.FormatInt(f.rateLimited.Unix(), 10))
		return 0, nil, &apiError{status: http.StatusForbidden, body: map[string]any{
			"message":           fmt.Sprintf("API rate limit exceeded for user ID %d. If you reach out to GitHub Support for help, please include the request ID.", f.userID),
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		}}
	}
	x.header.Set("X-RateLimit-Remaining", "4999")
	x.header.Set("X-RateLimit-Reset", strconv.FormatInt(f.clock.Add(time.Hour).Unix(), 10))
	return f.route(x)
}

// acceptsGitHubJSON reports whether an Accept header admits GitHub's JSON.
func acceptsGitHubJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		media, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch media = strings.ToLower(strings.TrimSpace(media)); {
		case media == "application/json", media == "*/*", media == "application/*":
			return true
		case strings.HasPrefix(media, "application/vnd.github") && strings.HasSuffix(media, "+json"):
			return true
		}
	}
	return false
}

// route dispatches on the path, then on the method (405 for a known path
// with another method).
func (f *Fake) route(x *exchange) (int, any, *apiError) {
	parts := strings.Split(strings.Trim(x.r.URL.EscapedPath(), "/"), "/")
	for i, p := range parts {
		// Segments are unescaped one by one, so an escaped slash stays
		// inside its segment (a branch such as feature%2Flogin).
		s, err := url.PathUnescape(p)
		if err != nil {
			return 0, nil, notFound()
		}
		parts[i] = s
	}
	type handler func(*exchange, []string) (int, any, *apiError)
	var methods map[string]handler
	switch {
	case match(parts, "user"):
		methods = map[string]handler{"GET": f.getUser}
	case match(parts, "user", "repos"):
		methods = map[string]handler{"GET": f.listUserRepos}
	case match(parts, "search", "issues"):
		methods = map[string]handler{"GET": f.searchIssues}
	case match(parts, "search", "repositories"):
		methods = map[string]handler{"GET": f.searchRepos}
	case match(parts, "repos", "*", "*"):
		methods = map[string]handler{"GET": f.getRepo}
	case match(parts, "repos", "*", "*", "issues"):
		methods = map[string]handler{"GET": f.listIssues, "POST": f.createIssue}
	case match(parts, "repos", "*", "*", "issues", "#"):
		methods = map[string]handler{"GET": f.getIssue, "PATCH": f.updateIssue}
	case match(parts, "repos", "*", "*", "issues", "#", "comments"):
		methods = map[string]handler{"GET": f.listComments, "POST": f.createComment}
	case match(parts, "repos", "*", "*", "pulls"):
		methods = map[string]handler{"GET": f.listPulls, "POST": f.createPull}
	case match(parts, "repos", "*", "*", "pulls", "#"):
		methods = map[string]handler{"GET": f.getPull}
	case match(parts, "repos", "*", "*", "pulls", "#", "merge"):
		methods = map[string]handler{"PUT": f.mergePull}
	case match(parts, "repos", "*", "*", "pulls", "#", "reviews"):
		methods = map[string]handler{"GET": f.listReviews, "POST": f.createReview}
	case match(parts, "repos", "*", "*", "issues", "#", "labels"):
		methods = map[string]handler{"POST": f.addIssueLabels}
	case match(parts, "repos", "*", "*", "labels"):
		methods = map[string]handler{"GET": f.listLabels}
	case match(parts, "repos", "*", "*", "branches"):
		methods = map[string]handler{"GET": f.listBranches}
	case matchPrefix(parts, "repos", "*", "*", "branches"):
		methods = map[string]handler{"GET": f.getBranch}
	case match(parts, "repos", "*", "*", "commits"):
		methods = map[string]handler{"GET": f.listCommits}
	case matchPrefix(parts, "repos", "*", "*", "commits"):
		methods = map[string]handler{"GET": f.getCommit}
	case match(parts, "repos", "*", "*", "contents"), matchPrefix(parts, "repos", "*", "*", "contents"):
		methods = map[string]handler{"GET": f.getContents}
	case match(parts, "repos", "*", "*", "releases"):
		methods = map[string]handler{"GET": f.listReleases}
	case match(parts, "repos", "*", "*", "releases", "latest"):
		methods = map[string]handler{"GET": f.getLatestRelease}
	case match(parts, "repos", "*", "*", "actions", "workflows"):
		methods = map[string]handler{"GET": f.listWorkflows}
	case match(parts, "repos", "*", "*", "actions", "runs"):
		methods = map[string]handler{"GET": f.listRuns}
	default:
		return 0, nil, notFound()
	}
	h, ok := methods[x.r.Method]
	if !ok {
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		x.header.Set("Allow", strings.Join(allowed, ", "))
		return 0, nil, errorf(http.StatusMethodNotAllowed, "Method Not Allowed")
	}
	return h(x, parts)
}

// match reports whether path parts fit a pattern where "*" is any segment
// and "#" a positive number.
func match(parts []string, pattern ...string) bool {
	if len(parts) != len(pattern) {
		return false
	}
	for i, p := range pattern {
		switch p {
		case "*":
			if parts[i] == "" {
				return false
			}
		case "#":
			if n, err := strconv.Atoi(parts[i]); err != nil || n < 1 {
				return false
			}
		default:
			if parts[i] != p {
				return false
			}
		}
	}
	return true
}

// matchPrefix reports whether parts start with the pattern (as match reads
// it) and go on with at least one more segment, none of them empty.
func matchPrefix(parts []string, pattern ...string) bool {
	if len(parts) <= len(pattern) || !match(parts[:len(pattern)], pattern...) {
		return false
	}
	return !slices.Contains(parts[len(pattern):], "")
}

// decodeBody decodes a JSON request body; GitHub answers 400 "Problems
// parsing JSON" when it cannot.
func (x *exchange) decodeBody(v any) *apiError {
	if len(bytes.TrimSpace(x.body)) == 0 {
		return errorf(http.StatusBadRequest, "Problems parsing JSON")
	}
	if err := json.Unmarshal(x.body, v); err != nil {
		return errorf(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

// pageParams reads page and per_page as GitHub does: per_page above 100 is
// cut to 100, missing or invalid values take the defaults (1 and 30).
func (x *exchange) pageParams() (page, perPage int) {
	q := x.r.URL.Query()
	page, perPage = 1, 30
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n >= 1 {
		page = n
	}
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n >= 1 {
		perPage = min(n, 100)
	}
	return page, perPage
}

// paginate returns the page of items selected by the request and sets the
// Link header GitHub sends: next and last after a page that is not the
// last, first and prev after one that is not the first.
func paginate[T any](x *exchange, baseURL string, items []T) []T {
	page, perPage := x.pageParams()
	last := max(1, (len(items)+perPage-1)/perPage)
	link := func(p int, rel string) string {
		q := x.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		return fmt.Sprintf("<%s%s?%s>; rel=%q", baseURL, x.r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	if len(links) > 0 {
		x.header.Set("Link", strings.Join(links, ", "))
	}
	start := (page - 1) * perPage
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+perPage, len(items))]
}

// enumParam reads a query parameter that must be one of allowed; an empty
// value gives def. Other values are GitHub's 422 "invalid".
func (x *exchange) enumParam(resource, name, def string, allowed ...string) (string, *apiError) {
	v := x.r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	e := fieldError(resource, name, "invalid")
	e["value"] = v
	return "", validationFailed(e)
}

// now advances the fake's clock by a second and returns it, so timestamps
// are distinct and deterministic.
func (f *Fake) now() time.Time {
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

func (f *Fake) id() int64 {
	f.nextID++
	return f.nextID
}
