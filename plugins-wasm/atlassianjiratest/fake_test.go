package atlassianjiratest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fakeResponse is what a direct request to the fake returned.
type fakeResponse struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// do sends a request to the fake with Jira's headers; edit may change them.
func do(t *testing.T, f *Fake, method, path, body string, edit func(http.Header)) fakeResponse {
	t.Helper()
	req, err := http.NewRequest(method, f.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", basicAuth(email, apiToken))
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req.Header)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := fakeResponse{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s answered %q: %v", method, path, raw, err)
		}
	}
	return out
}

// TestFake_RequestChecks shows the fake refuses what Jira refuses, so the
// plugin tests prove something.
func TestFake_RequestChecks(t *testing.T) {
	f := NewFake(t, email, apiToken)
	f.AddProject(Project{Key: "PROJ", Name: "Platform"})
	f.AddIssue(Issue{Project: "PROJ", Summary: "one"})
	tests := []struct {
		name, method, path, body string
		edit                     func(http.Header)
		status                   int
		text                     string // in the body
	}{
		{"no credential", "GET", "/rest/api/3/myself", "", func(h http.Header) { h.Del("Authorization") }, 401, "Client must be authenticated"},
		{"bearer instead of basic", "GET", "/rest/api/3/myself", "", func(h http.Header) { h.Set("Authorization", "Bearer "+apiToken) }, 401, "Client must be authenticated"},
		{"wrong token", "GET", "/rest/api/3/myself", "", func(h http.Header) { h.Set("Authorization", basicAuth(email, "nope")) }, 401, "Client must be authenticated"},
		{"no Accept", "GET", "/rest/api/3/myself", "", func(h http.Header) { h.Del("Accept") }, 406, "application/json"},
		{"body without JSON type", "POST", "/rest/api/3/issue", `{}`, func(h http.Header) { h.Set("Content-Type", "text/plain") }, 415, "Unsupported Media Type"},
		{"unknown path", "GET", "/rest/api/3/nothing", "", nil, 404, "null for uri"},
		{"api v2 path", "GET", "/rest/api/2/myself", "", nil, 404, "null for uri"},
		{"wrong method", "DELETE", "/rest/api/3/myself", "", nil, 405, "Method Not Allowed"},
		{"unknown body member", "POST", "/rest/api/3/search/jql", `{"jql":"project = PROJ","startAt":0}`, nil, 400, "startAt"},
		{"unbounded search", "POST", "/rest/api/3/search/jql", `{"jql":""}`, nil, 400, "Unbounded JQL"},
		{"forged page token", "POST", "/rest/api/3/search/jql", `{"jql":"project = PROJ","nextPageToken":"abc"}`, nil, 400, "next page token is invalid"},
		{"description not ADF", "PUT", "/rest/api/3/issue/PROJ-1", `{"fields":{"description":"plain"}}`, nil, 400, "Atlassian Document"},
		{"ADF with an empty text node", "POST", "/rest/api/3/issue/PROJ-1/comment",
			`{"body":{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":""}]}]}}`, nil, 400, "non-empty text"},
		{"unknown field", "PUT", "/rest/api/3/issue/PROJ-1", `{"fields":{"storypoints":3}}`, nil, 400, "cannot be set"},
		{"user search without a query", "GET", "/rest/api/3/user/search", "", nil, 400, "must be provided"},
		{"bad startAt", "GET", "/rest/api/3/project/search?startAt=-1", "", nil, 400, "startAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f, tt.method, tt.path, tt.body, tt.edit)
			if r.status != tt.status || !strings.Contains(r.raw, tt.text) {
				t.Errorf("%s %s = %d %s, want %d with %q", tt.method, tt.path, r.status, r.raw, tt.status, tt.text)
			}
		})
	}
}

// TestFake_SearchGet checks the GET form of the enhanced search, which the
// plugin does not use but Jira documents: comma-separated fields, the
// default page of 50, the id-only default, and token pagination.
func TestFake_SearchGet(t *testing.T) {
	f := NewFake(t, email, apiToken)
	f.AddProject(Project{Key: "PROJ", Name: "Platform"})
	for range 3 {
		f.AddIssue(Issue{Project: "PROJ", Summary: "s"})
	}
	q := url.Values{"jql": {"project = PROJ ORDER BY key DESC"}, "maxResults": {"2"}, "fields": {"summary,status"}}
	first := do(t, f, "GET", "/rest/api/3/search/jql?"+q.Encode(), "", nil)
	issues := first.body["issues"].([]any)
	token, _ := first.body["nextPageToken"].(string)
	if first.status != 200 || len(issues) != 2 || first.body["isLast"] != false || token == "" {
		t.Fatalf("first page = %d %s", first.status, first.raw)
	}
	fields := issues[0].(map[string]any)["fields"].(map[string]any)
	if issues[0].(map[string]any)["key"] != "PROJ-3" || len(fields) != 2 || fields["summary"] != "s" {
		t.Errorf("first issue = %v", issues[0])
	}
	q.Set("nextPageToken", token)
	second := do(t, f, "GET", "/rest/api/3/search/jql?"+q.Encode(), "", nil)
	if issues := second.body["issues"].([]any); len(issues) != 1 || second.body["isLast"] != true || second.body["nextPageToken"] != nil {
		t.Errorf("second page = %s", second.raw)
	}
	// A token is bound to its query.
	q.Set("jql", "project = PROJ")
	if r := do(t, f, "GET", "/rest/api/3/search/jql?"+q.Encode(), "", nil); r.status != 400 {
		t.Errorf("token reused with another query = %d %s", r.status, r.raw)
	}
	ids := do(t, f, "GET", "/rest/api/3/search/jql?jql="+url.QueryEscape("project = PROJ"), "", nil)
	if first := ids.body["issues"].([]any)[0].(map[string]any); first["fields"] != nil || first["id"] != "10001" {
		t.Errorf("default fields = %v", first)
	}
}

func TestFake_JQL(t *testing.T) {
	f := NewFake(t, email, apiToken)
	f.AddProject(Project{Key: "PROJ", Name: "Platform"})
	f.AddProject(Project{Key: "OPS", Name: "Operations"})
	f.AddIssue(Issue{Project: "PROJ", Summary: "Crash on start", Labels: []string{"backend"}, Assignee: f.Me(), Priority: "High"})
	f.AddIssue(Issue{Project: "PROJ", Summary: "Docs", Status: "Done", Description: adfDoc("explains the crash")})
	f.AddIssue(Issue{Project: "OPS", Summary: "Rotate keys", Labels: []string{"security", "backend"}})
	tests := []struct {
		jql  string
		want string // keys, comma-separated; or "error: ..." text
	}{
		{"project = PROJ", "PROJ-1,PROJ-2"},
		{"project in (PROJ, ops) ORDER BY key DESC", "PROJ-2,PROJ-1,OPS-1"},
		{"labels = backend AND project != PROJ", "OPS-1"},
		{"assignee = currentUser()", "PROJ-1"},
		{"assignee is EMPTY", "PROJ-2,OPS-1"},
		{`status = "Done" OR priority = High`, "PROJ-1,PROJ-2"},
		{"statusCategory != done AND NOT labels = security", "PROJ-1"},
		{`summary ~ "crash"`, "PROJ-1"},
		{`text ~ "crash"`, "PROJ-1,PROJ-2"},
		{"(project = OPS OR project = PROJ) AND labels in (security)", "OPS-1"},
		{"key = PROJ-2", "PROJ-2"},
		{"sprint = 1", "error: Field 'sprint' does not exist"},
		{"project = ", "error: Expecting a value"},
		{"project ~ PROJ", "error: not supported"},
		{`summary ~ "unterminated`, "error: not terminated"},
		{"project = PROJ ORDER BY rank", "error: Field 'rank'"},
		{"project = PROJ project = OPS", "error: Expecting either 'OR' or 'AND'"},
		{"assignee is Ada", "error: EMPTY or NULL"},
		{strings.Repeat("(", 40) + "project = PROJ" + strings.Repeat(")", 40), "error: nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.jql, func(t *testing.T) {
			q, err := parseJQL(tt.jql)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Errorf("parse = %v, want %s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, is := range f.search(q) {
				keys = append(keys, is.key)
			}
			if got := strings.Join(keys, ","); got != tt.want {
				t.Errorf("keys = %s, want %s", got, tt.want)
			}
		})
	}
}
