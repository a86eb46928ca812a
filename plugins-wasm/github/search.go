package main

import (
	"net/url"
	"strings"
	"unicode/utf8"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// maxQueryLength caps a search query before it is sent. GitHub's own limit
// is 256 characters not counting operators and qualifiers; it answers longer
// queries with 422, which becomes VALIDATION_FAILED.
const maxQueryLength = 1024

// searchQuery validates q and returns the query parameters shared by the
// search tools.
func searchQuery(q, sort, order string, page Paging) (url.Values, error) {
	if strings.TrimSpace(q) == "" {
		return nil, pdk.InvalidArguments("q must not be empty").WithDetails(map[string]string{"field": "q"})
	}
	if n := utf8.RuneCountInString(q); n > maxQueryLength {
		return nil, pdk.InvalidArguments("q has %d characters; at most %d are accepted", n, maxQueryLength).
			WithDetails(map[string]string{"field": "q"})
	}
	v := url.Values{"q": {q}}
	if sort != "" {
		v.Set("sort", sort)
		v.Set("order", order)
	}
	page.set(v)
	return v, nil
}

// SearchIssuesInput is the input of github_search_issues.
type SearchIssuesInput struct {
	Q     string `json:"q" jsonschema:"GitHub search query with qualifiers, e.g. repo:octo/hello is:issue is:open label:bug"`
	Sort  string `json:"sort,omitempty" jsonschema:"sort key; best match when left out" enum:"comments,reactions,interactions,created,updated"`
	Order string `json:"order,omitempty" jsonschema:"sort order, used with sort" enum:"asc,desc" default:"desc"`
	Paging
}

// IssueSearch is one page of issue search results.
type IssueSearch struct {
	TotalCount        int     `json:"total_count"`
	IncompleteResults bool    `json:"incomplete_results" jsonschema:"true when GitHub timed out and the results may be partial"`
	Items             []Issue `json:"items" jsonschema:"issues and pull requests (is_pull_request) without their bodies"`
	NextPage          int     `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var searchIssues = pdk.Tool("github_search_issues",
	"Searches issues and pull requests across GitHub with GitHub's search syntax (GET /search/issues).",
	func(_ pdk.Context, in SearchIssuesInput) (IssueSearch, error) {
		q, err := searchQuery(in.Q, in.Sort, in.Order, in.Paging)
		if err != nil {
			return IssueSearch{}, err
		}
		var res struct {
			TotalCount        int       `json:"total_count"`
			IncompleteResults bool      `json:"incomplete_results"`
			Items             []ghIssue `json:"items"`
		}
		resp, err := send("GET", "/search/issues", q, nil, &res)
		if err != nil {
			return IssueSearch{}, err
		}
		return IssueSearch{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults,
			Items: issuesOut(res.Items), NextPage: nextPage(resp.Header)}, nil
	}, readOptions("Search issues and pull requests")...)

// SearchReposInput is the input of github_search_repos.
type SearchReposInput struct {
	Q     string `json:"q" jsonschema:"GitHub search query with qualifiers, e.g. workbench language:go stars:>10"`
	Sort  string `json:"sort,omitempty" jsonschema:"sort key; best match when left out" enum:"stars,forks,help-wanted-issues,updated"`
	Order string `json:"order,omitempty" jsonschema:"sort order, used with sort" enum:"asc,desc" default:"desc"`
	Paging
}

// RepoSearch is one page of repository search results.
type RepoSearch struct {
	TotalCount        int    `json:"total_count"`
	IncompleteResults bool   `json:"incomplete_results" jsonschema:"true when GitHub timed out and the results may be partial"`
	Items             []Repo `json:"items"`
	NextPage          int    `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var searchRepos = pdk.Tool("github_search_repos",
	"Searches repositories across GitHub with GitHub's search syntax (GET /search/repositories).",
	func(_ pdk.Context, in SearchReposInput) (RepoSearch, error) {
		q, err := searchQuery(in.Q, in.Sort, in.Order, in.Paging)
		if err != nil {
			return RepoSearch{}, err
		}
		var res struct {
			TotalCount        int      `json:"total_count"`
			IncompleteResults bool     `json:"incomplete_results"`
			Items             []ghRepo `json:"items"`
		}
		resp, err := send("GET", "/search/repositories", q, nil, &res)
		if err != nil {
			return RepoSearch{}, err
		}
		return RepoSearch{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults,
			Items: reposOut(res.Items), NextPage: nextPage(resp.Header)}, nil
	}, readOptions("Search repositories")...)
