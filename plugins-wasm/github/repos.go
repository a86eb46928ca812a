package main

import (
	"net/url"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// readOptions are the options of a tool that only reads from GitHub.
func readOptions(title string) []pdk.ToolOption {
	return []pdk.ToolOption{pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(), pdk.Title(title)}
}

var getAuthenticatedUser = pdk.Tool("github_get_authenticated_user",
	"Returns the GitHub account the connection belongs to: login, name, profile URL and counts.",
	func(_ pdk.Context, _ struct{}) (User, error) {
		var u User
		_, err := send("GET", "/user", nil, nil, &u)
		return u, err
	}, readOptions("Get the connected GitHub user")...)

// ListReposInput is the input of github_list_repos.
type ListReposInput struct {
	Type      string `json:"type,omitempty" jsonschema:"which repositories: all, owner, public, private or member" enum:"all,owner,public,private,member" default:"all"`
	Sort      string `json:"sort,omitempty" jsonschema:"sort key" enum:"created,updated,pushed,full_name" default:"full_name"`
	Direction string `json:"direction,omitempty" jsonschema:"sort direction; GitHub defaults to asc for full_name and desc otherwise" enum:"asc,desc"`
	Paging
}

// RepoList is one page of repositories.
type RepoList struct {
	Repos    []Repo `json:"repos"`
	NextPage int    `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listRepos = pdk.Tool("github_list_repos",
	"Lists repositories the connected user can access (GET /user/repos), one page at a time.",
	func(_ pdk.Context, in ListReposInput) (RepoList, error) {
		q := url.Values{"type": {in.Type}, "sort": {in.Sort}}
		if in.Direction != "" {
			q.Set("direction", in.Direction)
		}
		in.Paging.set(q)
		var repos []ghRepo
		resp, err := send("GET", "/user/repos", q, nil, &repos)
		if err != nil {
			return RepoList{}, err
		}
		return RepoList{Repos: reposOut(repos), NextPage: nextPage(resp.Header)}, nil
	}, readOptions("List my repositories")...)

var getRepo = pdk.Tool("github_get_repo",
	"Returns one repository by owner and name.",
	func(_ pdk.Context, in RepoRef) (Repo, error) {
		path, err := in.path()
		if err != nil {
			return Repo{}, err
		}
		var r ghRepo
		if _, err := send("GET", path, nil, nil, &r); err != nil {
			return Repo{}, err
		}
		return r.out(), nil
	}, readOptions("Get a repository")...)
