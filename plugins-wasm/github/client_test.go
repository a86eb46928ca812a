//go:build !wasip1

package main

import (
	"encoding/json"
	"strings"
	"testing"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

func TestParseLinks(t *testing.T) {
	tests := []struct {
		header   string
		wantNext int
	}{
		{`<https://api.github.com/user/repos?page=3&per_page=100>; rel="next", <https://api.github.com/user/repos?page=50&per_page=100>; rel="last"`, 3},
		{`<https://api.github.com/user/repos?page=1>; rel="first", <https://api.github.com/user/repos?page=1>; rel="prev"`, 0},
		{`<https://api.github.com/search/issues?q=a%2Cb%3Ec&page=2>; rel="next"`, 2},
		{`<https://x/?page=7>;rel=next`, 7},
		{`<https://x/?page=4>; rel="prev next"`, 4},
		{`<https://x/?page=0>; rel="next"`, 0},
		{`<https://x/?page=abc>; rel="next"`, 0},
		{`<https://x/?page=2`, 0},
		{``, 0},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := nextPage(pdk.Header{"Link": {tt.header}}); got != tt.wantNext {
				t.Errorf("nextPage = %d, want %d", got, tt.wantNext)
			}
		})
	}
}

func TestAPIError(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   pdk.Header
		body     string
		wantCode string
		wantMsg  string
	}{
		{"401", 401, nil, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`,
			"UNAUTHORIZED", "GitHub GET /user: Bad credentials"},
		{"403 primary rate limit", 403, pdk.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1700000000"}},
			`{"message":"API rate limit exceeded"}`, "RATE_LIMITED", "resets at 2023-11-14T22:13:20Z"},
		{"403 secondary rate limit", 403, pdk.Header{"Retry-After": {"60"}},
			`{"message":"You have exceeded a secondary rate limit"}`, "RATE_LIMITED", "retry after 60 seconds"},
		{"429", 429, nil, `{"message":"Too many requests"}`, "RATE_LIMITED", "Too many requests"},
		{"403", 403, pdk.Header{"X-Ratelimit-Remaining": {"12"}}, `{"message":"Resource not accessible by integration"}`,
			"FORBIDDEN", "Resource not accessible"},
		{"404", 404, nil, `{"message":"Not Found"}`, "NOT_FOUND", "Not Found"},
		{"410", 410, nil, `{"message":"Issues are disabled for this repo"}`, "NOT_FOUND", "disabled"},
		{"409", 409, nil, `{"message":"Git Repository is empty."}`, "CONFLICT", "empty"},
		{"422 field errors", 422, nil,
			`{"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"},{"resource":"Label","code":"custom","message":"name is too long"}]}`,
			"VALIDATION_FAILED", "Validation Failed: title: missing_field; name is too long"},
		{"422 string errors", 422, nil,
			`{"message":"Unprocessable Entity","errors":["Can not approve your own pull request"]}`,
			"VALIDATION_FAILED", "Unprocessable Entity: Can not approve your own pull request"},
		{"400", 400, nil, `{"message":"Problems parsing JSON"}`, "INVALID_ARGUMENTS", "Problems parsing JSON"},
		{"502 with HTML", 502, nil, `<html>Bad gateway</html>`, "UPSTREAM_ERROR", "status 502: <html>Bad gateway</html>"},
		{"503 empty", 503, nil, ``, "UPSTREAM_ERROR", "HTTP status 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = pdk.Header{}
			}
			e := apiError("GET", "/user", &pdk.Response{Status: tt.status, Header: h, Body: []byte(tt.body)})
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("apiError = %s %q, want %s containing %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
			}
			d, ok := e.Details.(errorDetails)
			if !ok || d.Status != tt.status {
				t.Errorf("details = %#v", e.Details)
			}
		})
	}
}

func TestRepoRef_path(t *testing.T) {
	tests := []struct {
		ref     RepoRef
		rest    []string
		want    string
		wantErr string
	}{
		{RepoRef{"octocat", "hello-world"}, nil, "/repos/octocat/hello-world", ""},
		{RepoRef{"Octo-Org", "my.repo_1"}, []string{"issues", "7"}, "/repos/Octo-Org/my.repo_1/issues/7", ""},
		{RepoRef{"a", "b"}, []string{"pulls", "1", "merge"}, "/repos/a/b/pulls/1/merge", ""},
		{RepoRef{"", "r"}, nil, "", `owner ""`},
		{RepoRef{"a b", "r"}, nil, "", `owner "a b"`},
		{RepoRef{"a%2F..", "r"}, nil, "", `owner "a%2F.."`},
		{RepoRef{"o", "."}, nil, "", `repo "."`},
		{RepoRef{"o", "a/b"}, nil, "", `repo "a/b"`},
		{RepoRef{"o", strings.Repeat("r", 101)}, nil, "", "not a GitHub repository name"},
	}
	for _, tt := range tests {
		t.Run(tt.ref.Owner+"/"+tt.ref.Repo, func(t *testing.T) {
			got, err := tt.ref.path(tt.rest...)
			if tt.wantErr != "" {
				pe, ok := err.(*pdk.Error)
				if !ok || pe.Code != pdk.CodeInvalidArguments || !strings.Contains(pe.Message, tt.wantErr) {
					t.Errorf("err = %v, want INVALID_ARGUMENTS containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("path = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRepoFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/repos/octo/hello": "octo/hello",
		"http://127.0.0.1:1/repos/a/b.c":          "a/b.c",
		"https://api.github.com/users/octo":       "",
		"":                                        "",
	} {
		if got := repoFromURL(in); got != want {
			t.Errorf("repoFromURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSend checks the requests the plugin hands to the host: GitHub's
// headers, no Authorization, URLs from base_url, and JSON bodies.
func TestSend(t *testing.T) {
	var seen []*pdk.Request
	host := &pdk.TestHost{
		Settings: map[string]string{"base_url": "https://ghe.example.com/api/v3/"},
		HTTP: func(req *pdk.Request) (*pdk.Response, error) {
			seen = append(seen, req)
			return &pdk.Response{Status: 201, Header: pdk.Header{}, Body: []byte(`{"number":9,"title":"T","user":{"login":"me"},"labels":[{"name":"bug"}]}`), URL: req.URL}, nil
		},
	}
	status, out := host.Call(createIssue, []byte(`{"owner":"o","repo":"r","title":"T","labels":["bug"]}`))
	if status != 0 {
		t.Fatalf("status %d, output %s", status, out)
	}
	var issue Issue
	if err := json.Unmarshal(out, &issue); err != nil || issue.Number != 9 || issue.User != "me" || issue.Labels[0] != "bug" {
		t.Errorf("output %s: %v", out, err)
	}
	if len(seen) != 1 {
		t.Fatalf("%d requests", len(seen))
	}
	r := seen[0]
	if r.Method != "POST" || r.URL != "https://ghe.example.com/api/v3/repos/o/r/issues" || string(r.Body) != `{"title":"T","labels":["bug"]}` {
		t.Errorf("request = %s %s %s", r.Method, r.URL, r.Body)
	}
	for name, want := range map[string]string{
		"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
		"User-Agent": "workbench-github-plugin/" + version, "Content-Type": "application/json", "Authorization": "",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestManifest checks the plugin's registration as the PDK renders it.
func TestManifest(t *testing.T) {
	raw, err := pdk.ManifestJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name  string
		Tools []struct {
			Slug        string
			Annotations map[string]bool
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "github" || len(m.Tools) != len(tools) || len(m.Tools) < 12 {
		t.Fatalf("manifest has %d tools for %q", len(m.Tools), m.Name)
	}
	for _, tool := range m.Tools {
		a := tool.Annotations
		readOnly := strings.Contains(tool.Slug, "_get_") || strings.Contains(tool.Slug, "_list_") || strings.Contains(tool.Slug, "_search_")
		if a["readOnly"] != readOnly || a["destructive"] != (tool.Slug == "github_merge_pull") || !a["openWorld"] {
			t.Errorf("%s annotations = %v", tool.Slug, a)
		}
	}
}

// FuzzParseLinks feeds arbitrary Link headers (upstream bytes) to the
// parser: it must not panic, and every link it returns must come from
// between '<' and '>'.
func FuzzParseLinks(f *testing.F) {
	for _, seed := range []string{
		`<https://api.github.com/user/repos?page=2>; rel="next", <https://api.github.com/user/repos?page=5>; rel="last"`,
		`<a>; rel=next`, `<<>>;;rel="="`, `<x`, `>`, `<>; rel`, `;rel="next",<y>`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for _, l := range parseLinks(header) {
			if !strings.Contains(header, "<"+l.url+">") {
				t.Fatalf("link %q is not in %q", l.url, header)
			}
		}
		if n := nextPage(pdk.Header{"Link": {header}}); n < 0 {
			t.Fatalf("nextPage = %d", n)
		}
	})
}
