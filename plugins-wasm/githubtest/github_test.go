package githubtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/plugins-wasm/plugintest"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// wasmPath is the built plugin under test.
const wasmPath = "../github/github.wasm"

const (
	token     = "gho_test"
	userID    = "u1"
	userAgent = "workbench-github-plugin/"
)

var cacheDir string

// TestMain shares one compilation cache between the tests, so the plugin
// is compiled once per run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "githubtest-cache-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a loaded plugin pointed at a fresh fake.
type fixture struct {
	fake   *Fake
	creds  *credential.Memory
	plugin *runtime.Plugin
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{fake: NewFake(t, token), creds: credential.NewMemory()}
	f.creds.Set(userID, "github", &credential.Credential{AccessToken: token})
	f.plugin = plugintest.Load(t, plugintest.ReadWasm(t, wasmPath), plugintest.HostConfig{
		CacheDir:    cacheDir,
		Credentials: f.creds,
		Egress:      egress.Options{AllowPrivate: true},
		Settings:    runtime.MapSettings{"github": {"base_url": f.fake.URL}},
	})
	f.fake.AddRepo(Repo{Owner: "octocat", Name: "hello-world", Description: "My first repository", Language: "Go",
		Stars: 80, Forks: 9, Topics: []string{"demo"}, Branches: []string{"feature"}, Protected: []string{"main"}})
	return f
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

// onlyRequest returns the only request the fake saw since it was cleared.
func (f *fixture) onlyRequest(t *testing.T) Request {
	t.Helper()
	reqs := f.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("fake saw %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// assertGitHubHeaders checks what every request must carry: the host's
// bearer token (once, never anything the plugin chose) and GitHub's
// documented headers.
func assertGitHubHeaders(t *testing.T, r Request) {
	t.Helper()
	if got := r.Header.Values("Authorization"); !slices.Equal(got, []string{"Bearer " + token}) {
		t.Errorf("%s %s: Authorization = %q, want exactly the injected bearer token", r.Method, r.Path, got)
	}
	if got := r.Header.Values("Accept"); !slices.Equal(got, []string{"application/vnd.github+json"}) {
		t.Errorf("%s %s: Accept = %q", r.Method, r.Path, got)
	}
	if got := r.Header.Values("X-Github-Api-Version"); !slices.Equal(got, []string{"2022-11-28"}) {
		t.Errorf("%s %s: X-GitHub-Api-Version = %q", r.Method, r.Path, got)
	}
	if got := r.Header.Get("User-Agent"); !strings.HasPrefix(got, userAgent) {
		t.Errorf("%s %s: User-Agent = %q", r.Method, r.Path, got)
	}
}

func TestPlugin_Manifest(t *testing.T) {
	m := newFixture(t).plugin.Manifest()
	if m.Name != "github" || m.BaseURL != "https://api.github.com" || m.Proxy == nil || m.Proxy.BaseURL != "https://api.github.com" ||
		!slices.Equal(m.Hosts, []string{"api.github.com"}) || !slices.Equal(m.Categories, []string{"developer-tools"}) {
		t.Errorf("manifest head = %+v", m)
	}
	o := m.Auth.OAuth2
	if m.Auth.Mode != "oauth2" || o == nil || o.AuthorizeURL != "https://github.com/login/oauth/authorize" ||
		o.TokenURL != "https://github.com/login/oauth/access_token" || !slices.Equal(o.Scopes, []string{"repo", "read:user"}) || o.TokenAuth != "post" {
		t.Errorf("auth = %+v %+v", m.Auth, o)
	}
	wantTools := []string{
		"github_get_authenticated_user", "github_list_repos", "github_get_repo",
		"github_list_issues", "github_get_issue", "github_create_issue", "github_update_issue",
		"github_list_issue_comments", "github_create_issue_comment",
		"github_list_pulls", "github_get_pull", "github_create_pull", "github_merge_pull",
		"github_search_issues", "github_search_repos",
		"github_list_branches", "github_get_branch", "github_list_commits", "github_get_commit", "github_get_contents",
		"github_list_labels", "github_add_labels", "github_list_reviews", "github_create_review",
		"github_list_releases", "github_get_latest_release", "github_list_workflows", "github_list_workflow_runs",
	}
	var slugs []string
	for _, tool := range m.Tools {
		slugs = append(slugs, tool.Slug)
		var schema struct {
			Type       string
			Properties map[string]struct {
				Minimum, Maximum *float64
				Default          json.RawMessage
			}
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s inputSchema %s: %v", tool.Slug, tool.InputSchema, err)
		}
		if strings.HasPrefix(tool.Slug, "github_list_") || strings.HasPrefix(tool.Slug, "github_search_") {
			pp := schema.Properties["per_page"]
			if pp.Minimum == nil || *pp.Minimum != 1 || pp.Maximum == nil || *pp.Maximum != 100 || string(pp.Default) != "30" {
				t.Errorf("%s per_page schema = %+v", tool.Slug, pp)
			}
		}
		if len(tool.OutputSchema) == 0 {
			t.Errorf("%s has no outputSchema", tool.Slug)
		}
		if tool.ExportName() != tool.Slug {
			t.Errorf("%s exports %s", tool.Slug, tool.ExportName())
		}
	}
	if !slices.Equal(slugs, wantTools) {
		t.Errorf("tools = %v\nwant %v", slugs, wantTools)
	}
	annotations := map[string][2]bool{ // readOnly, destructive
		"github_get_repo":           {true, false},
		"github_search_repos":       {true, false},
		"github_create_issue":       {false, false},
		"github_update_issue":       {false, false},
		"github_merge_pull":         {false, true},
		"github_get_contents":       {true, false},
		"github_list_workflow_runs": {true, false},
		"github_add_labels":         {false, false},
		"github_create_review":      {false, false},
	}
	for slug, want := range annotations {
		a := m.Tool(slug).Annotations
		if got := [2]bool{a.ReadOnly, a.Destructive}; got != want || !a.OpenWorld {
			t.Errorf("%s annotations = %+v, want readOnly/destructive %v and openWorld", slug, a, want)
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
	assertGitHubHeaders(t, r)
	plugintest.CheckRequest(t, r.Method, r.Path, r.Query, r.Body, plugintest.WantRequest{Method: want.method, Path: want.path, Query: want.query, Body: want.body})
	if ct := r.Header.Get("Content-Type"); want.body != "" && ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

// TestPlugin_Tools calls every tool once against seeded data. The cases run
// in order and share the fake's state: later cases see earlier changes.
func TestPlugin_Tools(t *testing.T) {
	f := newFixture(t)
	fk := f.fake
	fk.AddRepo(Repo{Owner: "other-org", Name: "tools.go", Private: true, Language: "Go", Stars: 5})
	bug := fk.AddIssue("octocat", "hello-world", Issue{Title: "Crash on start", Body: "It crashes.", Labels: []string{"bug"}, Assignees: []string{"octocat"}})
	pr := fk.AddPull("octocat", "hello-world", Pull{Title: "Add feature", Body: "Adds it.", Head: "feature"})
	fk.AddComment("octocat", "hello-world", bug, Comment{User: "hubot", Body: "Confirmed."})
	closedBug := fk.AddIssue("octocat", "hello-world", Issue{Title: "Old crash", State: "closed"})
	docs := fk.AddCommit("octocat", "hello-world", Commit{Message: "Add docs", Author: "hubot",
		Files: map[string]string{"docs/guide.md": "# Guide\n", "docs/api/ref.md": "ref\n", "main.go": "package main\n"}})
	fix := fk.AddCommit("octocat", "hello-world", Commit{Message: "Fix main", Files: map[string]string{"main.go": "package main\n\nfunc main() {}\n"}})
	fk.AddCommit("octocat", "hello-world", Commit{Branch: "feature/login", Message: "Login form", Files: map[string]string{"login.html": "<form>\n"}})
	fk.AddLabel("octocat", "hello-world", Label{Name: "bug", Color: "d73a4a", Description: "Something isn't working", Default: true})
	fk.AddLabel("octocat", "hello-world", Label{Name: "docs"})
	fk.AddReview("octocat", "hello-world", pr, Review{User: "hubot", State: "APPROVED", Body: "Ship it"})
	fk.AddRelease("octocat", "hello-world", Release{Tag: "v1.0.0", Name: "One"})
	fk.AddRelease("octocat", "hello-world", Release{Tag: "v1.1.0", Name: "One point one", Body: "Notes", Assets: []string{"hello.tar.gz"}})
	fk.AddRelease("octocat", "hello-world", Release{Tag: "v2.0.0-rc1", Prerelease: true})
	fk.AddRelease("octocat", "hello-world", Release{Tag: "v2.0.0", Draft: true, Body: "Draft notes"})
	ci := fk.AddWorkflow("octocat", "hello-world", Workflow{Name: "CI", Path: ".github/workflows/ci.yml"})
	fk.AddWorkflow("octocat", "hello-world", Workflow{Name: "Release", Path: ".github/workflows/release.yml", State: "disabled_manually"})
	fk.AddWorkflowRun("octocat", "hello-world", WorkflowRun{WorkflowID: ci, Conclusion: "success"})
	fk.AddWorkflowRun("octocat", "hello-world", WorkflowRun{WorkflowID: ci, Branch: "feature", Conclusion: "failure", Event: "pull_request"})
	fk.AddWorkflowRun("octocat", "hello-world", WorkflowRun{WorkflowID: ci, Status: "in_progress"})

	tests := []struct {
		name  string
		tool  string
		input string
		check func(t *testing.T, out map[string]any)
		want  wantRequest
	}{
		{name: "authenticated user", tool: "github_get_authenticated_user", input: `{}`,
			want: wantRequest{method: "GET", path: "/user"},
			check: func(t *testing.T, out map[string]any) {
				if out["login"] != "octocat" || out["name"] != "The Octocat" || out["public_repos"] != 1.0 {
					t.Errorf("user = %v", out)
				}
			}},
		{name: "empty input reaches the tool as no bytes at all", tool: "github_list_repos", input: ``,
			want: wantRequest{method: "GET", path: "/user/repos", query: map[string]string{"type": "all", "sort": "full_name", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				if len(out["repos"].([]any)) != 2 {
					t.Errorf("repos = %v", out)
				}
			}},
		{name: "list repos with defaults", tool: "github_list_repos", input: `{}`,
			want: wantRequest{method: "GET", path: "/user/repos", query: map[string]string{"type": "all", "sort": "full_name", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				repos := out["repos"].([]any)
				if len(repos) != 2 || repos[0].(map[string]any)["full_name"] != "octocat/hello-world" ||
					repos[1].(map[string]any)["private"] != true || out["next_page"] != 0.0 {
					t.Errorf("repos = %v", out)
				}
			}},
		{name: "list repos with filters", tool: "github_list_repos", input: `{"type":"member","sort":"updated","direction":"asc","per_page":5,"page":1}`,
			want: wantRequest{method: "GET", path: "/user/repos", query: map[string]string{"type": "member", "sort": "updated", "direction": "asc", "per_page": "5", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				repos := out["repos"].([]any)
				if len(repos) != 1 || repos[0].(map[string]any)["full_name"] != "other-org/tools.go" {
					t.Errorf("repos = %v", out)
				}
			}},
		{name: "get repo", tool: "github_get_repo", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world"},
			check: func(t *testing.T, out map[string]any) {
				if out["full_name"] != "octocat/hello-world" || out["owner"] != "octocat" || out["stars"] != 80.0 ||
					out["default_branch"] != "main" || out["language"] != "Go" || out["description"] != "My first repository" {
					t.Errorf("repo = %v", out)
				}
			}},
		{name: "get repo with dots in the name", tool: "github_get_repo", input: `{"owner":"other-org","repo":"tools.go"}`,
			want: wantRequest{method: "GET", path: "/repos/other-org/tools.go"},
			check: func(t *testing.T, out map[string]any) {
				if out["full_name"] != "other-org/tools.go" || out["visibility"] != "private" {
					t.Errorf("repo = %v", out)
				}
			}},
		{name: "list issues marks pull requests", tool: "github_list_issues", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/issues",
				query: map[string]string{"state": "open", "sort": "created", "direction": "desc", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				issues := out["issues"].([]any)
				if len(issues) != 2 {
					t.Fatalf("issues = %v", out)
				}
				first, second := issues[0].(map[string]any), issues[1].(map[string]any)
				if first["number"] != float64(pr) || first["is_pull_request"] != true ||
					second["number"] != float64(bug) || second["is_pull_request"] != false || second["body"] != nil ||
					!slices.Equal(toStrings(second["labels"]), []string{"bug"}) || second["comments"] != 1.0 {
					t.Errorf("issues = %v", issues)
				}
			}},
		{name: "list issues with filters", tool: "github_list_issues",
			input: `{"owner":"octocat","repo":"hello-world","state":"all","labels":["bug","p1"],"assignee":"octocat","creator":"octocat","sort":"updated","direction":"asc","since":"2020-01-01T00:00:00Z","per_page":10,"page":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/issues", query: map[string]string{
				"state": "all", "labels": "bug,p1", "assignee": "octocat", "creator": "octocat", "sort": "updated",
				"direction": "asc", "since": "2020-01-01T00:00:00Z", "per_page": "10", "page": "2"}},
			check: func(t *testing.T, out map[string]any) {
				if len(out["issues"].([]any)) != 0 || out["next_page"] != 0.0 {
					t.Errorf("issues = %v", out)
				}
			}},
		{name: "get issue", tool: "github_get_issue", input: `{"owner":"octocat","repo":"hello-world","issue_number":1}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/issues/1"},
			check: func(t *testing.T, out map[string]any) {
				if out["title"] != "Crash on start" || out["body"] != "It crashes." || out["state"] != "open" ||
					out["user"] != "octocat" || !slices.Equal(toStrings(out["assignees"]), []string{"octocat"}) {
					t.Errorf("issue = %v", out)
				}
			}},
		{name: "create issue", tool: "github_create_issue",
			input: `{"owner":"octocat","repo":"hello-world","title":"New bug","body":"Details","labels":["bug"],"assignees":["octocat"]}`,
			want: wantRequest{method: "POST", path: "/repos/octocat/hello-world/issues",
				body: `{"title":"New bug","body":"Details","labels":["bug"],"assignees":["octocat"]}`},
			check: func(t *testing.T, out map[string]any) {
				n := int(out["number"].(float64))
				stored, ok := fk.Issue("octocat", "hello-world", n)
				if out["title"] != "New bug" || !ok || stored.Title != "New bug" || stored.Body != "Details" {
					t.Errorf("issue = %v, stored %+v", out, stored)
				}
			}},
		{name: "update issue closes it", tool: "github_update_issue",
			input: `{"owner":"octocat","repo":"hello-world","issue_number":1,"state":"closed","state_reason":"not_planned","labels":[]}`,
			want: wantRequest{method: "PATCH", path: "/repos/octocat/hello-world/issues/1",
				body: `{"state":"closed","state_reason":"not_planned","labels":[]}`},
			check: func(t *testing.T, out map[string]any) {
				stored, _ := fk.Issue("octocat", "hello-world", bug)
				if out["state"] != "closed" || out["state_reason"] != "not_planned" || stored.State != "closed" || len(stored.Labels) != 0 {
					t.Errorf("issue = %v, stored %+v", out, stored)
				}
			}},
		{name: "update issue reopens and retitles", tool: "github_update_issue",
			input: fmt.Sprintf(`{"owner":"octocat","repo":"hello-world","issue_number":%d,"state":"open","title":"Old crash is back"}`, closedBug),
			want: wantRequest{method: "PATCH", path: fmt.Sprintf("/repos/octocat/hello-world/issues/%d", closedBug),
				body: `{"title":"Old crash is back","state":"open"}`},
			check: func(t *testing.T, out map[string]any) {
				stored, _ := fk.Issue("octocat", "hello-world", closedBug)
				if out["state"] != "open" || stored.Title != "Old crash is back" || out["closed_at"] != nil {
					t.Errorf("issue = %v, stored %+v", out, stored)
				}
			}},
		{name: "list issue comments", tool: "github_list_issue_comments", input: `{"owner":"octocat","repo":"hello-world","issue_number":1}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/issues/1/comments", query: map[string]string{"per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				comments := out["comments"].([]any)
				if len(comments) != 1 || comments[0].(map[string]any)["user"] != "hubot" || comments[0].(map[string]any)["body"] != "Confirmed." {
					t.Errorf("comments = %v", out)
				}
			}},
		{name: "create issue comment", tool: "github_create_issue_comment", input: `{"owner":"octocat","repo":"hello-world","issue_number":2,"body":"LGTM"}`,
			want: wantRequest{method: "POST", path: "/repos/octocat/hello-world/issues/2/comments", body: `{"body":"LGTM"}`},
			check: func(t *testing.T, out map[string]any) {
				stored := fk.Comments("octocat", "hello-world", pr)
				if out["body"] != "LGTM" || out["user"] != "octocat" || len(stored) != 1 || stored[0].Body != "LGTM" {
					t.Errorf("comment = %v, stored %+v", out, stored)
				}
			}},
		{name: "list pulls", tool: "github_list_pulls", input: `{"owner":"octocat","repo":"hello-world","head":"octocat:feature","base":"main"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/pulls",
				query: map[string]string{"state": "open", "sort": "created", "head": "octocat:feature", "base": "main", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				pulls := out["pulls"].([]any)
				if len(pulls) != 1 {
					t.Fatalf("pulls = %v", out)
				}
				p := pulls[0].(map[string]any)
				head := p["head"].(map[string]any)
				if p["number"] != float64(pr) || head["ref"] != "feature" || head["repository"] != "octocat/hello-world" || p["body"] != nil {
					t.Errorf("pull = %v", p)
				}
			}},
		{name: "get pull", tool: "github_get_pull", input: `{"owner":"octocat","repo":"hello-world","pull_number":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/pulls/2"},
			check: func(t *testing.T, out map[string]any) {
				if out["title"] != "Add feature" || out["body"] != "Adds it." || out["mergeable"] != true ||
					out["merged"] != false || out["commits"] != 3.0 || out["base"].(map[string]any)["ref"] != "main" {
					t.Errorf("pull = %v", out)
				}
			}},
		{name: "merge pull", tool: "github_merge_pull", input: `{"owner":"octocat","repo":"hello-world","pull_number":2,"merge_method":"squash","commit_title":"Feature (#2)"}`,
			want: wantRequest{method: "PUT", path: "/repos/octocat/hello-world/pulls/2/merge",
				body: `{"merge_method":"squash","commit_title":"Feature (#2)"}`},
			check: func(t *testing.T, out map[string]any) {
				stored, _ := fk.Pull("octocat", "hello-world", pr)
				if out["merged"] != true || len(out["sha"].(string)) != 40 || !stored.Merged || stored.State != "closed" {
					t.Errorf("merge = %v, stored %+v", out, stored)
				}
			}},
		{name: "create pull", tool: "github_create_pull",
			input: `{"owner":"octocat","repo":"hello-world","title":"Again","head":"feature","base":"main","draft":true,"maintainer_can_modify":false}`,
			want: wantRequest{method: "POST", path: "/repos/octocat/hello-world/pulls",
				body: `{"title":"Again","head":"feature","base":"main","draft":true,"maintainer_can_modify":false}`},
			check: func(t *testing.T, out map[string]any) {
				stored, ok := fk.Pull("octocat", "hello-world", int(out["number"].(float64)))
				if out["draft"] != true || out["state"] != "open" || !ok || stored.Head != "feature" {
					t.Errorf("pull = %v, stored %+v", out, stored)
				}
			}},
		{name: "search issues", tool: "github_search_issues", input: `{"q":"repo:octocat/hello-world is:issue crash","sort":"updated","order":"asc"}`,
			want: wantRequest{method: "GET", path: "/search/issues",
				query: map[string]string{"q": "repo:octocat/hello-world is:issue crash", "sort": "updated", "order": "asc", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				items := out["items"].([]any)
				if out["total_count"] != 2.0 || len(items) != 2 || items[0].(map[string]any)["repository"] != "octocat/hello-world" {
					t.Errorf("search = %v", out)
				}
			}},
		{name: "search repos", tool: "github_search_repos", input: `{"q":"language:go tools","per_page":1}`,
			want: wantRequest{method: "GET", path: "/search/repositories", query: map[string]string{"q": "language:go tools", "per_page": "1", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				items := out["items"].([]any)
				if out["total_count"] != 1.0 || len(items) != 1 || items[0].(map[string]any)["full_name"] != "other-org/tools.go" {
					t.Errorf("search = %v", out)
				}
			}},
		{name: "list branches", tool: "github_list_branches", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/branches", query: map[string]string{"per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				branches := out["branches"].([]any)
				var names []string
				for _, b := range branches {
					names = append(names, b.(map[string]any)["name"].(string))
				}
				main := branches[len(branches)-1].(map[string]any)
				if !slices.Equal(names, []string{"feature", "feature/login", "main"}) || main["protected"] != true ||
					branches[0].(map[string]any)["protected"] != false || len(main["sha"].(string)) != 40 {
					t.Errorf("branches = %v", out)
				}
			}},
		{name: "list protected branches", tool: "github_list_branches", input: `{"owner":"octocat","repo":"hello-world","protected":true,"per_page":1}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/branches", query: map[string]string{"protected": "true", "per_page": "1", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				branches := out["branches"].([]any)
				if len(branches) != 1 || branches[0].(map[string]any)["name"] != "main" || out["next_page"] != 0.0 {
					t.Errorf("branches = %v", out)
				}
			}},
		{name: "get branch", tool: "github_get_branch", input: `{"owner":"octocat","repo":"hello-world","branch":"main"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/branches/main"},
			check: func(t *testing.T, out map[string]any) {
				c := out["commit"].(map[string]any)
				if out["name"] != "main" || out["protected"] != true || c["message"] != "Merge pull request #2" ||
					len(c["parents"].([]any)) != 2 || c["author_login"] != "octocat" {
					t.Errorf("branch = %v", out)
				}
			}},
		{name: "get branch with a slash", tool: "github_get_branch", input: `{"owner":"octocat","repo":"hello-world","branch":"feature/login"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/branches/feature/login"},
			check: func(t *testing.T, out map[string]any) {
				if out["name"] != "feature/login" || out["commit"].(map[string]any)["message"] != "Login form" {
					t.Errorf("branch = %v", out)
				}
			}},
		{name: "list commits", tool: "github_list_commits", input: `{"owner":"octocat","repo":"hello-world","per_page":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/commits", query: map[string]string{"per_page": "2", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				commits := out["commits"].([]any)
				if len(commits) != 2 || out["next_page"] != 2.0 || commits[0].(map[string]any)["message"] != "Merge pull request #2" ||
					commits[1].(map[string]any)["sha"] != fix {
					t.Errorf("commits = %v", out)
				}
			}},
		{name: "list commits with filters", tool: "github_list_commits",
			input: `{"owner":"octocat","repo":"hello-world","sha":"main","path":"docs","author":"hubot","since":"2020-01-01T00:00:00Z","until":"2030-01-01T00:00:00Z"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/commits", query: map[string]string{"sha": "main", "path": "docs",
				"author": "hubot", "since": "2020-01-01T00:00:00Z", "until": "2030-01-01T00:00:00Z", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				commits := out["commits"].([]any)
				if len(commits) != 1 {
					t.Fatalf("commits = %v", out)
				}
				c := commits[0].(map[string]any)
				if c["sha"] != docs || c["author_login"] != "hubot" || c["author_name"] != "hubot" || c["files"] != nil {
					t.Errorf("commit = %v", c)
				}
			}},
		{name: "get commit", tool: "github_get_commit", input: `{"owner":"octocat","repo":"hello-world","ref":"` + fix + `"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/commits/" + fix},
			check: func(t *testing.T, out map[string]any) {
				files := out["files"].([]any)
				if out["message"] != "Fix main" || !slices.Equal(toStrings(out["parents"]), []string{docs}) || len(files) != 1 ||
					out["additions"] != 3.0 || out["deletions"] != 1.0 {
					t.Fatalf("commit = %v", out)
				}
				file := files[0].(map[string]any)
				if file["filename"] != "main.go" || file["status"] != "modified" || !strings.Contains(file["patch"].(string), "+func main() {}") {
					t.Errorf("file = %v", file)
				}
			}},
		{name: "get file contents", tool: "github_get_contents", input: `{"owner":"octocat","repo":"hello-world","path":"docs/guide.md","ref":"main"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/contents/docs/guide.md", query: map[string]string{"ref": "main"}},
			check: func(t *testing.T, out map[string]any) {
				if out["type"] != "file" || out["content"] != "# Guide\n" || out["size"] != 8.0 || out["path"] != "docs/guide.md" ||
					out["truncated"] != nil || len(out["sha"].(string)) != 40 {
					t.Errorf("contents = %v", out)
				}
			}},
		{name: "get directory contents", tool: "github_get_contents", input: `{"owner":"octocat","repo":"hello-world","path":"docs"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/contents/docs"},
			check: func(t *testing.T, out map[string]any) {
				entries := out["entries"].([]any)
				if out["type"] != "dir" || len(entries) != 2 {
					t.Fatalf("contents = %v", out)
				}
				api, guide := entries[0].(map[string]any), entries[1].(map[string]any)
				if api["name"] != "api" || api["type"] != "dir" || guide["path"] != "docs/guide.md" || guide["type"] != "file" || guide["size"] != 8.0 {
					t.Errorf("entries = %v", entries)
				}
			}},
		{name: "get root contents at a commit", tool: "github_get_contents", input: `{"owner":"octocat","repo":"hello-world","ref":"` + docs + `"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/contents", query: map[string]string{"ref": docs}},
			check: func(t *testing.T, out map[string]any) {
				var names []string
				for _, e := range out["entries"].([]any) {
					names = append(names, e.(map[string]any)["name"].(string))
				}
				if !slices.Equal(names, []string{"README.md", "docs", "main.go"}) {
					t.Errorf("root = %v", out)
				}
			}},
		{name: "list labels", tool: "github_list_labels", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/labels", query: map[string]string{"per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				labels := out["labels"].([]any)
				if len(labels) != 2 {
					t.Fatalf("labels = %v", out)
				}
				bug := labels[0].(map[string]any)
				if bug["name"] != "bug" || bug["color"] != "d73a4a" || bug["default"] != true || bug["description"] != "Something isn't working" {
					t.Errorf("label = %v", bug)
				}
			}},
		{name: "add labels", tool: "github_add_labels", input: `{"owner":"octocat","repo":"hello-world","issue_number":4,"labels":["p1","BUG","docs"]}`,
			want: wantRequest{method: "POST", path: "/repos/octocat/hello-world/issues/4/labels", body: `{"labels":["p1","BUG","docs"]}`},
			check: func(t *testing.T, out map[string]any) {
				var names []string
				for _, l := range out["labels"].([]any) {
					names = append(names, l.(map[string]any)["name"].(string))
				}
				stored, _ := fk.Issue("octocat", "hello-world", 4) // created by "create issue" with the bug label
				if !slices.Equal(names, []string{"bug", "p1", "docs"}) || !slices.Equal(stored.Labels, names) {
					t.Errorf("labels = %v, stored %v", names, stored.Labels)
				}
			}},
		{name: "list reviews", tool: "github_list_reviews", input: `{"owner":"octocat","repo":"hello-world","pull_number":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/pulls/2/reviews", query: map[string]string{"per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				reviews := out["reviews"].([]any)
				if len(reviews) != 1 {
					t.Fatalf("reviews = %v", out)
				}
				r := reviews[0].(map[string]any)
				if r["user"] != "hubot" || r["state"] != "APPROVED" || r["body"] != "Ship it" || len(r["commit_id"].(string)) != 40 || r["submitted_at"] == nil {
					t.Errorf("review = %v", r)
				}
			}},
		{name: "create review", tool: "github_create_review", input: `{"owner":"octocat","repo":"hello-world","pull_number":2,"event":"COMMENT","body":"Noted."}`,
			want: wantRequest{method: "POST", path: "/repos/octocat/hello-world/pulls/2/reviews", body: `{"event":"COMMENT","body":"Noted."}`},
			check: func(t *testing.T, out map[string]any) {
				stored := fk.Reviews("octocat", "hello-world", pr)
				if out["state"] != "COMMENTED" || out["user"] != "octocat" || len(stored) != 2 || stored[1].Body != "Noted." {
					t.Errorf("review = %v, stored %+v", out, stored)
				}
			}},
		{name: "list releases", tool: "github_list_releases", input: `{"owner":"octocat","repo":"hello-world","per_page":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/releases", query: map[string]string{"per_page": "2", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				releases := out["releases"].([]any)
				if len(releases) != 2 || out["next_page"] != 2.0 {
					t.Fatalf("releases = %v", out)
				}
				draft, rc := releases[0].(map[string]any), releases[1].(map[string]any)
				if draft["tag_name"] != "v2.0.0" || draft["draft"] != true || draft["body"] != nil || draft["published_at"] != nil ||
					rc["tag_name"] != "v2.0.0-rc1" || rc["prerelease"] != true {
					t.Errorf("releases = %v", releases)
				}
			}},
		{name: "get latest release", tool: "github_get_latest_release", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/releases/latest"},
			check: func(t *testing.T, out map[string]any) {
				assets := out["assets"].([]any)
				if out["tag_name"] != "v1.1.0" || out["body"] != "Notes" || out["target_commitish"] != "main" || len(assets) != 1 ||
					assets[0].(map[string]any)["name"] != "hello.tar.gz" || assets[0].(map[string]any)["size"] != 1024.0 {
					t.Errorf("release = %v", out)
				}
			}},
		{name: "list workflows", tool: "github_list_workflows", input: `{"owner":"octocat","repo":"hello-world"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/actions/workflows", query: map[string]string{"per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				workflows := out["workflows"].([]any)
				if out["total_count"] != 2.0 || len(workflows) != 2 || workflows[0].(map[string]any)["path"] != ".github/workflows/ci.yml" ||
					workflows[1].(map[string]any)["state"] != "disabled_manually" {
					t.Errorf("workflows = %v", out)
				}
			}},
		{name: "list workflow runs", tool: "github_list_workflow_runs", input: `{"owner":"octocat","repo":"hello-world","per_page":2}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/actions/runs", query: map[string]string{"per_page": "2", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				runs := out["runs"].([]any)
				if out["total_count"] != 3.0 || len(runs) != 2 || out["next_page"] != 2.0 ||
					runs[0].(map[string]any)["status"] != "in_progress" || runs[0].(map[string]any)["run_number"] != 3.0 {
					t.Errorf("runs = %v", out)
				}
			}},
		{name: "list workflow runs with filters", tool: "github_list_workflow_runs", input: `{"owner":"octocat","repo":"hello-world","branch":"feature","status":"failure"}`,
			want: wantRequest{method: "GET", path: "/repos/octocat/hello-world/actions/runs",
				query: map[string]string{"branch": "feature", "status": "failure", "per_page": "30", "page": "1"}},
			check: func(t *testing.T, out map[string]any) {
				runs := out["runs"].([]any)
				if out["total_count"] != 1.0 || len(runs) != 1 {
					t.Fatalf("runs = %v", out)
				}
				r := runs[0].(map[string]any)
				if r["conclusion"] != "failure" || r["event"] != "pull_request" || r["head_branch"] != "feature" || r["workflow_id"] != float64(ci) {
					t.Errorf("run = %v", r)
				}
			}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			covered[tt.tool] = true
			fk.ClearRequests()
			var out map[string]any
			f.call(t, tt.tool, tt.input, &out)
			assertRequest(t, f.onlyRequest(t), tt.want)
			tt.check(t, out)
		})
	}
	for _, tool := range f.plugin.Manifest().Tools {
		if !covered[tool.Slug] {
			t.Errorf("%s is not exercised", tool.Slug)
		}
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestPlugin_Pagination(t *testing.T) {
	f := newFixture(t)
	for i := range 75 {
		f.fake.AddIssue("octocat", "hello-world", Issue{Title: fmt.Sprintf("Issue %d", i+1)})
	}
	tests := []struct {
		input        string
		wantCount    int
		wantNext     float64
		wantFirst    float64 // number of the first issue (newest first)
		wantPerPage  string
		wantPageSent string
	}{
		{`{"owner":"octocat","repo":"hello-world"}`, 30, 2, 75, "30", "1"},
		{`{"owner":"octocat","repo":"hello-world","page":2}`, 30, 3, 45, "30", "2"},
		{`{"owner":"octocat","repo":"hello-world","page":3}`, 15, 0, 15, "30", "3"},
		{`{"owner":"octocat","repo":"hello-world","per_page":100}`, 75, 0, 75, "100", "1"},
		{`{"owner":"octocat","repo":"hello-world","per_page":25,"page":2}`, 25, 3, 50, "25", "2"},
		{`{"owner":"octocat","repo":"hello-world","page":9}`, 0, 0, 0, "30", "9"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			f.fake.ClearRequests()
			var out struct {
				Issues []struct {
					Number float64 `json:"number"`
				} `json:"issues"`
				NextPage float64 `json:"next_page"`
			}
			f.call(t, "github_list_issues", tt.input, &out)
			if len(out.Issues) != tt.wantCount || out.NextPage != tt.wantNext {
				t.Errorf("got %d issues, next_page %v; want %d, %v", len(out.Issues), out.NextPage, tt.wantCount, tt.wantNext)
			}
			if tt.wantCount > 0 && out.Issues[0].Number != tt.wantFirst {
				t.Errorf("first issue = %v, want %v", out.Issues[0].Number, tt.wantFirst)
			}
			r := f.onlyRequest(t)
			if r.Query.Get("per_page") != tt.wantPerPage || r.Query.Get("page") != tt.wantPageSent {
				t.Errorf("query = %v", r.Query)
			}
		})
	}
}

func TestPlugin_Errors(t *testing.T) {
	f := newFixture(t)
	f.fake.AddRepo(Repo{Owner: "octocat", Name: "attic", Archived: true})
	f.fake.AddPull("octocat", "hello-world", Pull{Title: "Conflicting", Head: "conflict", Unmergeable: true})
	f.fake.AddPull("octocat", "hello-world", Pull{Title: "Moving", Head: "moving"})
	f.creds.Set("stale", "github", &credential.Credential{AccessToken: "gho_revoked"})
	tests := []struct {
		name     string
		user     string
		tool     string
		input    string
		before   func()
		wantCode string
		wantMsg  []string
		details  string // a JSON fragment details must contain
	}{
		{name: "401 bad credentials", user: "stale", tool: "github_get_authenticated_user", input: `{}`,
			wantCode: "UNAUTHORIZED", wantMsg: []string{"Bad credentials", "reconnect"}, details: `"status":401`},
		{name: "404 missing repository", tool: "github_get_repo", input: `{"owner":"octocat","repo":"nope"}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"GET /repos/octocat/nope", "Not Found"},
			details: `"documentation_url":"https://docs.github.com/rest"`},
		{name: "404 missing issue", tool: "github_get_issue", input: `{"owner":"octocat","repo":"hello-world","issue_number":999}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"/issues/999"}},
		{name: "422 with the errors array", tool: "github_create_issue", input: `{"owner":"octocat","repo":"hello-world","title":"T","assignees":["mallory"]}`,
			wantCode: "VALIDATION_FAILED", wantMsg: []string{"Validation Failed", "assignees: invalid"},
			details: `"errors":[{"resource":"Issue","field":"assignees","code":"invalid"}]`},
		{name: "422 with a custom message", tool: "github_create_pull", input: `{"owner":"octocat","repo":"hello-world","title":"T","head":"main","base":"main"}`,
			wantCode: "VALIDATION_FAILED", wantMsg: []string{"No commits between main and main"}},
		{name: "403 archived repository", tool: "github_create_issue_comment", input: `{"owner":"octocat","repo":"attic","issue_number":1,"body":"x"}`,
			before:   func() { f.fake.AddIssue("octocat", "attic", Issue{Title: "old"}) },
			wantCode: "FORBIDDEN", wantMsg: []string{"archived"}},
		{name: "405 unmergeable pull request", tool: "github_merge_pull", input: `{"owner":"octocat","repo":"hello-world","pull_number":1}`,
			wantCode: "CONFLICT", wantMsg: []string{"not mergeable"}},
		{name: "409 head moved", tool: "github_merge_pull", input: `{"owner":"octocat","repo":"hello-world","pull_number":2,"sha":"0000000000000000000000000000000000000000"}`,
			wantCode: "CONFLICT", wantMsg: []string{"Head branch was modified"}},
		{name: "422 review of one's own pull request", tool: "github_create_review", input: `{"owner":"octocat","repo":"hello-world","pull_number":2,"event":"APPROVE"}`,
			wantCode: "VALIDATION_FAILED", wantMsg: []string{"POST /repos/octocat/hello-world/pulls/2/reviews", "Can not approve your own pull request"},
			details: `"errors":[{"message":"Can not approve your own pull request"}]`},
		{name: "404 review of a missing pull request", tool: "github_create_review", input: `{"owner":"octocat","repo":"hello-world","pull_number":99,"event":"COMMENT","body":"x"}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"/pulls/99/reviews"}},
		{name: "404 labels on a missing issue", tool: "github_add_labels", input: `{"owner":"octocat","repo":"hello-world","issue_number":999,"labels":["bug"]}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"/issues/999/labels"}},
		{name: "403 labels in an archived repository", tool: "github_add_labels", input: `{"owner":"octocat","repo":"attic","issue_number":1,"labels":["bug"]}`,
			wantCode: "FORBIDDEN", wantMsg: []string{"archived"}},
		{name: "404 missing branch", tool: "github_get_branch", input: `{"owner":"octocat","repo":"hello-world","branch":"nope"}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"Branch not found"}},
		{name: "422 unknown commit", tool: "github_get_commit", input: `{"owner":"octocat","repo":"hello-world","ref":"nope"}`,
			wantCode: "VALIDATION_FAILED", wantMsg: []string{"No commit found for SHA: nope"}},
		{name: "404 missing file", tool: "github_get_contents", input: `{"owner":"octocat","repo":"hello-world","path":"no/such.txt"}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"/contents/no/such.txt"}},
		{name: "404 no published release", tool: "github_get_latest_release", input: `{"owner":"octocat","repo":"attic"}`,
			wantCode: "NOT_FOUND", wantMsg: []string{"/releases/latest"}},
		{name: "rate limited", tool: "github_list_repos", input: `{}`,
			before:   func() { f.fake.LimitRate(time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)) },
			wantCode: "RATE_LIMITED", wantMsg: []string{"API rate limit exceeded", "resets at 2030-05-06T07:08:09Z"},
			details: `"rate_limit_reset":"2030-05-06T07:08:09Z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			defer f.fake.LimitRate(time.Time{})
			user := cmp.Or(tt.user, userID)
			f.fake.ClearRequests()
			te := f.toolError(t, user, tt.tool, tt.input)
			if string(te.Code) != tt.wantCode {
				t.Errorf("code = %s (%s), want %s", te.Code, te.Message, tt.wantCode)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(te.Message, m) {
					t.Errorf("message %q does not contain %q", te.Message, m)
				}
			}
			if !strings.Contains(string(te.Details), tt.details) {
				t.Errorf("details %s do not contain %s", te.Details, tt.details)
			}
			r := f.onlyRequest(t)
			if user == "stale" {
				if got := r.Header.Get("Authorization"); got != "Bearer gho_revoked" {
					t.Errorf("Authorization = %q, want the stale user's token", got)
				}
			} else {
				assertGitHubHeaders(t, r)
			}
		})
	}
}

func TestPlugin_NotConnected(t *testing.T) {
	f := newFixture(t)
	f.fake.ClearRequests()
	te := f.toolError(t, "nobody", "github_get_repo", `{"owner":"octocat","repo":"hello-world"}`)
	if te.Code != "NOT_CONNECTED" || !strings.Contains(te.Message, "github") {
		t.Errorf("error = %+v, want NOT_CONNECTED", te)
	}
	if reqs := f.fake.Requests(); len(reqs) != 0 {
		t.Errorf("fake saw %d requests from a user without a connection", len(reqs))
	}
}

func TestPlugin_InvalidArguments(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		tool    string
		input   string
		wantMsg string
	}{
		{"owner with a space", "github_get_repo", `{"owner":"bad owner","repo":"r"}`, `owner "bad owner"`},
		{"owner with a slash", "github_list_issues", `{"owner":"octocat/../admin","repo":"r"}`, `owner "octocat/../admin"`},
		{"owner starting with a hyphen", "github_get_repo", `{"owner":"-octo","repo":"r"}`, `owner "-octo"`},
		{"owner too long", "github_get_repo", `{"owner":"` + strings.Repeat("a", 40) + `","repo":"r"}`, "not a GitHub account name"},
		{"repo ..", "github_get_repo", `{"owner":"octocat","repo":".."}`, `repo ".."`},
		{"repo with a query", "github_get_issue", `{"owner":"octocat","repo":"r?x=1","issue_number":1}`, `repo "r?x=1"`},
		{"missing owner", "github_get_repo", `{"repo":"r"}`, `missing required field "owner"`},
		{"issue number 0", "github_get_issue", `{"owner":"octocat","repo":"r","issue_number":0}`, `field "issue_number": must be at least 1`},
		{"per_page above 100", "github_list_repos", `{"per_page":101}`, `field "per_page": must be at most 100`},
		{"state outside the enum", "github_list_issues", `{"owner":"o","repo":"r","state":"merged"}`, `field "state"`},
		{"unknown field", "github_get_repo", `{"owner":"o","repo":"r","token":"x"}`, `unknown field "token"`},
		{"wrong type", "github_get_pull", `{"owner":"o","repo":"r","pull_number":"2"}`, `field "pull_number": expected integer, got string`},
		{"empty title", "github_create_issue", `{"owner":"o","repo":"r","title":"  "}`, "title must not be empty"},
		{"nothing to update", "github_update_issue", `{"owner":"o","repo":"r","issue_number":1}`, "nothing to change"},
		{"empty search", "github_search_repos", `{"q":" "}`, "q must not be empty"},
		{"no labels to add", "github_add_labels", `{"owner":"o","repo":"r","issue_number":1,"labels":[]}`, "at least one label"},
		{"empty label", "github_add_labels", `{"owner":"o","repo":"r","issue_number":1,"labels":["ok"," "]}`, "empty name"},
		{"review event outside the enum", "github_create_review", `{"owner":"o","repo":"r","pull_number":1,"event":"LGTM"}`, `field "event"`},
		{"comment review without a body", "github_create_review", `{"owner":"o","repo":"r","pull_number":1,"event":"COMMENT"}`, "body must not be empty when event is COMMENT"},
		{"path with ..", "github_get_contents", `{"owner":"o","repo":"r","path":"docs/../../x"}`, `path "docs/../../x"`},
		{"empty branch", "github_get_branch", `{"owner":"o","repo":"r","branch":""}`, "branch must not be empty"},
		{"run status outside the enum", "github_list_workflow_runs", `{"owner":"o","repo":"r","status":"green"}`, `field "status"`},
		{"empty ref", "github_get_commit", `{"owner":"o","repo":"r","ref":" "}`, "ref must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.fake.ClearRequests()
			te := f.toolError(t, userID, tt.tool, tt.input)
			if te.Code != "INVALID_ARGUMENTS" || !strings.Contains(te.Message, tt.wantMsg) {
				t.Errorf("error = %s %q, want INVALID_ARGUMENTS containing %q", te.Code, te.Message, tt.wantMsg)
			}
			if reqs := f.fake.Requests(); len(reqs) != 0 {
				t.Errorf("fake saw %d requests for invalid input: %+v", len(reqs), reqs[0])
			}
		})
	}
}
