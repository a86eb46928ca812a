package main

import (
	"net/url"
	"strconv"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// ListPullsInput is the input of github_list_pulls.
type ListPullsInput struct {
	RepoRef
	State     string `json:"state,omitempty" jsonschema:"open, closed or all" enum:"open,closed,all" default:"open"`
	Head      string `json:"head,omitempty" jsonschema:"only pull requests from this branch, as user:ref-name or organization:ref-name"`
	Base      string `json:"base,omitempty" jsonschema:"only pull requests into this branch"`
	Sort      string `json:"sort,omitempty" jsonschema:"sort key" enum:"created,updated,popularity,long-running" default:"created"`
	Direction string `json:"direction,omitempty" jsonschema:"sort direction; GitHub defaults to desc when sort is created or left out" enum:"asc,desc"`
	Paging
}

// PullList is one page of pull requests.
type PullList struct {
	Pulls    []Pull `json:"pulls" jsonschema:"pull requests without their bodies"`
	NextPage int    `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listPulls = pdk.Tool("github_list_pulls",
	"Lists a repository's pull requests, one page at a time.",
	func(_ pdk.Context, in ListPullsInput) (PullList, error) {
		path, err := in.path("pulls")
		if err != nil {
			return PullList{}, err
		}
		q := url.Values{"state": {in.State}, "sort": {in.Sort}}
		for key, v := range map[string]string{"head": in.Head, "base": in.Base, "direction": in.Direction} {
			if v != "" {
				q.Set(key, v)
			}
		}
		in.Paging.set(q)
		var pulls []ghPull
		resp, err := send("GET", path, q, nil, &pulls)
		if err != nil {
			return PullList{}, err
		}
		out := PullList{Pulls: make([]Pull, 0, len(pulls)), NextPage: nextPage(resp.Header)}
		for _, p := range pulls {
			o := p.out()
			o.Body = ""
			out.Pulls = append(out.Pulls, o)
		}
		return out, nil
	}, readOptions("List pull requests")...)

// PullRef names one pull request.
type PullRef struct {
	RepoRef
	PullNumber int `json:"pull_number" jsonschema:"the pull request's number in the repository" minimum:"1"`
}

func (r PullRef) path(rest ...string) (string, error) {
	return r.RepoRef.path(append([]string{"pulls", strconv.Itoa(r.PullNumber)}, rest...)...)
}

var getPull = pdk.Tool("github_get_pull",
	"Returns one pull request with its body, merge state and change counts.",
	func(_ pdk.Context, in PullRef) (Pull, error) {
		path, err := in.path()
		if err != nil {
			return Pull{}, err
		}
		var p ghPull
		if _, err := send("GET", path, nil, nil, &p); err != nil {
			return Pull{}, err
		}
		return p.out(), nil
	}, readOptions("Get a pull request")...)

// CreatePullInput is the input of github_create_pull.
type CreatePullInput struct {
	RepoRef
	Title               string `json:"title" jsonschema:"the pull request's title"`
	Head                string `json:"head" jsonschema:"branch with the changes; for a fork, owner:branch"`
	Base                string `json:"base" jsonschema:"branch to merge into, e.g. main"`
	Body                string `json:"body,omitempty" jsonschema:"description, in GitHub Markdown"`
	Draft               bool   `json:"draft,omitempty" jsonschema:"open it as a draft"`
	MaintainerCanModify *bool  `json:"maintainer_can_modify,omitempty" jsonschema:"let maintainers of the base repository push to the head branch"`
}

// createPullBody is GitHub's request body for creating a pull request.
type createPullBody struct {
	Title               string `json:"title"`
	Head                string `json:"head"`
	Base                string `json:"base"`
	Body                string `json:"body,omitempty"`
	Draft               bool   `json:"draft,omitempty"`
	MaintainerCanModify *bool  `json:"maintainer_can_modify,omitempty"`
}

var createPull = pdk.Tool("github_create_pull",
	"Opens a pull request from head into base.",
	func(_ pdk.Context, in CreatePullInput) (Pull, error) {
		path, err := in.path("pulls")
		if err != nil {
			return Pull{}, err
		}
		for field, v := range map[string]string{"title": in.Title, "head": in.Head, "base": in.Base} {
			if strings.TrimSpace(v) == "" {
				return Pull{}, pdk.InvalidArguments("%s must not be empty", field).WithDetails(map[string]string{"field": field})
			}
		}
		body := createPullBody{Title: in.Title, Head: in.Head, Base: in.Base, Body: in.Body,
			Draft: in.Draft, MaintainerCanModify: in.MaintainerCanModify}
		var p ghPull
		if _, err := send("POST", path, nil, body, &p); err != nil {
			return Pull{}, err
		}
		return p.out(), nil
	}, pdk.OpenWorld(), pdk.Title("Create a pull request"))

// MergePullInput is the input of github_merge_pull.
type MergePullInput struct {
	PullRef
	MergeMethod   string `json:"merge_method,omitempty" jsonschema:"how to merge" enum:"merge,squash,rebase" default:"merge"`
	CommitTitle   string `json:"commit_title,omitempty" jsonschema:"title of the merge commit"`
	CommitMessage string `json:"commit_message,omitempty" jsonschema:"extra detail for the merge commit"`
	SHA           string `json:"sha,omitempty" jsonschema:"merge only if the head is still at this commit"`
}

// mergeBody is GitHub's request body for merging a pull request.
type mergeBody struct {
	MergeMethod   string `json:"merge_method"`
	CommitTitle   string `json:"commit_title,omitempty"`
	CommitMessage string `json:"commit_message,omitempty"`
	SHA           string `json:"sha,omitempty"`
}

// MergeResult is GitHub's answer to a merge.
type MergeResult struct {
	SHA     string `json:"sha" jsonschema:"the merge commit"`
	Merged  bool   `json:"merged"`
	Message string `json:"message"`
}

var mergePull = pdk.Tool("github_merge_pull",
	"Merges a pull request into its base branch. A pull request that cannot be merged is a CONFLICT error.",
	func(_ pdk.Context, in MergePullInput) (MergeResult, error) {
		path, err := in.path("merge")
		if err != nil {
			return MergeResult{}, err
		}
		body := mergeBody{MergeMethod: in.MergeMethod, CommitTitle: in.CommitTitle, CommitMessage: in.CommitMessage, SHA: in.SHA}
		var r MergeResult
		if _, err := send("PUT", path, nil, body, &r); err != nil {
			return MergeResult{}, err
		}
		return r, nil
	}, pdk.Destructive(), pdk.OpenWorld(), pdk.Title("Merge a pull request"))
