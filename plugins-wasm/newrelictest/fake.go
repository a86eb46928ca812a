package newrelictest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
)

// Fake is an in-memory NerdGraph (New Relic's GraphQL API) served on
// 127.0.0.1 at POST /graphql. It reads each request the way NerdGraph does:
// the API-Key header must hold the user key, the body must be JSON
// ({"query", "variables", "operationName"}) sent as application/json, the
// query is parsed and validated against the part of the schema it serves
// (unknown fields and arguments, undeclared, unused or mistyped variables
// are GraphQL errors), and the answer has NerdGraph's shape: {"data": ...}
// plus an "errors" array with message, path and extensions.errorClass when
// a field fails. Every request is recorded.
type Fake struct {
	// URL is the API's base URL, such as http://127.0.0.1:41234; the
	// endpoint is URL + "/graphql".
	URL string

	srv    *httptest.Server
	apiKey string

	mu        sync.Mutex
	requests  plugintest.Recorder[Request]
	user      User
	accounts  []*Account
	entities  []*Entity
	nrql      map[string][]map[string]any // by account id + "|" + query
	canned    []cannedResponse
	clock     time.Time
	deployIDs int
}

// Request is one request the fake received.
type Request struct {
	Method        string
	Path          string
	Header        http.Header
	Body          []byte
	Query         string         // the GraphQL document
	OperationName string         // from the body, if sent
	Variables     map[string]any // from the body
}

// User is the owner of the API key.
type User struct {
	ID          int
	Name, Email string
}

// Account is one New Relic account with its alert data and events.
type Account struct {
	ID          int
	Name        string
	Issues      []Issue
	Incidents   []Incident
	Deployments []map[string]any // Deployment events
}

// Issue is an alert issue (AiIssuesIssue).
type Issue struct {
	ID, Priority, State                string
	Title, Sources, EntityNames        []string
	EntityGUIDs, ConditionName, Policy []string
	CreatedAt, ActivatedAt, ClosedAt   int64
	TotalIncidents                     int
}

// Incident is an alert incident (AiIssuesIIncident).
type Incident struct {
	ID, Title, Priority, State string
	Description                []string
	EntityGUID, EntityName     string
	CreatedAt, ClosedAt        int64
}

// Entity is a monitored entity; Dashboard is set for dashboards.
type Entity struct {
	GUID                           string
	Name, EntityType, Domain, Type string
	AccountID                      int
	Reporting                      bool
	AlertSeverity, Permalink       string
	Tags                           map[string][]string
	Dashboard                      *Dashboard
}

// Dashboard holds the dashboard-only fields of an entity.
type Dashboard struct {
	CreatedAt, UpdatedAt string
	OwnerEmail           string
	OwnerID              int
}

// cannedResponse replaces the next answer.
type cannedResponse struct {
	status int
	header http.Header
	body   string
}

// pageSize is how many items one page of a paginated field holds; small,
// so that tests cross page boundaries.
const pageSize = 2

// maxBodyBytes caps a request body the fake reads.
const maxBodyBytes = 1 << 20

// NewFake starts a fake that accepts only "API-Key: <apiKey>". The server
// is closed when the test ends.
func NewFake(t testing.TB, apiKey string) *Fake {
	t.Helper()
	f := &Fake{
		apiKey: apiKey,
		user:   User{ID: 1001, Name: "Ada Lovelace", Email: "ada@example.com"},
		nrql:   map[string][]map[string]any{},
		clock:  time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Fatalf("newrelictest: fake listens on %s, want 127.0.0.1", f.URL)
	}
	return f
}

// Now is the fake's clock, in epoch milliseconds.
func (f *Fake) Now() int64 { return f.clock.UnixMilli() }

// User returns the API key's user.
func (f *Fake) User() User { return f.user }

// AddAccount adds an account the key can access.
func (f *Fake) AddAccount(a *Account) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts = append(f.accounts, a)
}

// AddEntity adds an entity and returns its GUID, built the way New Relic
// builds them: base64 of "accountId|DOMAIN|TYPE|id" without padding.
func (f *Fake) AddEntity(e *Entity) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.GUID == "" {
		raw := fmt.Sprintf("%d|%s|%s|%d", e.AccountID, e.Domain, e.Type, 100+len(f.entities))
		e.GUID = base64.RawStdEncoding.EncodeToString([]byte(raw))
	}
	if e.Permalink == "" {
		e.Permalink = "https://one.newrelic.com/redirect/entity/" + e.GUID
	}
	f.entities = append(f.entities, e)
	return e.GUID
}

// Entity returns a copy of the entity with guid.
func (f *Fake) Entity(guid string) (Entity, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.entities {
		if e.GUID == guid {
			c := *e
			c.Tags = map[string][]string{}
			for k, v := range e.Tags {
				c.Tags[k] = slices.Clone(v)
			}
			return c, true
		}
	}
	return Entity{}, false
}

// SetNRQLResult makes an NRQL query on an account return rows.
func (f *Fake) SetNRQLResult(account int, query string, rows []map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nrql[strconv.Itoa(account)+"|"+query] = rows
}

// FailNext makes the next request get status and body instead of an
// answer, for outages, rate limits and server-side errors.
func (f *Fake) FailNext(status int, header http.Header, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.canned = append(f.canned, cannedResponse{status, header, body})
}

// Requests returns a copy of every request received so far.
func (f *Fake) Requests() []Request { return f.requests.All() }

// ClearRequests forgets the recorded requests.
func (f *Fake) ClearRequests() { f.requests.Clear() }

// Deployments returns the Deployment events of an account.
func (f *Fake) Deployments(account int) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.account(account); a != nil {
		return slices.Clone(a.Deployments)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func errorBody(errs ...gqlError) map[string]any { return map[string]any{"errors": errs} }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody(gqlError{Message: "Request body too large"}))
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var envelope struct {
		Query         string         `json:"query"`
		Variables     map[string]any `json:"variables"`
		OperationName string         `json:"operationName"`
	}
	decodeErr := json.Unmarshal(body, &envelope)
	req.Query, req.Variables, req.OperationName = envelope.Query, envelope.Variables, envelope.OperationName

	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests.Add(req)

	switch {
	case r.URL.Path != "/graphql":
		http.NotFound(w, r)
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody(gqlError{Message: "Method not allowed; use POST"}))
		return
	case r.Header.Get("API-Key") != f.apiKey || len(r.Header.Values("API-Key")) != 1:
		writeJSON(w, http.StatusUnauthorized, errorBody(gqlError{Message: "Unauthorized", Extensions: map[string]any{"error_code": "BAD_API_KEY"}}))
		return
	}
	if len(f.canned) > 0 {
		c := f.canned[0]
		f.canned = f.canned[1:]
		for k, v := range c.header {
			w.Header()[k] = v
		}
		w.WriteHeader(c.status)
		_, _ = io.WriteString(w, c.body)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errorBody(gqlError{Message: "Content-Type must be application/json"}))
		return
	}
	if decodeErr != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(gqlError{Message: "Could not parse the request body as JSON: " + decodeErr.Error()}))
		return
	}
	if strings.TrimSpace(envelope.Query) == "" {
		writeJSON(w, http.StatusBadRequest, errorBody(gqlError{Message: "No query document supplied"}))
		return
	}
	op, err := parseOperation(envelope.Query)
	if err != nil {
		e := gqlError{Message: err.Error()}
		if se, ok := err.(*syntaxError); ok {
			e.Locations = []location{{se.line, se.col}}
		}
		writeJSON(w, http.StatusOK, errorBody(e))
		return
	}
	if envelope.OperationName != "" && envelope.OperationName != op.Name {
		writeJSON(w, http.StatusOK, errorBody(gqlError{Message: fmt.Sprintf("Unknown operation named \"%s\".", envelope.OperationName)}))
		return
	}
	if errs := validate(op, envelope.Variables); len(errs) > 0 {
		writeJSON(w, http.StatusOK, errorBody(errs...))
		return
	}
	x := &executor{vars: envelope.Variables}
	root := f.queryRoot()
	if op.Kind == "mutation" {
		root = f.mutationRoot()
	}
	data := x.selectObject(root, op.Sel, nil)
	resp := map[string]any{"data": data}
	if len(x.errors) > 0 {
		resp["errors"] = x.errors
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *Fake) account(id int) *Account {
	for _, a := range f.accounts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func (f *Fake) entity(guid string) *Entity {
	for _, e := range f.entities {
		if e.GUID == guid {
			return e
		}
	}
	return nil
}

func fieldError(class, format string, args ...any) *fieldFailure {
	return &fieldFailure{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"errorClass": class}}
}

// intArg reads an Int argument that validation already checked.
func intArg(args map[string]any, name string) int {
	f, _ := args[name].(float64)
	return int(f)
}

func (f *Fake) queryRoot() *object {
	actor := &object{Type: "Actor", Fields: map[string]any{
		"user": &object{Type: "User", Fields: map[string]any{"id": f.user.ID, "name": f.user.Name, "email": f.user.Email}},
		"accounts": resolver(func(map[string]any) (any, *fieldFailure) {
			var out []*object
			for _, a := range f.accounts {
				out = append(out, &object{Type: "AccountOutline", Fields: map[string]any{"id": a.ID, "name": a.Name, "reportingEventTypes": []string{"Transaction", "Deployment"}}})
			}
			return out, nil
		}),
		"account": resolver(func(args map[string]any) (any, *fieldFailure) {
			id := intArg(args, "id")
			a := f.account(id)
			if a == nil {
				return nil, fieldError("FORBIDDEN", "Access denied: account %d is not accessible with this API key", id)
			}
			return f.accountObject(a), nil
		}),
		"entity": resolver(func(args map[string]any) (any, *fieldFailure) {
			guid, _ := args["guid"].(string)
			if _, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(guid, "=")); err != nil {
				return nil, fieldError("INVALID_INPUT", "Invalid entity guid: %s", guid)
			}
			e := f.entity(guid)
			if e == nil {
				return (*object)(nil), nil
			}
			return entityObject(e, "Entity"), nil
		}),
		"entitySearch": resolver(f.entitySearch),
	}}
	return &object{Type: "Query", Fields: map[string]any{"actor": actor}}
}

func entityObject(e *Entity, typ string) *object {
	keys := make([]string, 0, len(e.Tags))
	for k := range e.Tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	tags := make([]*object, 0, len(keys))
	for _, k := range keys {
		tags = append(tags, &object{Type: "EntityTag", Fields: map[string]any{"key": k, "values": e.Tags[k]}})
	}
	fields := map[string]any{
		"guid": e.GUID, "name": e.Name, "entityType": e.EntityType, "domain": e.Domain, "type": e.Type,
		"accountId": e.AccountID, "reporting": e.Reporting, "alertSeverity": e.AlertSeverity, "permalink": e.Permalink, "tags": tags,
	}
	if e.Dashboard != nil {
		if typ == "EntityOutline" {
			typ = "DashboardEntityOutline"
		}
		fields["createdAt"] = e.Dashboard.CreatedAt
		fields["updatedAt"] = e.Dashboard.UpdatedAt
		fields["dashboardParentGuid"] = nil
		fields["permissions"] = "PUBLIC_READ_WRITE"
		fields["owner"] = &object{Type: "DashboardOwnerInfo", Fields: map[string]any{"email": e.Dashboard.OwnerEmail, "userId": e.Dashboard.OwnerID}}
	}
	return &object{Type: typ, Fields: fields}
}

// cursorState is what a fake cursor encodes: where the next page starts and
// which search it belongs to.
type cursorState struct {
	Offset int    `json:"o"`
	Scope  string `json:"s"`
}

func encodeCursor(offset int, scope string) string {
	b, _ := json.Marshal(cursorState{offset, scope})
	return base64.RawURLEncoding.EncodeToString(b)
}

// page cuts items at cursor; next is nil at the last page.
func page[T any](items []T, cursor any, scope string, size int) ([]T, any, *fieldFailure) {
	start := 0
	if s, ok := cursor.(string); ok && s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		var c cursorState
		if err != nil || json.Unmarshal(raw, &c) != nil || c.Scope != scope || c.Offset < 0 || c.Offset > len(items) {
			return nil, nil, fieldError("INVALID_INPUT", "Invalid cursor: %s", s)
		}
		start = c.Offset
	}
	end := min(start+size, len(items))
	var next any
	if end < len(items) {
		next = encodeCursor(end, scope)
	}
	return items[start:end], next, nil
}

// searchCondition is one "attribute OP 'value'" term of an entity search
// query.
type searchCondition struct {
	attr, op, value string
}

var conditionRe = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9.]*)\s*(=|LIKE|like)\s*'((?:[^'\\]|\\.)*)'\s*$`)

// parseSearchQuery reads the subset of New Relic's entity search syntax the
// fake supports: terms joined by AND, each "attribute = 'v'" or
// "attribute LIKE 'v'" (a case-insensitive substring match, % wildcards
// ignored).
func parseSearchQuery(q string) ([]searchCondition, bool) {
	var out []searchCondition
	for _, term := range regexp.MustCompile(`(?i)\s+AND\s+`).Split(q, -1) {
		m := conditionRe.FindStringSubmatch(term)
		if m == nil {
			return nil, false
		}
		v := strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(m[3])
		out = append(out, searchCondition{strings.ToLower(m[1]), strings.ToUpper(m[2]), v})
	}
	return out, len(out) > 0
}

func (c searchCondition) matches(e *Entity) bool {
	var got string
	switch {
	case c.attr == "name":
		got = e.Name
	case c.attr == "domain":
		got = e.Domain
	case c.attr == "type":
		got = e.Type
	case c.attr == "accountid":
		got = strconv.Itoa(e.AccountID)
	case c.attr == "reporting":
		got = strconv.FormatBool(e.Reporting)
	case strings.HasPrefix(c.attr, "tags."):
		for k, vs := range e.Tags {
			if strings.EqualFold("tags."+k, c.attr) {
				for _, v := range vs {
					if c.op == "=" && v == c.value || c.op == "LIKE" && strings.Contains(strings.ToLower(v), strings.ToLower(strings.Trim(c.value, "%"))) {
						return true
					}
				}
			}
		}
		return false
	default:
		return false
	}
	if c.op == "LIKE" {
		return strings.Contains(strings.ToLower(got), strings.ToLower(strings.Trim(c.value, "%")))
	}
	return got == c.value
}

func (f *Fake) entitySearch(args map[string]any) (any, *fieldFailure) {
	var match func(*Entity) bool
	var scope string
	query, hasQuery := args["query"].(string)
	builder, hasBuilder := args["queryBuilder"].(map[string]any)
	switch {
	case hasQuery && hasBuilder:
		return nil, fieldError("INVALID_INPUT", "Provide either query or queryBuilder, not both")
	case hasQuery:
		conds, ok := parseSearchQuery(query)
		if !ok {
			return nil, fieldError("INVALID_INPUT", "Invalid entity search query: %s", query)
		}
		scope = "q:" + query
		match = func(e *Entity) bool {
			for _, c := range conds {
				if !c.matches(e) {
					return false
				}
			}
			return true
		}
	case hasBuilder:
		scope = "b:" + compactJSON(builder)
		match = func(e *Entity) bool {
			if t, ok := builder["type"].(string); ok && e.Type != t {
				return false
			}
			if d, ok := builder["domain"].(string); ok && e.Domain != d {
				return false
			}
			if n, ok := builder["name"].(string); ok && !strings.Contains(strings.ToLower(e.Name), strings.ToLower(n)) {
				return false
			}
			return true
		}
	default:
		return nil, fieldError("INVALID_INPUT", "An entity search needs a query or a queryBuilder")
	}
	var found []*Entity
	for _, e := range f.entities {
		if match(e) {
			found = append(found, e)
		}
	}
	return &object{Type: "EntitySearch", Fields: map[string]any{
		"count": len(found),
		"query": query,
		"results": resolver(func(a map[string]any) (any, *fieldFailure) {
			items, next, fail := page(found, a["cursor"], scope, pageSize)
			if fail != nil {
				return nil, fail
			}
			outlines := make([]*object, len(items))
			for i, e := range items {
				outlines[i] = entityObject(e, "EntityOutline")
			}
			return &object{Type: "EntitySearchResult", Fields: map[string]any{"entities": outlines, "nextCursor": next}}, nil
		}),
	}}, nil
}

func (f *Fake) accountObject(a *Account) *object {
	return &object{Type: "Account", Fields: map[string]any{
		"id":   a.ID,
		"name": a.Name,
		"nrql": resolver(func(args map[string]any) (any, *fieldFailure) { return f.runNRQL(a, args) }),
		"aiIssues": &object{Type: "AiIssuesAccountStitchedFields", Fields: map[string]any{
			"issues":    resolver(func(args map[string]any) (any, *fieldFailure) { return f.issues(a, args) }),
			"incidents": resolver(func(args map[string]any) (any, *fieldFailure) { return f.incidents(a, args) }),
		}},
	}}
}

// window reads an AiIssuesTimeWindowInput; ok is false without one.
func window(args map[string]any) (start, end int64, ok bool) {
	w, ok := args["timeWindow"].(map[string]any)
	if !ok {
		return 0, 0, false
	}
	s, _ := w["startTime"].(float64)
	e, _ := w["endTime"].(float64)
	return int64(s), int64(e), true
}

func (f *Fake) issues(a *Account, args map[string]any) (any, *fieldFailure) {
	var states []string
	if filter, ok := args["filter"].(map[string]any); ok {
		switch s := filter["states"].(type) {
		case []any:
			for _, v := range s {
				states = append(states, v.(string))
			}
		case string:
			states = append(states, s)
		}
	}
	start, end, windowed := window(args)
	var found []Issue
	for _, is := range a.Issues {
		if len(states) > 0 && !slices.Contains(states, is.State) {
			continue
		}
		if windowed && (is.CreatedAt < start || is.CreatedAt > end) {
			continue
		}
		found = append(found, is)
	}
	items, next, fail := page(found, args["cursor"], fmt.Sprintf("issues:%d:%v:%d:%d", a.ID, states, start, end), pageSize)
	if fail != nil {
		return nil, fail
	}
	out := make([]*object, len(items))
	for i, is := range items {
		out[i] = &object{Type: "AiIssuesIssue", Fields: map[string]any{
			"issueId": is.ID, "title": is.Title, "priority": is.Priority, "state": is.State, "sources": is.Sources,
			"entityGuids": is.EntityGUIDs, "entityNames": is.EntityNames, "conditionName": is.ConditionName, "policyName": is.Policy,
			"createdAt": is.CreatedAt, "activatedAt": nullable(is.ActivatedAt), "closedAt": nullable(is.ClosedAt), "updatedAt": is.CreatedAt,
			"totalIncidents": is.TotalIncidents, "accountIds": []int{a.ID}, "description": is.Title,
		}}
	}
	return &object{Type: "AiIssuesIssueData", Fields: map[string]any{"issues": out, "nextCursor": next}}, nil
}

func nullable(ms int64) any {
	if ms == 0 {
		return nil
	}
	return ms
}

func (f *Fake) incidents(a *Account, args map[string]any) (any, *fieldFailure) {
	start, end, windowed := window(args)
	var found []Incident
	for _, in := range a.Incidents {
		if windowed && (in.CreatedAt < start || in.CreatedAt > end) {
			continue
		}
		found = append(found, in)
	}
	items, next, fail := page(found, args["cursor"], fmt.Sprintf("incidents:%d:%d:%d", a.ID, start, end), pageSize)
	if fail != nil {
		return nil, fail
	}
	out := make([]*object, len(items))
	for i, in := range items {
		out[i] = &object{Type: "AiIssuesNewRelicIncident", Fields: map[string]any{
			"incidentId": in.ID, "title": in.Title, "description": in.Description, "priority": in.Priority, "state": in.State,
			"entityGuids": in.EntityGUID, "entityNames": in.EntityName, "createdAt": in.CreatedAt, "closedAt": nullable(in.ClosedAt),
			"updatedAt": in.CreatedAt, "accountIds": []int{a.ID}, "environmentId": 1,
		}}
	}
	return &object{Type: "AiIssuesIncidentData", Fields: map[string]any{"incidents": out, "nextCursor": next}}, nil
}

// deploymentQueryRe is the shape of the Deployment queries the fake runs
// itself instead of looking them up.
var deploymentQueryRe = regexp.MustCompile(`^SELECT \* FROM Deployment(?: WHERE (.+?))? SINCE (\d+) days ago LIMIT (\d+)$`)

// nrqlLiteralTermRe is one "attribute = 'literal'" term with backslash
// escapes inside the literal.
var nrqlLiteralTermRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9.]*) = '((?:[^'\\]|\\.)*)'(?: AND |$)`)

func (f *Fake) runNRQL(a *Account, args map[string]any) (any, *fieldFailure) {
	query, _ := args["query"].(string)
	if t, ok := args["timeout"].(float64); ok && t > 120 {
		return nil, fieldError("INVALID_INPUT", "timeout must be at most 120 seconds")
	}
	first := strings.ToUpper(strings.Fields(query + " x")[0])
	if first != "SELECT" && first != "FROM" {
		word := strings.Fields(query + " ")
		unexpected := ""
		if len(word) > 0 {
			unexpected = word[0]
		}
		return nil, fieldError("INVALID_INPUT", "NRQL Syntax Error: Error at line 1 position 1, unexpected '%s'", unexpected)
	}
	results := []map[string]any{}
	eventTypes := []string{}
	if rows, ok := f.nrql[strconv.Itoa(a.ID)+"|"+query]; ok {
		results = rows
	} else if m := deploymentQueryRe.FindStringSubmatch(query); m != nil {
		var fail *fieldFailure
		if results, fail = f.deployments(a, m[1], m[2], m[3]); fail != nil {
			return nil, fail
		}
		eventTypes = []string{"Deployment"}
	}
	rows := make([]any, len(results))
	for i, r := range results {
		rows[i] = r
	}
	meta := &object{Type: "NrdbMetadata", Fields: map[string]any{
		"eventTypes": eventTypes,
		"facets":     nil,
		"timeWindow": &object{Type: "NrdbMetadataTimeWindow", Fields: map[string]any{"begin": f.Now() - 3600_000, "end": f.Now()}},
	}}
	return &object{Type: "NrdbResultContainer", Fields: map[string]any{"results": rows, "metadata": meta, "nrql": query}}, nil
}

// deployments evaluates "SELECT * FROM Deployment [WHERE a = 'x' AND ...]
// SINCE n days ago LIMIT m" over the account's Deployment events.
func (f *Fake) deployments(a *Account, where, days, limit string) ([]map[string]any, *fieldFailure) {
	conds := map[string]string{}
	for rest := where; rest != ""; {
		m := nrqlLiteralTermRe.FindStringSubmatch(rest)
		if m == nil {
			return nil, fieldError("INVALID_INPUT", "NRQL Syntax Error: Error at line 1, unexpected '%s'", rest)
		}
		var b strings.Builder
		lit := m[2]
		for i := 0; i < len(lit); i++ {
			if lit[i] == '\\' && i+1 < len(lit) {
				i++
			}
			b.WriteByte(lit[i])
		}
		conds[m[1]] = b.String()
		rest = rest[len(m[0]):]
	}
	d, _ := strconv.Atoi(days)
	n, _ := strconv.Atoi(limit)
	since := f.Now() - int64(d)*24*3600_000
	out := []map[string]any{}
	for i := len(a.Deployments) - 1; i >= 0 && len(out) < n; i-- {
		ev := a.Deployments[i]
		ts, _ := ev["timestamp"].(int64)
		if ts < since {
			continue
		}
		ok := true
		for k, v := range conds {
			if fmt.Sprint(ev[k]) != v {
				ok = false
			}
		}
		if ok {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (f *Fake) mutationRoot() *object {
	return &object{Type: "Mutation", Fields: map[string]any{
		"changeTrackingCreateDeployment": resolver(f.createDeployment),
		"taggingDeleteTagFromEntity":     resolver(f.deleteTags),
	}}
}

func (f *Fake) createDeployment(args map[string]any) (any, *fieldFailure) {
	in, _ := args["deployment"].(map[string]any)
	guid, _ := in["entityGuid"].(string)
	e := f.entity(guid)
	if e == nil {
		return nil, fieldError("NOT_FOUND", "Entity %s was not found", guid)
	}
	a := f.account(e.AccountID)
	if a == nil {
		return nil, fieldError("FORBIDDEN", "Access denied: account %d is not accessible with this API key", e.AccountID)
	}
	f.deployIDs++
	ts := f.Now()
	if t, ok := in["timestamp"].(float64); ok {
		ts = int64(t)
	}
	fields := map[string]any{"deploymentId": fmt.Sprintf("dep-%04d", f.deployIDs), "entityGuid": guid, "timestamp": ts}
	event := map[string]any{"timestamp": ts, "entity.guid": guid, "appName": e.Name, "deploymentId": fields["deploymentId"]}
	for _, k := range []string{"version", "changelog", "commit", "deepLink", "description", "user", "deploymentType", "groupId"} {
		fields[k] = in[k]
		if v, ok := in[k]; ok {
			event[k] = v
		}
	}
	a.Deployments = append(a.Deployments, event)
	return &object{Type: "ChangeTrackingDeployment", Fields: fields}, nil
}

func (f *Fake) deleteTags(args map[string]any) (any, *fieldFailure) {
	guid, _ := args["guid"].(string)
	var keys []string
	switch v := args["tagKeys"].(type) {
	case []any:
		for _, k := range v {
			keys = append(keys, k.(string))
		}
	case string:
		keys = []string{v}
	}
	var errs []*object
	e := f.entity(guid)
	switch {
	case e == nil:
		errs = append(errs, &object{Type: "TaggingMutationError", Fields: map[string]any{"message": "Entity " + guid + " was not found", "type": "NOT_FOUND"}})
	case len(keys) > 30:
		errs = append(errs, &object{Type: "TaggingMutationError", Fields: map[string]any{"message": "Too many tag keys", "type": "TOO_MANY_TAG_KEYS"}})
	default:
		for _, k := range keys {
			delete(e.Tags, k)
		}
	}
	return &object{Type: "TaggingMutationResult", Fields: map[string]any{"errors": errs}}, nil
}
