package main

import (
	"net/url"
	"strconv"
	"strings"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// ListIssuesInput is the input of github_list_issues.
type ListIssuesInput struct {
	RepoRef
	State     string   `json:"state,omitempty" jsonschema:"open, closed or all" enum:"open,closed,all" default:"open"`
	Labels    []string `json:"labels,omitempty" jsonschema:"only issues that have all of these labels"`
	Assignee  string   `json:"assignee,omitempty" jsonschema:"a login, none for unassigned, or * for any"`
	Creator   string   `json:"creator,omitempty" jsonschema:"login of the author"`
	Sort      string   `json:"sort,omitempty" jsonschema:"sort key" enum:"created,updated,comments" default:"created"`
	Direction string   `json:"direction,omitempty" jsonschema:"sort direction" enum:"asc,desc" default:"desc"`
	Since     string   `json:"since,omitempty" jsonschema:"only issues updated at or after this time, ISO 8601 (2024-01-31T00:00:00Z)"`
	Paging
}

// IssueList is one page of issues.
type IssueList struct {
	Issues   []Issue `json:"issues" jsonschema:"issues without their bodies; GitHub includes pull requests here, marked is_pull_request"`
	NextPage int     `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listIssues = pdk.Tool("github_list_issues",
	"Lists a repository's issues, one page at a time. GitHub returns pull requests in this list too; they are marked is_pull_request.",
	func(_ pdk.Context, in ListIssuesInput) (IssueList, error) {
		path, err := in.path("issues")
		if err != nil {
			return IssueList{}, err
		}
		q := url.Values{"state": {in.State}, "sort": {in.Sort}, "direction": {in.Direction}}
		if len(in.Labels) > 0 {
			q.Set("labels", strings.Join(in.Labels, ","))
		}
		for key, v := range map[string]string{"assignee": in.Assignee, "creator": in.Creator, "since": in.Since} {
			if v != "" {
				q.Set(key, v)
			}
		}
		in.Paging.set(q)
		var issues []ghIssue
		resp, err := send("GET", path, q, nil, &issues)
		if err != nil {
			return IssueList{}, err
		}
		return IssueList{Issues: issuesOut(issues), NextPage: nextPage(resp.Header)}, nil
	}, readOptions("List issues")...)

// IssueRef names one issue.
type IssueRef struct {
	RepoRef
	IssueNumber int `json:"issue_number" jsonschema:"the issue's number in the repository" minimum:"1"`
}

func (r IssueRef) path(rest ...string) (string, error) {
	return r.RepoRef.path(append([]string{"issues", strconv.Itoa(r.IssueNumber)}, rest...)...)
}

var getIssue = pdk.Tool("github_get_issue",
	"Returns one issue with its body. Works for pull request numbers too (is_pull_request is then true).",
	func(_ pdk.Context, in IssueRef) (Issue, error) {
		path, err := in.path()
		if err != nil {
			return Issue{}, err
		}
		var i ghIssue
		if _, err := send("GET", path, nil, nil, &i); err != nil {
			return Issue{}, err
		}
		return i.out(), nil
	}, readOptions("Get an issue")...)

// CreateIssueInput is the input of github_create_issue.
type CreateIssueInput struct {
	RepoRef
	Title     string   `json:"title" jsonschema:"the issue's title"`
	Body      string   `json:"body,omitempty" jsonschema:"the issue's text, in GitHub Markdown"`
	Labels    []string `json:"labels,omitempty" jsonschema:"label names; only people with push access can set them"`
	Assignees []string `json:"assignees,omitempty" jsonschema:"logins to assign; only people with push access can set them"`
}

// createIssueBody is GitHub's request body for creating an issue.
type createIssueBody struct {
	Title     string   `json:"title"`
	Body      string   `json:"body,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Assignees []string `json:"assignees,omitempty"`
}

var createIssue = pdk.Tool("github_create_issue",
	"Opens a new issue in a repository.",
	func(_ pdk.Context, in CreateIssueInput) (Issue, error) {
		path, err := in.path("issues")
		if err != nil {
			return Issue{}, err
		}
		if strings.TrimSpace(in.Title) == "" {
			return Issue{}, pdk.InvalidArguments("title must not be empty")
		}
		var i ghIssue
		body := createIssueBody{Title: in.Title, Body: in.Body, Labels: in.Labels, Assignees: in.Assignees}
		if _, err := send("POST", path, nil, body, &i); err != nil {
			return Issue{}, err
		}
		return i.out(), nil
	}, pdk.OpenWorld(), pdk.Title("Create an issue"))

// UpdateIssueInput is the input of github_update_issue. Only the fields
// given are changed.
type UpdateIssueInput struct {
	IssueRef
	Title       *string   `json:"title,omitempty" jsonschema:"new title"`
	Body        *string   `json:"body,omitempty" jsonschema:"new text, replacing the old one"`
	State       string    `json:"state,omitempty" jsonschema:"open or closed" enum:"open,closed"`
	StateReason string    `json:"state_reason,omitempty" jsonschema:"why the state changed" enum:"completed,not_planned,reopened"`
	Labels      *[]string `json:"labels,omitempty" jsonschema:"replaces every label; an empty list removes them all"`
	Assignees   *[]string `json:"assignees,omitempty" jsonschema:"replaces every assignee; an empty list removes them all"`
}

// updateIssueBody is GitHub's request body for updating an issue.
type updateIssueBody struct {
	Title       *string   `json:"title,omitempty"`
	Body        *string   `json:"body,omitempty"`
	State       string    `json:"state,omitempty"`
	StateReason string    `json:"state_reason,omitempty"`
	Labels      *[]string `json:"labels,omitempty"`
	Assignees   *[]string `json:"assignees,omitempty"`
}

var updateIssue = pdk.Tool("github_update_issue",
	"Changes an issue: title, body, state (close or reopen), labels or assignees. Fields left out stay as they are.",
	func(_ pdk.Context, in UpdateIssueInput) (Issue, error) {
		path, err := in.path()
		if err != nil {
			return Issue{}, err
		}
		body := updateIssueBody{Title: in.Title, Body: in.Body, State: in.State, StateReason: in.StateReason,
			Labels: in.Labels, Assignees: in.Assignees}
		if body == (updateIssueBody{}) {
			return Issue{}, pdk.InvalidArguments("nothing to change: give at least one of title, body, state, state_reason, labels, assignees")
		}
		var i ghIssue
		if _, err := send("PATCH", path, nil, body, &i); err != nil {
			return Issue{}, err
		}
		return i.out(), nil
	}, pdk.OpenWorld(), pdk.Idempotent(), pdk.Title("Update an issue"))

// ListCommentsInput is the input of github_list_issue_comments.
type ListCommentsInput struct {
	IssueRef
	Since string `json:"since,omitempty" jsonschema:"only comments updated at or after this time, ISO 8601"`
	Paging
}

// CommentList is one page of comments.
type CommentList struct {
	Comments []Comment `json:"comments"`
	NextPage int       `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listIssueComments = pdk.Tool("github_list_issue_comments",
	"Lists the comments of an issue or pull request, oldest first, one page at a time.",
	func(_ pdk.Context, in ListCommentsInput) (CommentList, error) {
		path, err := in.path("comments")
		if err != nil {
			return CommentList{}, err
		}
		q := url.Values{}
		if in.Since != "" {
			q.Set("since", in.Since)
		}
		in.Paging.set(q)
		var comments []ghComment
		resp, err := send("GET", path, q, nil, &comments)
		if err != nil {
			return CommentList{}, err
		}
		out := CommentList{Comments: make([]Comment, 0, len(comments)), NextPage: nextPage(resp.Header)}
		for _, c := range comments {
			out.Comments = append(out.Comments, c.out())
		}
		return out, nil
	}, readOptions("List issue comments")...)

// CreateCommentInput is the input of github_create_issue_comment.
type CreateCommentInput struct {
	IssueRef
	Body string `json:"body" jsonschema:"the comment, in GitHub Markdown"`
}

var createIssueComment = pdk.Tool("github_create_issue_comment",
	"Adds a comment to an issue or pull request.",
	func(_ pdk.Context, in CreateCommentInput) (Comment, error) {
		path, err := in.path("comments")
		if err != nil {
			return Comment{}, err
		}
		if strings.TrimSpace(in.Body) == "" {
			return Comment{}, pdk.InvalidArguments("body must not be empty")
		}
		var c ghComment
		if _, err := send("POST", path, nil, map[string]string{"body": in.Body}, &c); err != nil {
			return Comment{}, err
		}
		return c.out(), nil
	}, pdk.OpenWorld(), pdk.Title("Comment on an issue"))
