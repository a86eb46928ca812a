package atlassianjiratest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The endpoint handlers run with f.mu held. parts is the path after
// /rest/api/3/, split on "/".

// searchRequest is the body of POST /rest/api/3/search/jql.
type searchRequest struct {
	JQL             *string  `json:"jql"`
	NextPageToken   *string  `json:"nextPageToken"`
	MaxResults      *int     `json:"maxResults"`
	Fields          []string `json:"fields"`
	Expand          string   `json:"expand"`
	Properties      []string `json:"properties"`
	FieldsByKeys    bool     `json:"fieldsByKeys"`
	FailFast        bool     `json:"failFast"`
	ReconcileIssues []int    `json:"reconcileIssues"`
}

func (f *Fake) searchPost(x *exchange, _ []string) (int, any, *apiError) {
	var req searchRequest
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	if req.JQL == nil {
		return 0, nil, jiraError(http.StatusBadRequest, "The 'jql' parameter is required.")
	}
	return f.runSearch(*req.JQL, req.NextPageToken, req.MaxResults, req.Fields)
}

func (f *Fake) searchGet(x *exchange, _ []string) (int, any, *apiError) {
	q := x.r.URL.Query()
	if !q.Has("jql") {
		return 0, nil, jiraError(http.StatusBadRequest, "The 'jql' parameter is required.")
	}
	var token *string
	if q.Has("nextPageToken") {
		t := q.Get("nextPageToken")
		token = &t
	}
	var maxResults *int
	if q.Has("maxResults") {
		n, e := x.intParam("maxResults", 0)
		if e != nil {
			return 0, nil, e
		}
		maxResults = &n
	}
	var fields []string
	for _, v := range q["fields"] {
		fields = append(fields, strings.Split(v, ",")...)
	}
	return f.runSearch(q.Get("jql"), token, maxResults, fields)
}

// pageToken is the fake's nextPageToken: opaque to clients, bound to the
// query it was issued for.
func pageToken(jql string, offset int) string {
	sum := sha256.Sum256([]byte(jql))
	return base64.RawURLEncoding.EncodeToString([]byte(hex.EncodeToString(sum[:8]) + ":" + strconv.Itoa(offset)))
}

func tokenOffset(jql, token string) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	sum := sha256.Sum256([]byte(jql))
	prefix, off, ok := strings.Cut(string(raw), ":")
	n, err := strconv.Atoi(off)
	if !ok || err != nil || n < 0 || prefix != hex.EncodeToString(sum[:8]) {
		return 0, false
	}
	return n, true
}

// runSearch serves the enhanced search: fields default to the id only, a
// page holds maxResults issues (default 50; at most 5000 when only id or
// key are asked for, else 100), and nextPageToken leads to the next page.
func (f *Fake) runSearch(jql string, token *string, maxResults *int, fields []string) (int, any, *apiError) {
	q, err := parseJQL(jql)
	if err != nil {
		return 0, nil, jiraError(http.StatusBadRequest, "%v", err)
	}
	if q.where == nil {
		return 0, nil, jiraError(http.StatusBadRequest, "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
	}
	offset := 0
	if token != nil {
		n, ok := tokenOffset(jql, *token)
		if !ok {
			return 0, nil, jiraError(http.StatusBadRequest, "The provided next page token is invalid or expired.")
		}
		offset = n
	}
	if len(fields) == 0 {
		fields = []string{"id"}
	}
	limit := 100
	if !slices.ContainsFunc(fields, func(s string) bool { return s != "id" && s != "key" }) {
		limit = 5000
	}
	size := 50
	if maxResults != nil {
		if *maxResults < 0 {
			return 0, nil, jiraError(http.StatusBadRequest, "maxResults must not be negative.")
		}
		size = *maxResults
	}
	size = min(size, limit)
	found := f.search(q)
	start := min(offset, len(found))
	end := min(start+size, len(found))
	issues := make([]any, 0, end-start)
	for _, is := range found[start:end] {
		issues = append(issues, f.issueJSON(is, fields))
	}
	out := map[string]any{"issues": issues, "isLast": end >= len(found)}
	if end < len(found) {
		out["nextPageToken"] = pageToken(jql, end)
	}
	return http.StatusOK, out, nil
}

func (f *Fake) approximateCount(x *exchange, _ []string) (int, any, *apiError) {
	var req struct {
		JQL *string `json:"jql"`
	}
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	if req.JQL == nil {
		return 0, nil, jiraError(http.StatusBadRequest, "The 'jql' parameter is required.")
	}
	q, err := parseJQL(*req.JQL)
	if err != nil {
		return 0, nil, jiraError(http.StatusBadRequest, "%v", err)
	}
	if q.where == nil {
		return 0, nil, jiraError(http.StatusBadRequest, "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
	}
	return http.StatusOK, map[string]any{"count": len(f.search(q))}, nil
}

func (f *Fake) getIssue(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	var fields []string
	for _, v := range x.r.URL.Query()["fields"] {
		fields = append(fields, strings.Split(v, ",")...)
	}
	return http.StatusOK, f.issueJSON(is, fields), nil
}

// issueFields is the "fields" object of create and edit requests.
type issueFields map[string]json.RawMessage

// editableFields are the fields the fake's screens offer.
var editableFields = []string{"project", "summary", "issuetype", "description", "labels", "priority", "assignee", "parent"}

// applyFields checks and applies fields to is (nil is for a create, where
// the project and type are read by the caller). It reports the first
// problem the way Jira does: 400 with the field name.
func (f *Fake) applyFields(is *issueRecord, fields issueFields) *apiError {
	for name := range fields {
		if !slices.Contains(editableFields, name) {
			return fieldError(name, "Field '%s' cannot be set. It is not on the appropriate screen, or unknown.", name)
		}
	}
	if raw, ok := fields["summary"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
			return fieldError("summary", "You must specify a summary of the issue.")
		}
		if len(s) > 255 {
			return fieldError("summary", "Summary must be less than 255 characters.")
		}
		is.summary = s
	}
	if raw, ok := fields["description"]; ok {
		var doc any
		_ = json.Unmarshal(raw, &doc)
		if doc != nil {
			if p := checkADF(doc); p != "" {
				return fieldError("description", "Operation value must be an Atlassian Document (see the Atlassian Document Format): %s", p)
			}
		}
		is.description = doc
	}
	if raw, ok := fields["labels"]; ok {
		var labels []string
		if json.Unmarshal(raw, &labels) != nil {
			return fieldError("labels", "The labels must be an array of strings.")
		}
		for _, l := range labels {
			if l == "" || strings.ContainsAny(l, " \t\n") {
				return fieldError("labels", "The label '%s' contains spaces which is invalid.", l)
			}
		}
		is.labels = append([]string{}, labels...)
	}
	if raw, ok := fields["priority"]; ok {
		var p struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		}
		_ = json.Unmarshal(raw, &p)
		i := slices.Index(priorities, p.Name)
		if i < 0 {
			return fieldError("priority", "Specify the Priority (name) in the string format")
		}
		is.priority = priorities[i]
	}
	if raw, ok := fields["assignee"]; ok {
		var a *struct {
			AccountID string `json:"accountId"`
		}
		_ = json.Unmarshal(raw, &a)
		switch {
		case a == nil:
			is.assignee = ""
		case f.user(a.AccountID) == nil:
			return fieldError("assignee", "User '%s' does not exist.", a.AccountID)
		default:
			is.assignee = a.AccountID
		}
	}
	if raw, ok := fields["parent"]; ok {
		var p struct {
			Key string `json:"key"`
			ID  string `json:"id"`
		}
		_ = json.Unmarshal(raw, &p)
		parent := f.issue(cmpOr(p.Key, p.ID))
		if parent == nil || parent.project != is.project {
			return fieldError("parent", "Could not find issue by id or key.")
		}
		is.parent = parent.key
	}
	return nil
}

func (f *Fake) createIssue(x *exchange, _ []string) (int, any, *apiError) {
	var req struct {
		Fields issueFields `json:"fields"`
		Update any         `json:"update"`
	}
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	var ref struct {
		Key string `json:"key"`
		ID  string `json:"id"`
	}
	_ = json.Unmarshal(req.Fields["project"], &ref)
	p := f.project(cmpOr(ref.Key, ref.ID))
	if p == nil {
		return 0, nil, fieldError("project", "valid project is required")
	}
	var typ struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	_ = json.Unmarshal(req.Fields["issuetype"], &typ)
	t, ok := p.issueType(typ.Name)
	if !ok {
		return 0, nil, fieldError("issuetype", "Specify a valid issue type")
	}
	if _, ok := req.Fields["summary"]; !ok {
		return 0, nil, fieldError("summary", "You must specify a summary of the issue.")
	}
	// Validate on a scratch record first so a refused create leaves no issue.
	scratch := &issueRecord{project: p, priority: "Medium", labels: []string{}}
	if e := f.applyFields(scratch, req.Fields); e != nil {
		return 0, nil, e
	}
	if t.subtask && scratch.parent == "" {
		return 0, nil, fieldError("parent", "Given parent work item does not belong to appropriate hierarchy.")
	}
	is := f.newIssue(p, t, scratch.summary)
	is.description, is.labels, is.priority, is.assignee, is.parent = scratch.description, scratch.labels, scratch.priority, scratch.assignee, scratch.parent
	return http.StatusCreated, map[string]any{
		"id": strconv.Itoa(is.id), "key": is.key, "self": f.URL + "/rest/api/3/issue/" + strconv.Itoa(is.id),
	}, nil
}

func (f *Fake) editIssue(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	if v := x.r.URL.Query().Get("notifyUsers"); v != "" && v != "true" && v != "false" {
		return 0, nil, jiraError(http.StatusBadRequest, "The value '%s' is invalid for the parameter 'notifyUsers'.", v)
	}
	var req struct {
		Fields     issueFields                    `json:"fields"`
		Update     map[string][]map[string]string `json:"update"`
		Properties []any                          `json:"properties"`
	}
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	for name := range req.Update {
		if _, both := req.Fields[name]; both {
			return 0, nil, fieldError(name, "Field '%s' cannot be set in both 'fields' and 'update'.", name)
		}
		if name != "labels" {
			return 0, nil, fieldError(name, "Field '%s' cannot be set. It is not on the appropriate screen, or unknown.", name)
		}
	}
	if _, ok := req.Fields["project"]; ok {
		return 0, nil, fieldError("project", "Field 'project' cannot be set. It is not on the appropriate screen, or unknown.")
	}
	updated := *is
	if e := f.applyFields(&updated, req.Fields); e != nil {
		return 0, nil, e
	}
	for _, op := range req.Update["labels"] {
		for verb, label := range op {
			switch verb {
			case "add":
				if !slices.Contains(updated.labels, label) {
					updated.labels = append(updated.labels, label)
				}
			case "remove":
				updated.labels = slices.DeleteFunc(slices.Clone(updated.labels), func(l string) bool { return l == label })
			default:
				return 0, nil, fieldError("labels", "The operation '%s' is not supported for labels.", verb)
			}
		}
	}
	updated.updated = f.now()
	*is = updated
	return http.StatusNoContent, nil, nil
}

func (f *Fake) deleteIssue(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	if is.project.NoDelete {
		return 0, nil, jiraError(http.StatusForbidden, "You do not have permission to delete issues in this project.")
	}
	v := x.r.URL.Query().Get("deleteSubtasks")
	if v != "" && v != "true" && v != "false" {
		return 0, nil, jiraError(http.StatusBadRequest, "The value '%s' is invalid for the parameter 'deleteSubtasks'.", v)
	}
	var children []*issueRecord
	for _, other := range f.issues {
		if other.parent == is.key && other.typ.subtask {
			children = append(children, other)
		}
	}
	if len(children) > 0 && v != "true" {
		return 0, nil, jiraError(http.StatusBadRequest, "The issue has subtasks. Set the deleteSubtasks parameter to true to delete them.")
	}
	f.issues = slices.DeleteFunc(f.issues, func(o *issueRecord) bool { return o == is || slices.Contains(children, o) })
	return http.StatusNoContent, nil, nil
}

func (f *Fake) availableTransitions(is *issueRecord) []transition {
	var out []transition
	for _, t := range transitions {
		if t.to != is.status {
			out = append(out, t)
		}
	}
	return out
}

func (f *Fake) getTransitions(_ *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	list := []any{}
	for _, t := range f.availableTransitions(is) {
		list = append(list, map[string]any{
			"id": t.id, "name": t.name, "to": f.statusJSON(t.to), "hasScreen": false, "isGlobal": true,
			"isInitial": false, "isAvailable": true, "isConditional": false, "isLooped": false,
		})
	}
	return http.StatusOK, map[string]any{"expand": "transitions", "transitions": list}, nil
}

func (f *Fake) doTransition(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	var req struct {
		Transition *struct {
			ID string `json:"id"`
		} `json:"transition"`
		Fields map[string]any `json:"fields"`
		Update struct {
			Comment []struct {
				Add *struct {
					Body any `json:"body"`
				} `json:"add"`
			} `json:"comment"`
		} `json:"update"`
	}
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	if req.Transition == nil || req.Transition.ID == "" {
		return 0, nil, jiraError(http.StatusBadRequest, "Missing 'transition' identifier")
	}
	i := slices.IndexFunc(f.availableTransitions(is), func(t transition) bool { return t.id == req.Transition.ID })
	if i < 0 {
		return 0, nil, jiraError(http.StatusBadRequest, "Transition id '%s' is not valid for this issue.", req.Transition.ID)
	}
	for _, c := range req.Update.Comment {
		if c.Add == nil {
			return 0, nil, fieldError("comment", "Only the add operation is supported for comments here.")
		}
		if p := checkADF(c.Add.Body); p != "" {
			return 0, nil, fieldError("comment", "Comment body is not a valid Atlassian Document: %s", p)
		}
	}
	for _, c := range req.Update.Comment {
		f.newComment(is, f.me, c.Add.Body)
	}
	is.status = f.availableTransitions(is)[i].to
	is.updated = f.now()
	return http.StatusNoContent, nil, nil
}

func (f *Fake) getComments(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	start, e := x.intParam("startAt", 0)
	if e != nil {
		return 0, nil, e
	}
	size, e := x.intParam("maxResults", 5000)
	if e != nil {
		return 0, nil, e
	}
	order := x.r.URL.Query().Get("orderBy")
	comments := slices.Clone(is.comments)
	switch order {
	case "", "created", "+created":
	case "-created":
		slices.Reverse(comments)
	default:
		return 0, nil, jiraError(http.StatusBadRequest, "Invalid orderBy value '%s'; use created, -created or +created.", order)
	}
	from := min(start, len(comments))
	to := min(from+size, len(comments))
	list := make([]any, 0, to-from)
	for _, c := range comments[from:to] {
		list = append(list, f.commentJSON(c, is))
	}
	return http.StatusOK, map[string]any{"startAt": start, "maxResults": size, "total": len(comments), "comments": list}, nil
}

func (f *Fake) addComment(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	var req struct {
		Body       any            `json:"body"`
		Visibility map[string]any `json:"visibility"`
		Properties []any          `json:"properties"`
	}
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	if req.Body == nil {
		return 0, nil, fieldError("comment", "Comment body can not be empty!")
	}
	if p := checkADF(req.Body); p != "" {
		return 0, nil, fieldError("comment", "Comment body is not a valid Atlassian Document: %s", p)
	}
	c := f.newComment(is, f.me, req.Body)
	return http.StatusCreated, f.commentJSON(c, is), nil
}

func (f *Fake) assign(x *exchange, parts []string) (int, any, *apiError) {
	is := f.issue(parts[1])
	if is == nil {
		return 0, nil, issueNotFound()
	}
	var req map[string]*string
	if e := x.decodeBody(&req); e != nil {
		return 0, nil, e
	}
	id, ok := req["accountId"]
	if !ok || len(req) != 1 {
		return 0, nil, jiraError(http.StatusBadRequest, "The request must have exactly the member accountId.")
	}
	switch {
	case id == nil:
		is.assignee = ""
	case *id == "-1":
		is.assignee = is.project.Lead
	case f.user(*id) == nil:
		return 0, nil, fieldError("assignee", "User '%s' cannot be assigned issues.", *id)
	default:
		is.assignee = *id
	}
	is.updated = f.now()
	return http.StatusNoContent, nil, nil
}

func (f *Fake) searchProjects(x *exchange, _ []string) (int, any, *apiError) {
	q := x.r.URL.Query()
	start, e := x.intParam("startAt", 0)
	if e != nil {
		return 0, nil, e
	}
	size, e := x.intParam("maxResults", 50)
	if e != nil {
		return 0, nil, e
	}
	size = min(size, 100)
	order := q.Get("orderBy")
	var found []*projectRecord
	text := strings.ToLower(q.Get("query"))
	for _, p := range f.projects {
		if text == "" || strings.Contains(strings.ToLower(p.Key), text) || strings.Contains(strings.ToLower(p.Name), text) {
			found = append(found, p)
		}
	}
	switch order {
	case "", "key", "+key":
		slices.SortFunc(found, func(a, b *projectRecord) int { return strings.Compare(a.Key, b.Key) })
	case "-key":
		slices.SortFunc(found, func(a, b *projectRecord) int { return strings.Compare(b.Key, a.Key) })
	case "name", "+name":
		slices.SortFunc(found, func(a, b *projectRecord) int { return strings.Compare(a.Name, b.Name) })
	default:
		return 0, nil, jiraError(http.StatusBadRequest, "Invalid orderBy value '%s'.", order)
	}
	from := min(start, len(found))
	to := min(from+size, len(found))
	values := make([]any, 0, to-from)
	for _, p := range found[from:to] {
		values = append(values, f.projectJSON(p, nil))
	}
	out := map[string]any{
		"self": f.URL + x.r.URL.RequestURI(), "maxResults": size, "startAt": start, "total": len(found),
		"isLast": to >= len(found), "values": values,
	}
	if to < len(found) {
		next := q
		next.Set("startAt", strconv.Itoa(to))
		out["nextPage"] = f.URL + x.r.URL.Path + "?" + next.Encode()
	}
	return http.StatusOK, out, nil
}

func (f *Fake) getProject(x *exchange, parts []string) (int, any, *apiError) {
	p := f.project(parts[1])
	if p == nil {
		return 0, nil, jiraError(http.StatusNotFound, "No project could be found with key '%s'.", parts[1])
	}
	// Jira returns these by default; expand is accepted and checked.
	expand := []string{"description", "lead", "issueTypes"}
	for _, e := range strings.Split(x.r.URL.Query().Get("expand"), ",") {
		if e != "" && !slices.Contains([]string{"description", "lead", "issueTypes", "url", "projectKeys", "permissions", "insight"}, e) {
			return 0, nil, jiraError(http.StatusBadRequest, "Invalid expand value '%s'.", e)
		}
	}
	return http.StatusOK, f.projectJSON(p, expand), nil
}

func (f *Fake) searchUsers(x *exchange, _ []string) (int, any, *apiError) {
	q := x.r.URL.Query()
	if q.Get("query") == "" && q.Get("accountId") == "" && q.Get("property") == "" {
		return 0, nil, jiraError(http.StatusBadRequest, "One of 'query', 'accountId' or 'property' must be provided.")
	}
	start, e := x.intParam("startAt", 0)
	if e != nil {
		return 0, nil, e
	}
	size, e := x.intParam("maxResults", 50)
	if e != nil {
		return 0, nil, e
	}
	text := strings.ToLower(q.Get("query"))
	var found []any
	for _, u := range f.users {
		if id := q.Get("accountId"); id != "" && u.AccountID != id {
			continue
		}
		if text != "" && !nameOrEmailStartsWith(u, text) {
			continue
		}
		found = append(found, f.userJSON(u.AccountID))
	}
	from := min(start, len(found))
	to := min(from+size, len(found))
	return http.StatusOK, append([]any{}, found[from:to]...), nil
}

// nameOrEmailStartsWith matches Jira's user search: a prefix of the email or
// of any word of the display name.
func nameOrEmailStartsWith(u *User, text string) bool {
	if strings.HasPrefix(strings.ToLower(u.Email), text) || strings.HasPrefix(strings.ToLower(u.DisplayName), text) {
		return true
	}
	for _, w := range strings.Fields(strings.ToLower(u.DisplayName)) {
		if strings.HasPrefix(w, text) {
			return true
		}
	}
	return false
}

func (f *Fake) myself(*exchange, []string) (int, any, *apiError) {
	return http.StatusOK, f.userJSON(f.me), nil
}
