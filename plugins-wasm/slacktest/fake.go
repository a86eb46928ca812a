package slacktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
)

// Fake is an in-memory Slack Web API. It serves https://slack.com/api/<method>
// as Slack documents it: the bearer token in Authorization, GET with a query
// string or a form POST for read methods, JSON bodies
// ("application/json; charset=utf-8") for chat.* write methods, form bodies
// for reactions.* and files.*, cursor pagination through
// response_metadata.next_cursor, HTTP 200 with {"ok": false, "error": ...}
// for failures, missing_scope with needed and provided, and HTTP 429 with
// Retry-After when rate limited. It also serves the upload URLs of the
// external upload flow under /upload/v1/. Every request is recorded.
type Fake struct {
	// URL is the server's root, such as http://127.0.0.1:41234.
	URL string

	srv   *httptest.Server
	token string

	mu          sync.Mutex
	requests    plugintest.Recorder[Request]
	scopes      []string
	revoked     bool
	rateLimited int // requests still to answer with 429
	retryAfter  int
	uploadBase  string // root of upload URLs; "" means the request's own host
	data        *workspace
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Args are the method arguments as Slack read them (query, form or JSON).
	Args map[string]any
}

// maxBodyBytes caps a request body the fake reads.
const maxBodyBytes = 8 << 20

// AllScopes are the scopes a fake connection has unless told otherwise.
var AllScopes = []string{
	"channels:read", "groups:read", "im:read", "mpim:read",
	"channels:history", "groups:history", "im:history", "mpim:history",
	"chat:write", "reactions:write", "users:read", "files:write", "search:read",
}

// NewFake starts a fake that accepts only "Authorization: Bearer <token>",
// granted the given scopes (AllScopes when none are given). It is closed
// when the test ends.
func NewFake(t testing.TB, token string, scopes ...string) *Fake {
	t.Helper()
	if len(scopes) == 0 {
		scopes = AllScopes
	}
	f := &Fake{token: token, scopes: slices.Clone(scopes), data: newWorkspace()}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Fatalf("slacktest: fake listens on %s, want 127.0.0.1", f.URL)
	}
	return f
}

// Port is the fake's TCP port.
func (f *Fake) Port() string {
	u, _ := url.Parse(f.URL)
	return u.Port()
}

// Requests returns a copy of every request received so far.
func (f *Fake) Requests() []Request { return f.requests.All() }

// ClearRequests forgets the recorded requests.
func (f *Fake) ClearRequests() { f.requests.Clear() }

// SetScopes replaces the scopes the token was granted.
func (f *Fake) SetScopes(scopes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes = slices.Clone(scopes)
}

// Revoke makes the token answer token_revoked from now on.
func (f *Fake) Revoke() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = true
}

// RateLimit answers the next n requests with HTTP 429, Retry-After: seconds
// and {"ok": false, "error": "ratelimited"}.
func (f *Fake) RateLimit(n, seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rateLimited, f.retryAfter = n, seconds
}

// SetUploadBase makes files.getUploadURLExternal hand out upload URLs under
// root (such as https://files.slack.com, as Slack does) instead of under
// the host the request came to.
func (f *Fake) SetUploadBase(root string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploadBase = root
}

// call is one Web API method call being served.
type call struct {
	r      *http.Request
	method string
	args   map[string]any
	host   string // the Host the request came to, for URLs the fake hands out
}

// slackErr is an {"ok": false} answer.
type slackErr struct {
	code  string
	extra map[string]any
}

func errOf(code string) *slackErr { return &slackErr{code: code} }

// invalidArgs is Slack's invalid_arguments with response_metadata.messages.
func invalidArgs(msg string) *slackErr {
	return &slackErr{code: "invalid_arguments", extra: map[string]any{
		"response_metadata": map[string]any{"messages": []string{"[ERROR] " + msg}},
	}}
}

// methodSpec says how a method is called and what it needs.
type methodSpec struct {
	kind     bodyKind
	scope    string // required scope; "" for none
	required []string
	handle   func(*Fake, *call) (map[string]any, *slackErr)
}

type bodyKind int

const (
	readMethod bodyKind = iota // GET with a query, or a form POST
	jsonMethod                 // POST application/json; charset=utf-8
	formMethod                 // POST application/x-www-form-urlencoded
)

var methods = map[string]methodSpec{
	"auth.test":                    {readMethod, "", nil, (*Fake).authTest},
	"conversations.list":           {readMethod, "channels:read", nil, (*Fake).conversationsList},
	"conversations.history":        {readMethod, "channels:history", []string{"channel"}, (*Fake).conversationsHistory},
	"conversations.replies":        {readMethod, "channels:history", []string{"channel", "ts"}, (*Fake).conversationsReplies},
	"conversations.info":           {readMethod, "channels:read", []string{"channel"}, (*Fake).conversationsInfo},
	"chat.getPermalink":            {readMethod, "", []string{"channel", "message_ts"}, (*Fake).getPermalink},
	"chat.postMessage":             {jsonMethod, "chat:write", []string{"channel"}, (*Fake).postMessage},
	"chat.update":                  {jsonMethod, "chat:write", []string{"channel", "ts"}, (*Fake).updateMessage},
	"chat.delete":                  {jsonMethod, "chat:write", []string{"channel", "ts"}, (*Fake).deleteMessage},
	"reactions.add":                {formMethod, "reactions:write", []string{"channel", "timestamp", "name"}, (*Fake).reactionsAdd},
	"reactions.remove":             {formMethod, "reactions:write", []string{"name"}, (*Fake).reactionsRemove},
	"users.list":                   {readMethod, "users:read", nil, (*Fake).usersList},
	"users.info":                   {readMethod, "users:read", []string{"user"}, (*Fake).usersInfo},
	"search.messages":              {readMethod, "search:read", []string{"query"}, (*Fake).searchMessages},
	"files.getUploadURLExternal":   {formMethod, "files:write", []string{"filename", "length"}, (*Fake).getUploadURL},
	"files.completeUploadExternal": {formMethod, "files:write", []string{"files"}, (*Fake).completeUpload},
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body}
	defer func() { f.requests.Add(rec) }()

	if f.rateLimited > 0 {
		f.rateLimited--
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/upload/v1/"); ok {
		f.serveUpload(w, r, rest, body)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/api/")
	spec, known := methods[name]
	if !ok || !known {
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "unknown_method", "req_method": name})
		return
	}
	args, serr := readArgs(r, body, spec.kind)
	rec.Args = args
	if serr == nil {
		serr = f.authorize(r)
	}
	if serr == nil && spec.scope != "" && !slices.Contains(f.scopes, spec.scope) {
		serr = &slackErr{code: "missing_scope", extra: map[string]any{
			"needed": spec.scope, "provided": strings.Join(f.scopes, ","),
		}}
	}
	if serr == nil {
		for _, a := range spec.required {
			if v, ok := args[a]; !ok || v == "" {
				serr = invalidArgs("missing required field: " + a)
				break
			}
		}
	}
	out := map[string]any{}
	if serr == nil {
		out, serr = spec.handle(f, &call{r: r, method: name, args: args, host: r.Host})
	}
	if serr != nil {
		resp := map[string]any{"ok": false, "error": serr.code}
		for k, v := range serr.extra {
			resp[k] = v
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	out["ok"] = true
	writeJSON(w, http.StatusOK, out)
}

// authorize checks the bearer token as Slack does.
func (f *Fake) authorize(r *http.Request) *slackErr {
	got := r.Header.Values("Authorization")
	switch {
	case len(got) == 0:
		return errOf("not_authed")
	case len(got) != 1 || got[0] != "Bearer "+f.token:
		return errOf("invalid_auth")
	case f.revoked:
		return errOf("token_revoked")
	}
	return nil
}

// readArgs reads a method's arguments the way its documentation allows:
// query or form for read methods, JSON for chat.* writes, a form for the
// rest. Anything else is invalid_form_data (a wrong content type) or
// invalid_json.
func readArgs(r *http.Request, body []byte, kind bodyKind) (map[string]any, *slackErr) {
	args := map[string]any{}
	media, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case kind == readMethod && r.Method == http.MethodGet:
		if len(body) > 0 {
			return nil, errOf("invalid_form_data")
		}
		for k, v := range r.URL.Query() {
			args[k] = v[0]
		}
		return args, nil
	case r.Method != http.MethodPost:
		// Write methods take their arguments in a POST body only.
		return nil, errOf("invalid_form_data")
	case kind == jsonMethod:
		if media != "application/json" || !strings.EqualFold(params["charset"], "utf-8") {
			return nil, errOf("invalid_form_data")
		}
		if err := json.Unmarshal(body, &args); err != nil {
			return nil, errOf("invalid_json")
		}
		return args, nil
	default: // a form: read methods may POST one, form methods must
		if media != "application/x-www-form-urlencoded" {
			return nil, errOf("invalid_form_data")
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errOf("invalid_form_data")
		}
		for k, v := range form {
			args[k] = v[0]
		}
		return args, nil
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// str returns argument name as a string ("" when absent).
func (c *call) str(name string) string {
	switch v := c.args[name].(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// boolArg reads a boolean argument ("true"/"1" or a JSON true).
func (c *call) boolArg(name string, def bool) bool {
	s := c.str(name)
	if s == "" {
		return def
	}
	return s == "true" || s == "1"
}

// limit reads limit (or count) as Slack does: absent takes def, values above
// max are cut to max, and anything not a positive number is invalid_limit.
func (c *call) limit(name string, def, max int) (int, *slackErr) {
	s := c.str(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errOf("invalid_limit")
	}
	return min(n, max), nil
}

// cursorPrefix marks the fake's cursors; Slack's are opaque base64 strings.
const cursorPrefix = "next:"

func encodeCursor(offset int) string {
	return base64.StdEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

// cursor returns the offset a cursor argument points at (0 without one).
func (c *call) cursor(total int) (int, *slackErr) {
	s := c.str("cursor")
	if s == "" {
		return 0, nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(raw), cursorPrefix)
	n, convErr := strconv.Atoi(rest)
	if err != nil || !ok || convErr != nil || n < 0 || n > total {
		return 0, errOf("invalid_cursor")
	}
	return n, nil
}

// page cuts items to one page and returns it with the next cursor ("" on the last page).
func page[T any](c *call, items []T, def, max int) ([]T, string, *slackErr) {
	limit, serr := c.limit("limit", def, max)
	if serr != nil {
		return nil, "", serr
	}
	start, serr := c.cursor(len(items))
	if serr != nil {
		return nil, "", serr
	}
	end := min(start+limit, len(items))
	next := ""
	if end < len(items) {
		next = encodeCursor(end)
	}
	return items[start:end], next, nil
}

func meta(next string) map[string]any {
	return map[string]any{"next_cursor": next}
}

func (f *Fake) serveUpload(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	up, ok := f.data.uploads[id]
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case !ok:
		http.Error(w, "unknown upload", http.StatusNotFound)
	case len(body) != up.length:
		http.Error(w, fmt.Sprintf("expected %d bytes, got %d", up.length, len(body)), http.StatusBadRequest)
	default:
		up.content = body
		up.uploaded = true
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "OK - %d", len(body))
	}
}
