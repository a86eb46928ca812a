package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fakeResponse is what a direct request to the fake returned.
type fakeResponse struct {
	status int
	header http.Header
	body   map[string]any
	list   []any
}

// do sends a request to the fake with GitHub's headers; edit may change them.
func do(t *testing.T, f *Fake, method, path, body string, edit func(http.Header)) fakeResponse {
	t.Helper()
	req, err := http.NewRequest(method, f.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "githubtest")
	if edit != nil {
		edit(req.Header)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := fakeResponse{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		err = json.Unmarshal(raw, &out.list)
	} else {
		err = json.Unmarshal(raw, &out.body)
	}
	if err != nil {
		t.Fatalf("%s %s answered %q: %v", method, path, raw, err)
	}
	return out
}

func TestFake_RequestChecks(t *testing.T) {
	f := NewFake(t, token)
	f.AddRepo(Repo{Owner: "octocat", Name: "hello-world"})
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		edit       func(http.Header)
		wantStatus int
		wantMsg    string
	}{
		{"ok", "GET", "/repos/octocat/hello-world", "", nil, 200, ""},
		{"no token", "GET", "/user", "", func(h http.Header) { h.Del("Authorization") }, 401, "Bad credentials"},
		{"wrong token", "GET", "/user", "", func(h http.Header) { h.Set("Authorization", "Bearer gho_other") }, 401, "Bad credentials"},
		{"token scheme instead of Bearer", "GET", "/user", "", func(h http.Header) { h.Set("Authorization", "token "+token) }, 401, "Bad credentials"},
		{"two Authorization headers", "GET", "/user", "", func(h http.Header) { h.Add("Authorization", "Bearer "+token) }, 401, "Bad credentials"},
		{"no API version", "GET", "/user", "", func(h http.Header) { h.Del("X-GitHub-Api-Version") }, 400, "API version '' is not supported."},
		{"unknown API version", "GET", "/user", "", func(h http.Header) { h.Set("X-GitHub-Api-Version", "2020-01-01") }, 400, "API version '2020-01-01'"},
		{"HTML accept", "GET", "/user", "", func(h http.Header) { h.Set("Accept", "text/html") }, 415, "Unsupported 'Accept' header"},
		{"no accept", "GET", "/user", "", func(h http.Header) { h.Del("Accept") }, 415, "Unsupported 'Accept' header"},
		{"plain JSON accept", "GET", "/user", "", func(h http.Header) { h.Set("Accept", "application/json") }, 200, ""},
		{"no user agent", "GET", "/user", "", func(h http.Header) { h.Set("User-Agent", "") }, 403, "User-Agent"},
		{"wrong method", "DELETE", "/repos/octocat/hello-world/issues", "", nil, 405, "Method Not Allowed"},
		{"unknown path", "GET", "/repos/octocat/hello-world/wiki", "", nil, 404, "Not Found"},
		{"missing repository", "GET", "/repos/octocat/nope", "", nil, 404, "Not Found"},
		{"bad JSON body", "POST", "/repos/octocat/hello-world/issues", "{", nil, 400, "Problems parsing JSON"},
		{"missing title", "POST", "/repos/octocat/hello-world/issues", `{"body":"x"}`, nil, 422, "Validation Failed"},
		{"invalid state", "GET", "/repos/octocat/hello-world/issues?state=merged", "", nil, 422, "Validation Failed"},
		{"missing search query", "GET", "/search/issues", "", nil, 422, "Validation Failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f, tt.method, tt.path, tt.body, tt.edit)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%v)", r.status, tt.wantStatus, r.body)
			}
			if tt.wantMsg == "" {
				return
			}
			if msg, _ := r.body["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q, want %q", msg, tt.wantMsg)
			}
			if r.body["documentation_url"] == nil {
				t.Errorf("error body without documentation_url: %v", r.body)
			}
		})
	}
	if got := len(f.Requests()); got != len(tests) {
		t.Errorf("recorded %d requests, want %d", got, len(tests))
	}
}

func TestFake_ValidationErrors(t *testing.T) {
	f := NewFake(t, token)
	f.AddRepo(Repo{Owner: "octocat", Name: "hello-world"})
	r := do(t, f, "POST", "/repos/octocat/hello-world/issues", `{"title":"x","assignees":["mallory"]}`, nil)
	errs, _ := r.body["errors"].([]any)
	if r.status != 422 || len(errs) != 1 {
		t.Fatalf("status %d body %v", r.status, r.body)
	}
	e := errs[0].(map[string]any)
	if e["resource"] != "Issue" || e["field"] != "assignees" || e["code"] != "invalid" || e["value"] != "mallory" {
		t.Errorf("error = %v", e)
	}
}

func TestFake_Pagination(t *testing.T) {
	f := NewFake(t, token)
	f.AddRepo(Repo{Owner: "octocat", Name: "hello-world"})
	for i := range 250 {
		f.AddIssue("octocat", "hello-world", Issue{Title: fmt.Sprint(i)})
	}
	link := func(page, perPage int, rel string) string {
		return fmt.Sprintf(`<%s/repos/octocat/hello-world/issues?page=%d&per_page=%d>; rel="%s"`, f.URL, page, perPage, rel)
	}
	tests := []struct {
		query     string
		wantCount int
		wantLink  string
	}{
		{"", 30, link(2, 30, "next") + ", " + link(9, 30, "last")},
		{"?per_page=1000", 100, link(2, 100, "next") + ", " + link(3, 100, "last")},
		{"?per_page=100&page=2", 100, link(3, 100, "next") + ", " + link(3, 100, "last") + ", " + link(1, 100, "first") + ", " + link(1, 100, "prev")},
		{"?per_page=100&page=3", 50, link(1, 100, "first") + ", " + link(2, 100, "prev")},
		{"?per_page=0&page=-1", 30, link(2, 30, "next") + ", " + link(9, 30, "last")},
		{"?page=20", 0, link(1, 30, "first") + ", " + link(9, 30, "prev")},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := do(t, f, "GET", "/repos/octocat/hello-world/issues"+tt.query, "", nil)
			if r.status != 200 || len(r.list) != tt.wantCount {
				t.Fatalf("status %d, %d items; want %d", r.status, len(r.list), tt.wantCount)
			}
			if got := r.header.Get("Link"); got != tt.wantLink {
				t.Errorf("Link = %s\nwant   %s", got, tt.wantLink)
			}
		})
	}
	one := do(t, f, "GET", "/repos/octocat/hello-world/issues?per_page=100&page=3", "", nil)
	if last := one.list[len(one.list)-1].(map[string]any); last["number"] != 1.0 {
		t.Errorf("oldest issue on the last page = %v, want number 1", last["number"])
	}
}

func TestFake_LimitRate(t *testing.T) {
	f := NewFake(t, token)
	reset := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	f.LimitRate(reset)
	r := do(t, f, "GET", "/user", "", nil)
	if r.status != 403 || r.header.Get("X-RateLimit-Remaining") != "0" ||
		r.header.Get("X-RateLimit-Reset") != fmt.Sprint(reset.Unix()) ||
		!strings.Contains(r.body["message"].(string), "API rate limit exceeded") {
		t.Errorf("limited response = %d %v %v", r.status, r.header, r.body)
	}
	f.LimitRate(time.Time{})
	r = do(t, f, "GET", "/user", "", nil)
	if r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "4999" || r.body["login"] != "octocat" {
		t.Errorf("after the limit = %d %v", r.status, r.body)
	}
}

func TestFake_MergePull(t *testing.T) {
	f := NewFake(t, token)
	f.AddRepo(Repo{Owner: "octocat", Name: "hello-world"})
	n := f.AddPull("octocat", "hello-world", Pull{Title: "p", Head: "topic"})
	path := fmt.Sprintf("/repos/octocat/hello-world/pulls/%d/merge", n)
	if r := do(t, f, "PUT", path, `{"merge_method":"fast-forward"}`, nil); r.status != 422 {
		t.Errorf("bad merge_method: status %d", r.status)
	}
	if r := do(t, f, "PUT", path, `{"sha":"abc"}`, nil); r.status != 409 {
		t.Errorf("stale sha: status %d", r.status)
	}
	if r := do(t, f, "PUT", path, "", nil); r.status != 200 || r.body["merged"] != true {
		t.Errorf("merge: %d %v", r.status, r.body)
	}
	if r := do(t, f, "PUT", path, "", nil); r.status != 405 {
		t.Errorf("second merge: status %d", r.status)
	}
	if r := do(t, f, "GET", path, "", nil); r.status != 405 || r.header.Get("Allow") != "PUT" {
		t.Errorf("GET on merge: %d %v", r.status, r.header)
	}
	if p, _ := f.Pull("octocat", "hello-world", n); !p.Merged || p.State != "closed" {
		t.Errorf("stored pull = %+v", p)
	}
}

func TestFake_CodeEndpoints(t *testing.T) {
	f := NewFake(t, token)
	f.AddRepo(Repo{Owner: "octocat", Name: "hello-world", Branches: []string{"feature/x"}})
	head := f.AddCommit("octocat", "hello-world", Commit{Files: map[string]string{"a/b.txt": "hi\n"}})
	n := f.AddPull("octocat", "hello-world", Pull{Title: "p", Head: "topic", User: "hubot"})
	f.AddIssue("octocat", "hello-world", Issue{Title: "i"})
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		check                    func(t *testing.T, r fakeResponse)
	}{
		{"escaped branch name", "GET", "/repos/octocat/hello-world/branches/feature%2Fx", "", 200,
			func(t *testing.T, r fakeResponse) {
				if r.body["name"] != "feature/x" {
					t.Errorf("branch = %v", r.body)
				}
			}},
		{"commit by short SHA", "GET", "/repos/octocat/hello-world/commits/" + head[:7], "", 200,
			func(t *testing.T, r fakeResponse) {
				if r.body["sha"] != head || r.body["stats"].(map[string]any)["additions"] != 1.0 {
					t.Errorf("commit = %v", r.body)
				}
			}},
		{"list commits of a missing ref", "GET", "/repos/octocat/hello-world/commits?sha=nope", "", 404, nil},
		{"bad since", "GET", "/repos/octocat/hello-world/commits?since=yesterday", "", 422, nil},
		{"contents at a missing ref", "GET", "/repos/octocat/hello-world/contents/a/b.txt?ref=nope", "", 404, nil},
		{"contents with base64 lines", "GET", "/repos/octocat/hello-world/contents/a/b.txt", "", 200,
			func(t *testing.T, r fakeResponse) {
				if r.body["encoding"] != "base64" || r.body["content"] != "aGkK\n" || r.body["sha"] != gitBlobSHA("hi\n") {
					t.Errorf("contents = %v", r.body)
				}
			}},
		{"labels as a bare array", "POST", "/repos/octocat/hello-world/issues/2/labels", `["new"]`, 200,
			func(t *testing.T, r fakeResponse) {
				if len(r.list) != 1 || r.list[0].(map[string]any)["name"] != "new" {
					t.Errorf("labels = %v", r.list)
				}
			}},
		{"labels without the labels key", "POST", "/repos/octocat/hello-world/issues/2/labels", `{}`, 422, nil},
		{"GET on issue labels", "GET", "/repos/octocat/hello-world/issues/2/labels", "", 405, nil},
		{"review with an unknown event", "POST", fmt.Sprintf("/repos/octocat/hello-world/pulls/%d/reviews", n), `{"event":"LGTM"}`, 422,
			func(t *testing.T, r fakeResponse) {
				if errs, _ := r.body["errors"].([]any); len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "PullRequestReviewEvent") {
					t.Errorf("errors = %v", r.body)
				}
			}},
		{"request changes without a body", "POST", fmt.Sprintf("/repos/octocat/hello-world/pulls/%d/reviews", n), `{"event":"REQUEST_CHANGES"}`, 422, nil},
		{"review of an unknown commit", "POST", fmt.Sprintf("/repos/octocat/hello-world/pulls/%d/reviews", n), `{"event":"APPROVE","commit_id":"abc"}`, 422, nil},
		{"approve someone else's pull request", "POST", fmt.Sprintf("/repos/octocat/hello-world/pulls/%d/reviews", n), `{"event":"APPROVE"}`, 200,
			func(t *testing.T, r fakeResponse) {
				if r.body["state"] != "APPROVED" || r.body["user"].(map[string]any)["login"] != "octocat" {
					t.Errorf("review = %v", r.body)
				}
			}},
		{"reviews of an issue", "GET", "/repos/octocat/hello-world/pulls/2/reviews", "", 404, nil},
		{"runs with a bad status", "GET", "/repos/octocat/hello-world/actions/runs?status=green", "", 422, nil},
		{"no latest release", "GET", "/repos/octocat/hello-world/releases/latest", "", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f, tt.method, tt.path, tt.body, nil)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %v", r.status, tt.wantStatus, r.body)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}
