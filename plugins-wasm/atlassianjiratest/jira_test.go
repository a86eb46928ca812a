package atlassianjiratest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// wasmPath is the built plugin under test.
const wasmPath = "../atlassian-jira/atlassian-jira.wasm"

const (
	email    = "ada@example.com"
	apiToken = "ATATT3xFfGF0-test-token"
	userID   = "u1"
	site     = "acme"
)

var cacheDir string

// TestMain shares one compilation cache between the tests, so each plugin
// is compiled once per run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "atlassianjiratest-cache-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func jiraWasm(t testing.TB) []byte {
	t.Helper()
	return plugintest.ReadWasm(t, wasmPath)
}

// fixture is a loaded plugin pointed at a fresh fake.
type fixture struct {
	fake   *Fake
	creds  *credential.Memory
	plugin *runtime.Plugin
	grace  string // account id of a second user
}

// connection returns a stored Jira connection with the given token.
func connection(site, email, token string) *credential.Credential {
	return &credential.Credential{Fields: map[string]string{"site": site, "email": email, "api_token": token}}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{fake: NewFake(t, email, apiToken), creds: credential.NewMemory()}
	f.creds.Set(userID, "atlassian-jira", connection(site, email, apiToken))
	f.plugin = plugintest.Load(t, jiraWasm(t), plugintest.HostConfig{
		CacheDir:    cacheDir,
		Credentials: f.creds,
		Egress:      egress.Options{AllowPrivate: true},
		Settings:    runtime.MapSettings{"atlassian-jira": {"base_url": f.fake.URL}},
	})
	fk := f.fake
	f.grace = fk.AddUser(User{DisplayName: "Grace Hopper", Email: "grace@example.com"})
	fk.AddUser(User{DisplayName: "Alan Turing", Email: "alan@example.com", Inactive: true})
	fk.AddProject(Project{Key: "PROJ", Name: "Platform", Description: "The platform team's work."})
	fk.AddProject(Project{Key: "OPS", Name: "Operations", NoDelete: true})
	fk.AddIssue(Issue{Project: "PROJ", Summary: "Crash on start", Type: "Bug", Priority: "High", Assignee: fk.Me(),
		Labels: []string{"backend"}, StoryPoints: 3, Description: adfDoc("It crashes on start.", "Steps: run it.")})
	fk.AddIssue(Issue{Project: "PROJ", Summary: "Write docs"})
	fk.AddIssue(Issue{Project: "PROJ", Summary: "Old release", Status: "Done"})
	fk.AddIssue(Issue{Project: "OPS", Summary: "Rotate keys"})
	return f
}

// adfDoc is an ADF document with one paragraph per argument.
func adfDoc(paragraphs ...string) map[string]any {
	var content []any
	for _, p := range paragraphs {
		content = append(content, map[string]any{"type": "paragraph", "content": []any{map[string]any{"type": "text", "text": p}}})
	}
	return map[string]any{"type": "doc", "version": float64(1), "content": content}
}

// call runs a tool as userID and decodes its output into out.
func (f *fixture) call(t testing.TB, tool, input string, out any) {
	t.Helper()
	plugintest.CallInto(t, f.plugin, userID, tool, input, out)
}

func (f *fixture) callAs(user, tool, input string) (json.RawMessage, error) {
	return plugintest.Call(f.plugin, user, tool, input, nil)
}

// toolError runs a tool that must fail and returns its error.
func (f *fixture) toolError(t *testing.T, user, tool, input string) *failure.Error {
	t.Helper()
	return plugintest.ToolError(t, f.plugin, user, tool, input)
}

// basicAuth is the Authorization header Jira Cloud expects for an API token.
func basicAuth(email, token string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+token))
}

// assertJiraHeaders checks what every request must carry: the host's basic
// credential (once, never anything the plugin chose), Accept JSON, and a
// JSON Content-Type when there is a body.
func assertJiraHeaders(t *testing.T, r Request) {
	t.Helper()
	if got := r.Header.Values("Authorization"); !slices.Equal(got, []string{basicAuth(email, apiToken)}) {
		t.Errorf("%s %s: Authorization = %q, want exactly the injected basic credential", r.Method, r.Path, got)
	}
	if got := r.Header.Values("Accept"); !slices.Equal(got, []string{"application/json"}) {
		t.Errorf("%s %s: Accept = %q", r.Method, r.Path, got)
	}
	if len(r.Body) > 0 {
		if got := r.Header.Values("Content-Type"); !slices.Equal(got, []string{"application/json"}) {
			t.Errorf("%s %s: Content-Type = %q", r.Method, r.Path, got)
		}
	}
}

// wantRequest is what a tool call must have sent.
type wantRequest struct {
	method, path string
	query        map[string]string // every parameter, exactly
	body         string            // JSON, compared semantically; "" for none
}

func assertRequest(t *testing.T, r Request, want wantRequest) {
	t.Helper()
	assertJiraHeaders(t, r)
	plugintest.CheckRequest(t, r.Method, r.Path, r.Query, r.Body, plugintest.WantRequest{Method: want.method, Path: want.path, Query: want.query, Body: want.body})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var wantTools = []string{
	"atlassian_jira_search_issues", "atlassian_jira_count_issues", "atlassian_jira_get_issue",
	"atlassian_jira_create_issue", "atlassian_jira_update_issue", "atlassian_jira_delete_issue",
	"atlassian_jira_get_transitions", "atlassian_jira_transition_issue",
	"atlassian_jira_add_comment", "atlassian_jira_list_comments", "atlassian_jira_assign_issue",
	"atlassian_jira_list_projects", "atlassian_jira_get_project", "atlassian_jira_search_users", "atlassian_jira_get_myself",
}

func TestPlugin_Manifest(t *testing.T) {
	m := newFixture(t).plugin.Manifest()
	if m.Name != "atlassian-jira" || m.Title != "Jira" || m.BaseURL != "" || m.Proxy != nil ||
		!slices.Equal(m.Hosts, []string{"{site}.atlassian.net"}) || !slices.Equal(m.Categories, []string{"project-management", "developer-tools"}) {
		t.Errorf("manifest head = %+v", m)
	}
	k := m.Auth.APIKey
	if m.Auth.Mode != "apikey" || k == nil {
		t.Fatalf("auth = %+v", m.Auth)
	}
	type field struct {
		name, label, pattern string
		secret, required     bool
	}
	var fields []field
	for _, f := range k.Fields {
		fields = append(fields, field{f.Name, f.Label, f.Pattern, f.Secret, f.Required})
	}
	wantFields := []field{
		{"site", "Site (the <site> in https://<site>.atlassian.net)", "^[a-z0-9][a-z0-9-]{0,61}$", false, true},
		{"email", "Atlassian account email", "", false, true},
		{"api_token", "API token (id.atlassian.com/manage-profile/security/api-tokens)", "", true, true},
	}
	if !slices.Equal(fields, wantFields) {
		t.Errorf("fields = %+v\nwant %+v", fields, wantFields)
	}
	if p := k.Placement; p.In != "basic" || p.Username != "{email}" || p.Password != "{api_token}" || p.Name != "" || p.Value != "" {
		t.Errorf("placement = %+v", p)
	}
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
		var schema struct {
			Type                 string
			AdditionalProperties *bool
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s inputSchema %s: %v", tool.Slug, tool.InputSchema, err)
		}
		if tool.ExportName() != tool.Slug || tool.Title == "" || !tool.Annotations.OpenWorld {
			t.Errorf("%s: export %s, title %q, annotations %+v", tool.Slug, tool.ExportName(), tool.Title, tool.Annotations)
		}
	}
	if !slices.Equal(slugs, wantTools) {
		t.Errorf("tools = %v\nwant %v", slugs, wantTools)
	}
	annotations := map[string][3]bool{ // readOnly, destructive, idempotent
		"atlassian_jira_search_issues":    {true, false, false},
		"atlassian_jira_get_myself":       {true, false, false},
		"atlassian_jira_create_issue":     {false, false, false},
		"atlassian_jira_update_issue":     {false, false, true},
		"atlassian_jira_delete_issue":     {false, true, true},
		"atlassian_jira_transition_issue": {false, false, false},
		"atlassian_jira_assign_issue":     {false, false, true},
	}
	for slug, want := range annotations {
		a := m.Tool(slug).Annotations
		if got := [3]bool{a.ReadOnly, a.Destructive, a.Idempotent}; got != want {
			t.Errorf("%s annotations = %+v, want readOnly/destructive/idempotent %v", slug, a, want)
		}
	}
	var search struct {
		Properties map[string]struct {
			Minimum, Maximum *float64
			Default          json.RawMessage
		}
		Required []string
	}
	if err := json.Unmarshal(m.Tool("atlassian_jira_search_issues").InputSchema, &search); err != nil {
		t.Fatal(err)
	}
	mr := search.Properties["max_results"]
	if mr.Minimum == nil || *mr.Minimum != 1 || mr.Maximum == nil || *mr.Maximum != 100 || string(mr.Default) != "50" || !slices.Equal(search.Required, []string{"jql"}) {
		t.Errorf("search schema = %+v", search)
	}
}

const defaultFieldsJSON = `["summary","status","issuetype","priority","assignee","reporter","project","labels","created","updated"]`

// TestPlugin_Tools calls every tool against seeded data. The cases run in
// order and share the fake's state: later cases see earlier changes.
func TestPlugin_Tools(t *testing.T) {
	f := newFixture(t)
	fk := f.fake
	me, grace := fk.Me(), f.grace

	tests := []struct {
		name  string
		tool  string
		input string
		want  []wantRequest
		check func(t *testing.T, out map[string]any)
	}{
		{name: "myself", tool: "atlassian_jira_get_myself", input: `{}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/myself"}},
			check: func(t *testing.T, out map[string]any) {
				want := map[string]any{"account_id": me, "display_name": "Ada Lovelace", "email": email, "active": true,
					"account_type": "atlassian", "time_zone": "Europe/London", "locale": "en_GB", "site": fk.URL}
				if mustJSON(t, out) != mustJSON(t, want) {
					t.Errorf("myself = %v\nwant %v", out, want)
				}
			}},
		{name: "empty input reaches the tool as no bytes", tool: "atlassian_jira_list_projects", input: ``,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/project/search", query: map[string]string{"startAt": "0", "maxResults": "50", "orderBy": "key"}}},
			check: func(t *testing.T, out map[string]any) {
				want := `{"is_last":true,"next_start_at":null,"projects":[{"id":"10001","key":"OPS","name":"Operations","project_type":"software","style":"classic"},{"id":"10000","key":"PROJ","name":"Platform","project_type":"software","style":"classic"}],"start_at":0,"total":2}`
				if got := mustJSON(t, out); got != want {
					t.Errorf("projects = %s\nwant %s", got, want)
				}
			}},
		{name: "projects filtered by a query", tool: "atlassian_jira_list_projects", input: `{"query":"plat","max_results":10}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/project/search", query: map[string]string{"startAt": "0", "maxResults": "10", "orderBy": "key", "query": "plat"}}},
			check: func(t *testing.T, out map[string]any) {
				if ps := out["projects"].([]any); len(ps) != 1 || ps[0].(map[string]any)["key"] != "PROJ" {
					t.Errorf("projects = %v", out)
				}
			}},
		{name: "project", tool: "atlassian_jira_get_project", input: `{"project_key":"PROJ"}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/project/PROJ", query: map[string]string{"expand": "description,lead,issueTypes"}}},
			check: func(t *testing.T, out map[string]any) {
				if out["description"] != "The platform team's work." || out["lead"].(map[string]any)["display_name"] != "Ada Lovelace" {
					t.Errorf("project = %v", out)
				}
				var names []string
				for _, it := range out["issue_types"].([]any) {
					names = append(names, it.(map[string]any)["name"].(string))
				}
				if !slices.Equal(names, []string{"Task", "Bug", "Story", "Epic", "Sub-task"}) {
					t.Errorf("issue types = %v", names)
				}
			}},
		{name: "users", tool: "atlassian_jira_search_users", input: `{"query":"grace"}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/user/search", query: map[string]string{"query": "grace", "startAt": "0", "maxResults": "50"}}},
			check: func(t *testing.T, out map[string]any) {
				want := `{"users":[{"account_id":"` + grace + `","account_type":"atlassian","active":true,"display_name":"Grace Hopper","email":"grace@example.com"}]}`
				if got := mustJSON(t, out); got != want {
					t.Errorf("users = %s\nwant %s", got, want)
				}
			}},
		{name: "search", tool: "atlassian_jira_search_issues", input: `{"jql":"project = PROJ AND status != Done ORDER BY key DESC"}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/search/jql",
				body: `{"jql":"project = PROJ AND status != Done ORDER BY key DESC","maxResults":50,"fields":` + defaultFieldsJSON + `}`}},
			check: func(t *testing.T, out map[string]any) {
				if out["is_last"] != true || out["next_page_token"] != nil {
					t.Errorf("page = %v", out)
				}
				issues := out["issues"].([]any)
				if len(issues) != 2 {
					t.Fatalf("issues = %v", issues)
				}
				want := map[string]any{
					"id": "10002", "key": "PROJ-2", "url": fk.URL + "/browse/PROJ-2", "summary": "Write docs",
					"status": "To Do", "status_category": "new", "issue_type": "Task", "priority": "Medium",
					"assignee": nil, "reporter": map[string]any{"account_id": me, "display_name": "Ada Lovelace"},
					"project": map[string]any{"key": "PROJ", "name": "Platform"}, "labels": []any{},
					"created": "2024-01-02T03:06:05.000+0000", "updated": "2024-01-02T03:06:05.000+0000",
				}
				if mustJSON(t, issues[0]) != mustJSON(t, want) {
					t.Errorf("issues[0] = %s\nwant %s", mustJSON(t, issues[0]), mustJSON(t, want))
				}
				if k := issues[1].(map[string]any)["key"]; k != "PROJ-1" {
					t.Errorf("issues[1] = %v", issues[1])
				}
			}},
		{name: "search with chosen fields keeps unknown ones raw", tool: "atlassian_jira_search_issues",
			input: `{"jql":"labels = backend","fields":["summary","description","customfield_10016"],"max_results":5}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/search/jql",
				body: `{"jql":"labels = backend","maxResults":5,"fields":["summary","description","customfield_10016"]}`}},
			check: func(t *testing.T, out map[string]any) {
				want := `[{"description":"It crashes on start.\n\nSteps: run it.","fields":{"customfield_10016":3},"id":"10001","key":"PROJ-1","summary":"Crash on start","url":"` + fk.URL + `/browse/PROJ-1"}]`
				if got := mustJSON(t, out["issues"]); got != want {
					t.Errorf("issues = %s\nwant %s", got, want)
				}
			}},
		{name: "count", tool: "atlassian_jira_count_issues", input: `{"jql":"project = PROJ"}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/search/approximate-count", body: `{"jql":"project = PROJ"}`}},
			check: func(t *testing.T, out map[string]any) {
				if out["count"] != 3.0 {
					t.Errorf("count = %v", out)
				}
			}},
		{name: "issue", tool: "atlassian_jira_get_issue", input: `{"issue_key":"PROJ-1"}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/issue/PROJ-1", query: map[string]string{
				"fields": "summary,status,issuetype,priority,assignee,reporter,project,labels,created,updated,description,parent,duedate"}}},
			check: func(t *testing.T, out map[string]any) {
				if out["description"] != "It crashes on start.\n\nSteps: run it." || out["priority"] != "High" || out["due_date"] != nil ||
					out["parent"] != nil || out["assignee"].(map[string]any)["account_id"] != me || out["fields"] != nil {
					t.Errorf("issue = %v", out)
				}
			}},
		{name: "create", tool: "atlassian_jira_create_issue",
			input: `{"project_key":"PROJ","summary":"Login fails","issue_type":"Bug","description":"Line one\nline two\n\nSecond paragraph","labels":["backend"],"priority":"High","assignee_account_id":"` + grace + `"}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/issue", body: `{"fields":{
				"project":{"key":"PROJ"},"summary":"Login fails","issuetype":{"name":"Bug"},
				"description":{"type":"doc","version":1,"content":[
					{"type":"paragraph","content":[{"type":"text","text":"Line one"},{"type":"hardBreak"},{"type":"text","text":"line two"}]},
					{"type":"paragraph","content":[{"type":"text","text":"Second paragraph"}]}]},
				"labels":["backend"],"priority":{"name":"High"},"assignee":{"accountId":"` + grace + `"}}}`}},
			check: func(t *testing.T, out map[string]any) {
				if out["key"] != "PROJ-4" || out["id"] != "10005" || out["url"] != fk.URL+"/browse/PROJ-4" {
					t.Errorf("created = %v", out)
				}
				is, ok := fk.Issue("PROJ-4")
				if !ok || is.Type != "Bug" || is.Priority != "High" || is.Assignee != grace || adfText(is.Description) != "Line one line two Second paragraph" {
					t.Errorf("stored = %+v", is)
				}
			}},
		{name: "create a sub-task under a parent", tool: "atlassian_jira_create_issue",
			input: `{"project_key":"PROJ","summary":"Reproduce","issue_type":"Sub-task","parent_key":"PROJ-4"}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/issue",
				body: `{"fields":{"project":{"key":"PROJ"},"summary":"Reproduce","issuetype":{"name":"Sub-task"},"parent":{"key":"PROJ-4"}}}`}},
			check: func(t *testing.T, out map[string]any) {
				if is, _ := fk.Issue("PROJ-5"); out["key"] != "PROJ-5" || is.Parent != "PROJ-4" {
					t.Errorf("created = %v, stored %+v", out, is)
				}
			}},
		{name: "update", tool: "atlassian_jira_update_issue",
			input: `{"issue_key":"PROJ-4","summary":"Login fails on Safari","description":"","add_labels":["ui"],"remove_labels":["backend"]}`,
			want: []wantRequest{{method: "PUT", path: "/rest/api/3/issue/PROJ-4", query: map[string]string{"notifyUsers": "true"},
				body: `{"fields":{"summary":"Login fails on Safari","description":null},"update":{"labels":[{"add":"ui"},{"remove":"backend"}]}}`}},
			check: func(t *testing.T, out map[string]any) {
				if mustJSON(t, out["updated"]) != `["summary","description","labels"]` || out["key"] != "PROJ-4" {
					t.Errorf("updated = %v", out)
				}
				if is, _ := fk.Issue("PROJ-4"); is.Summary != "Login fails on Safari" || is.Description != nil || !slices.Equal(is.Labels, []string{"ui"}) {
					t.Errorf("stored = %+v", is)
				}
			}},
		{name: "update replacing labels quietly", tool: "atlassian_jira_update_issue",
			input: `{"issue_key":"PROJ-4","labels":["a","b"],"priority":"Low","notify_users":false}`,
			want: []wantRequest{{method: "PUT", path: "/rest/api/3/issue/PROJ-4", query: map[string]string{"notifyUsers": "false"},
				body: `{"fields":{"priority":{"name":"Low"},"labels":["a","b"]}}`}},
			check: func(t *testing.T, out map[string]any) {
				if is, _ := fk.Issue("PROJ-4"); is.Priority != "Low" || !slices.Equal(is.Labels, []string{"a", "b"}) {
					t.Errorf("stored = %+v", is)
				}
			}},
		{name: "transitions", tool: "atlassian_jira_get_transitions", input: `{"issue_key":"PROJ-1"}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/issue/PROJ-1/transitions"}},
			check: func(t *testing.T, out map[string]any) {
				want := `{"transitions":[{"has_screen":false,"id":"21","name":"Start Progress","to_status":"In Progress","to_status_category":"indeterminate"},{"has_screen":false,"id":"31","name":"Done","to_status":"Done","to_status_category":"done"}]}`
				if got := mustJSON(t, out); got != want {
					t.Errorf("transitions = %s\nwant %s", got, want)
				}
			}},
		{name: "transition by status name with a comment", tool: "atlassian_jira_transition_issue",
			input: `{"issue_key":"PROJ-1","transition":"in progress","comment":"Working on it."}`,
			want: []wantRequest{
				{method: "GET", path: "/rest/api/3/issue/PROJ-1/transitions"},
				{method: "POST", path: "/rest/api/3/issue/PROJ-1/transitions", body: `{"transition":{"id":"21"},"update":{"comment":[{"add":{"body":
					{"type":"doc","version":1,"content":[{"type":"paragraph","content":[{"type":"text","text":"Working on it."}]}]}}}]}}`},
			},
			check: func(t *testing.T, out map[string]any) {
				if mustJSON(t, out) != `{"key":"PROJ-1","transition":"Start Progress","transition_id":"21"}` {
					t.Errorf("out = %v", out)
				}
				is, _ := fk.Issue("PROJ-1")
				cs := fk.Comments("PROJ-1")
				if is.Status != "In Progress" || len(cs) != 1 || adfText(cs[0].Body) != "Working on it." {
					t.Errorf("stored = %+v, comments %+v", is, cs)
				}
			}},
		{name: "transition by id", tool: "atlassian_jira_transition_issue", input: `{"issue_key":"PROJ-2","transition_id":"31"}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/issue/PROJ-2/transitions", body: `{"transition":{"id":"31"}}`}},
			check: func(t *testing.T, out map[string]any) {
				if is, _ := fk.Issue("PROJ-2"); is.Status != "Done" || out["transition"] != nil {
					t.Errorf("stored = %+v, out %v", is, out)
				}
			}},
		{name: "comment", tool: "atlassian_jira_add_comment", input: `{"issue_key":"PROJ-1","body":"Found it:\nthe config.\n\nFix coming."}`,
			want: []wantRequest{{method: "POST", path: "/rest/api/3/issue/PROJ-1/comment", body: `{"body":{"type":"doc","version":1,"content":[
				{"type":"paragraph","content":[{"type":"text","text":"Found it:"},{"type":"hardBreak"},{"type":"text","text":"the config."}]},
				{"type":"paragraph","content":[{"type":"text","text":"Fix coming."}]}]}}`}},
			check: func(t *testing.T, out map[string]any) {
				want := `{"author":{"account_id":"` + me + `","display_name":"Ada Lovelace"},"body":"Found it:\nthe config.\n\nFix coming.","created":"2024-01-02T03:16:05.000+0000","id":"20002","updated":"2024-01-02T03:16:05.000+0000"}`
				if got := mustJSON(t, out); got != want {
					t.Errorf("comment = %s\nwant %s", got, want)
				}
			}},
		{name: "comments, newest first, one per page", tool: "atlassian_jira_list_comments", input: `{"issue_key":"PROJ-1","max_results":1,"order_by":"-created"}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/issue/PROJ-1/comment", query: map[string]string{"startAt": "0", "maxResults": "1", "orderBy": "-created"}}},
			check: func(t *testing.T, out map[string]any) {
				cs := out["comments"].([]any)
				if len(cs) != 1 || cs[0].(map[string]any)["id"] != "20002" || out["total"] != 2.0 || out["next_start_at"] != 1.0 || out["start_at"] != 0.0 {
					t.Errorf("comments = %v", out)
				}
			}},
		{name: "comments, last page", tool: "atlassian_jira_list_comments", input: `{"issue_key":"PROJ-1","start_at":1}`,
			want: []wantRequest{{method: "GET", path: "/rest/api/3/issue/PROJ-1/comment", query: map[string]string{"startAt": "1", "maxResults": "50", "orderBy": "created"}}},
			check: func(t *testing.T, out map[string]any) {
				cs := out["comments"].([]any)
				if len(cs) != 1 || cs[0].(map[string]any)["body"] != "Found it:\nthe config.\n\nFix coming." || out["next_start_at"] != nil {
					t.Errorf("comments = %v", out)
				}
			}},
		{name: "assign", tool: "atlassian_jira_assign_issue", input: `{"issue_key":"PROJ-2","account_id":"` + grace + `"}`,
			want: []wantRequest{{method: "PUT", path: "/rest/api/3/issue/PROJ-2/assignee", body: `{"accountId":"` + grace + `"}`}},
			check: func(t *testing.T, out map[string]any) {
				if is, _ := fk.Issue("PROJ-2"); is.Assignee != grace || out["assignee_account_id"] != grace {
					t.Errorf("stored = %+v, out %v", is, out)
				}
			}},
		{name: "unassign", tool: "atlassian_jira_assign_issue", input: `{"issue_key":"PROJ-2","account_id":null}`,
			want: []wantRequest{{method: "PUT", path: "/rest/api/3/issue/PROJ-2/assignee", body: `{"accountId":null}`}},
			check: func(t *testing.T, out map[string]any) {
				if is, _ := fk.Issue("PROJ-2"); is.Assignee != "" || out["assignee_account_id"] != nil {
					t.Errorf("stored = %+v, out %v", is, out)
				}
			}},
		{name: "delete with sub-tasks", tool: "atlassian_jira_delete_issue", input: `{"issue_key":"PROJ-4","delete_subtasks":true}`,
			want: []wantRequest{{method: "DELETE", path: "/rest/api/3/issue/PROJ-4", query: map[string]string{"deleteSubtasks": "true"}}},
			check: func(t *testing.T, out map[string]any) {
				_, parent := fk.Issue("PROJ-4")
				_, child := fk.Issue("PROJ-5")
				if parent || child || mustJSON(t, out) != `{"deleted":true,"key":"PROJ-4"}` {
					t.Errorf("still there: %v %v; out %v", parent, child, out)
				}
			}},
		{name: "delete by id", tool: "atlassian_jira_delete_issue", input: `{"issue_key":"10002"}`,
			want: []wantRequest{{method: "DELETE", path: "/rest/api/3/issue/10002", query: map[string]string{"deleteSubtasks": "false"}}},
			check: func(t *testing.T, out map[string]any) {
				if _, ok := fk.Issue("PROJ-2"); ok {
					t.Error("PROJ-2 (id 10002) still there")
				}
			}},
	}
	called := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk.ClearRequests()
			var out map[string]any
			f.call(t, tt.tool, tt.input, &out)
			called[tt.tool] = true
			reqs := fk.Requests()
			if len(reqs) != len(tt.want) {
				t.Fatalf("fake saw %d requests, want %d: %+v", len(reqs), len(tt.want), reqs)
			}
			for i, w := range tt.want {
				assertRequest(t, reqs[i], w)
			}
			tt.check(t, out)
		})
	}
	for _, slug := range wantTools {
		if !called[slug] {
			t.Errorf("%s has no test case", slug)
		}
	}
}

func TestPlugin_SearchPagination(t *testing.T) {
	f := newFixture(t)
	f.fake.AddProject(Project{Key: "BIG", Name: "Big"})
	var want []string
	for range 5 {
		want = append(want, f.fake.AddIssue(Issue{Project: "BIG", Summary: "item"}))
	}
	f.fake.ClearRequests()
	var got []string
	token := ""
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("pagination does not end")
		}
		input := map[string]any{"jql": "project = BIG ORDER BY key ASC", "max_results": 2, "fields": []string{"summary"}}
		if token != "" {
			input["next_page_token"] = token
		}
		var out struct {
			Issues []struct{ Key string }
			Next   *string `json:"next_page_token"`
			IsLast bool    `json:"is_last"`
		}
		f.call(t, "atlassian_jira_search_issues", mustJSON(t, input), &out)
		for _, is := range out.Issues {
			got = append(got, is.Key)
		}
		reqs := f.fake.Requests()
		wantBody := `{"jql":"project = BIG ORDER BY key ASC","maxResults":2,"fields":["summary"]}`
		if token != "" {
			wantBody = `{"jql":"project = BIG ORDER BY key ASC","maxResults":2,"fields":["summary"],"nextPageToken":"` + token + `"}`
		}
		assertRequest(t, reqs[len(reqs)-1], wantRequest{method: "POST", path: "/rest/api/3/search/jql", body: wantBody})
		if out.IsLast != (out.Next == nil) {
			t.Fatalf("page %d: is_last %v with token %v", page, out.IsLast, out.Next)
		}
		if out.IsLast {
			break
		}
		token = *out.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	if n := len(f.fake.Requests()); n != 3 {
		t.Errorf("%d requests for 5 issues in pages of 2, want 3", n)
	}
}

func TestPlugin_ListProjectsPagination(t *testing.T) {
	f := newFixture(t)
	f.fake.AddProject(Project{Key: "ZED", Name: "Zed"})
	var first struct {
		Projects []struct{ Key string }
		IsLast   bool `json:"is_last"`
		Next     *int `json:"next_start_at"`
		Total    int
	}
	f.call(t, "atlassian_jira_list_projects", `{"max_results":2}`, &first)
	if len(first.Projects) != 2 || first.IsLast || first.Next == nil || *first.Next != 2 || first.Total != 3 {
		t.Fatalf("first page = %+v", first)
	}
	var second struct {
		Projects []struct{ Key string }
		IsLast   bool `json:"is_last"`
		Next     *int `json:"next_start_at"`
	}
	f.call(t, "atlassian_jira_list_projects", `{"max_results":2,"start_at":2}`, &second)
	if len(second.Projects) != 1 || second.Projects[0].Key != "ZED" || !second.IsLast || second.Next != nil {
		t.Fatalf("second page = %+v", second)
	}
	reqs := f.fake.Requests()
	assertRequest(t, reqs[len(reqs)-1], wantRequest{method: "GET", path: "/rest/api/3/project/search",
		query: map[string]string{"startAt": "2", "maxResults": "2", "orderBy": "key"}})
}

// TestPlugin_JiraErrors checks how Jira's error answers become tool errors.
func TestPlugin_JiraErrors(t *testing.T) {
	f := newFixture(t)
	f.creds.Set("wrong-token", "atlassian-jira", connection(site, email, "revoked"))
	tests := []struct {
		name, user, tool, input string
		setup                   func()
		code, message           string
		details                 string // JSON; "" skips the check
	}{
		{name: "404", tool: "atlassian_jira_get_issue", input: `{"issue_key":"PROJ-999"}`,
			code: "NOT_FOUND", message: "Issue does not exist or you do not have permission to see it.",
			details: `{"error_messages":["Issue does not exist or you do not have permission to see it."],"status":404}`},
		{name: "404 project", tool: "atlassian_jira_get_project", input: `{"project_key":"NOPE"}`,
			code: "NOT_FOUND", message: "No project could be found with key 'NOPE'."},
		{name: "400 with field errors", tool: "atlassian_jira_create_issue", input: `{"project_key":"PROJ","summary":"x","issue_type":"Nope"}`,
			code: "INVALID_ARGUMENTS", message: "Jira rejected the request: issuetype: Specify a valid issue type",
			details: `{"errors":{"issuetype":"Specify a valid issue type"},"status":400}`},
		{name: "400 unknown assignee", tool: "atlassian_jira_assign_issue", input: `{"issue_key":"PROJ-1","account_id":"nobody"}`,
			code: "INVALID_ARGUMENTS", message: "Jira rejected the request: assignee: User 'nobody' cannot be assigned issues."},
		{name: "400 unbounded JQL", tool: "atlassian_jira_search_issues", input: `{"jql":"ORDER BY created DESC"}`,
			code: "INVALID_ARGUMENTS", message: "Jira rejected the request: Unbounded JQL queries are not allowed here. Please add a search restriction to your query."},
		{name: "400 bad JQL", tool: "atlassian_jira_count_issues", input: `{"jql":"sprint = 5"}`,
			code: "INVALID_ARGUMENTS", message: "Jira rejected the request: Error in the JQL Query: Field 'sprint' does not exist or you do not have permission to view it."},
		{name: "400 invalid transition", tool: "atlassian_jira_transition_issue", input: `{"issue_key":"PROJ-1","transition_id":"99"}`,
			code: "INVALID_ARGUMENTS", message: "Jira rejected the request: Transition id '99' is not valid for this issue."},
		{name: "400 sub-tasks block a delete", tool: "atlassian_jira_delete_issue", input: `{"issue_key":"PROJ-1"}`,
			setup: func() { f.fake.AddIssue(Issue{Project: "PROJ", Type: "Sub-task", Summary: "child", Parent: "PROJ-1"}) },
			code:  "INVALID_ARGUMENTS", message: "Jira rejected the request: The issue has subtasks."},
		{name: "403", tool: "atlassian_jira_delete_issue", input: `{"issue_key":"OPS-1"}`,
			code: "FORBIDDEN", message: "Jira refused the request: You do not have permission to delete issues in this project.",
			details: `{"error_messages":["You do not have permission to delete issues in this project."],"status":403}`},
		{name: "401", user: "wrong-token", tool: "atlassian_jira_get_myself", input: `{}`,
			code: "UNAUTHORIZED", message: "Jira did not accept this connection's email and API token (Client must be authenticated to access this resource.)",
			details: `{"status":401}`},
		{name: "429", tool: "atlassian_jira_get_issue", input: `{"issue_key":"PROJ-1"}`, setup: func() { f.fake.LimitRate(30) },
			code: "RATE_LIMITED", message: "Jira's rate limit was reached: retry after 30 seconds",
			details: `{"error_messages":["Rate limit exceeded."],"retry_after_seconds":30,"status":429}`},
		{name: "503", tool: "atlassian_jira_get_myself", input: `{}`, setup: func() { f.fake.LimitRate(0); f.fake.SetOutage(true) },
			code: "UPSTREAM_ERROR", message: "Jira answered HTTP 503: <html><body><h1>503 Service Unavailable</h1></body></html>",
			details: `{"status":503}`},
		{name: "not connected", user: "stranger", tool: "atlassian_jira_get_myself", input: `{}`, setup: func() { f.fake.SetOutage(false) },
			code: "NOT_CONNECTED", message: "you are not connected to atlassian-jira"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			user := tt.user
			if user == "" {
				user = userID
			}
			te := f.toolError(t, user, tt.tool, tt.input)
			if string(te.Code) != tt.code || !strings.Contains(te.Message, tt.message) {
				t.Errorf("error = %s: %s\nwant %s containing %q", te.Code, te.Message, tt.code, tt.message)
			}
			if tt.details != "" && plugintest.CanonicalJSON(t, string(te.Details)) != plugintest.CanonicalJSON(t, tt.details) {
				t.Errorf("details = %s, want %s", te.Details, tt.details)
			}
		})
	}
}

// TestPlugin_InputChecks covers inputs the plugin refuses before sending
// anything.
func TestPlugin_InputChecks(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, tool, input, message, field string
	}{
		{"not JSON (refused by the host)", "atlassian_jira_get_issue", `{"issue_key":`, "not valid JSON", ""},
		{"missing key", "atlassian_jira_get_issue", `{}`, `missing required field "issue_key"`, "issue_key"},
		{"path escape", "atlassian_jira_get_issue", `{"issue_key":"../myself"}`, `field "issue_key": "../myself" is not an issue key`, "issue_key"},
		{"query in key", "atlassian_jira_list_comments", `{"issue_key":"PROJ-1?x=1"}`, "is not an issue key", "issue_key"},
		{"unknown field", "atlassian_jira_get_issue", `{"issue_key":"PROJ-1","expand":"x"}`, `unknown field "expand"`, "expand"},
		{"wrong type", "atlassian_jira_get_issue", `{"issue_key":12}`, `field "issue_key": expected string, got integer`, "issue_key"},
		{"page too large", "atlassian_jira_search_issues", `{"jql":"project = PROJ","max_results":101}`, "must be at most 100, got 101", "max_results"},
		{"page too small", "atlassian_jira_list_projects", `{"max_results":0}`, "must be at least 1, got 0", "max_results"},
		{"empty jql", "atlassian_jira_search_issues", `{"jql":""}`, "must be at least 1 characters long", "jql"},
		{"fields of the wrong type", "atlassian_jira_search_issues", `{"jql":"project = PROJ","fields":["summary",1]}`, `field "fields[1]"`, "fields[1]"},
		{"bad order", "atlassian_jira_list_comments", `{"issue_key":"PROJ-1","order_by":"updated"}`, `must be one of "created", "-created"`, "order_by"},
		{"nothing to update", "atlassian_jira_update_issue", `{"issue_key":"PROJ-1"}`, "nothing to update", ""},
		{"labels two ways", "atlassian_jira_update_issue", `{"issue_key":"PROJ-1","labels":["a"],"add_labels":["b"]}`, "not both", ""},
		{"two descriptions", "atlassian_jira_create_issue", `{"project_key":"PROJ","summary":"s","description":"d","description_adf":{"type":"doc","version":1,"content":[]}}`, "not both", ""},
		{"not an ADF document", "atlassian_jira_update_issue", `{"issue_key":"PROJ-1","description_adf":{"type":"paragraph"}}`, "must be an ADF document", "description_adf"},
		{"bad project key", "atlassian_jira_create_issue", `{"project_key":"P-1","summary":"s"}`, "is not a project key", "project_key"},
		{"bad parent key", "atlassian_jira_create_issue", `{"project_key":"PROJ","summary":"s","parent_key":"x"}`, "is not an issue key", "parent_key"},
		{"no transition", "atlassian_jira_transition_issue", `{"issue_key":"PROJ-1"}`, "give transition_id or transition", ""},
		{"two transitions", "atlassian_jira_transition_issue", `{"issue_key":"PROJ-1","transition":"Done","transition_id":"31"}`, "not both", ""},
		{"assignee missing", "atlassian_jira_assign_issue", `{"issue_key":"PROJ-1"}`, `missing required field "account_id"`, "account_id"},
		{"blank assignee", "atlassian_jira_assign_issue", `{"issue_key":"PROJ-1","account_id":" "}`, "use null to unassign", "account_id"},
		{"blank comment", "atlassian_jira_add_comment", `{"issue_key":"PROJ-1","body":"  "}`, "must not be empty", "body"},
		{"input not an object", "atlassian_jira_get_myself", `[]`, "the input must be an object, not an array", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.fake.ClearRequests()
			te := f.toolError(t, userID, tt.tool, tt.input)
			if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, tt.message) {
				t.Errorf("error = %s: %s, want INVALID_ARGUMENTS containing %q", te.Code, te.Message, tt.message)
			}
			if tt.field != "" {
				var d struct{ Field string }
				if err := json.Unmarshal(te.Details, &d); err != nil || d.Field != tt.field {
					t.Errorf("details = %s, want field %q", te.Details, tt.field)
				}
			}
			if reqs := f.fake.Requests(); len(reqs) != 0 {
				t.Errorf("the plugin sent %d requests for refused input: %+v", len(reqs), reqs)
			}
		})
	}
	// A transition name Jira does not offer is refused after listing them.
	f.fake.ClearRequests()
	te := f.toolError(t, userID, "atlassian_jira_transition_issue", `{"issue_key":"PROJ-1","transition":"Reopen"}`)
	if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, `available: "Start Progress", "Done"`) {
		t.Errorf("error = %s: %s", te.Code, te.Message)
	}
	if reqs := f.fake.Requests(); len(reqs) != 1 || reqs[0].Method != "GET" {
		t.Errorf("requests = %+v, want only the transitions listing", reqs)
	}
}
