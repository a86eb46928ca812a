package main

import (
	"net/url"

	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// Workflow is a GitHub Actions workflow.
type Workflow struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path" jsonschema:"the workflow file, e.g. .github/workflows/ci.yml"`
	State     string `json:"state" jsonschema:"active, deleted, disabled_fork, disabled_inactivity or disabled_manually"`
	HTMLURL   string `json:"html_url"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// ListWorkflowsInput is the input of github_list_workflows.
type ListWorkflowsInput struct {
	RepoRef
	Paging
}

// WorkflowList is one page of workflows.
type WorkflowList struct {
	TotalCount int        `json:"total_count" jsonschema:"workflows in the repository, over every page"`
	Workflows  []Workflow `json:"workflows"`
	NextPage   int        `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listWorkflows = pdk.Tool("github_list_workflows",
	"Lists a repository's GitHub Actions workflows, one page at a time.",
	func(_ pdk.Context, in ListWorkflowsInput) (WorkflowList, error) {
		path, err := in.path("actions", "workflows")
		if err != nil {
			return WorkflowList{}, err
		}
		q := url.Values{}
		in.Paging.set(q)
		var page struct {
			TotalCount int        `json:"total_count"`
			Workflows  []Workflow `json:"workflows"`
		}
		resp, err := send("GET", path, q, nil, &page)
		if err != nil {
			return WorkflowList{}, err
		}
		if page.Workflows == nil {
			page.Workflows = []Workflow{}
		}
		return WorkflowList{TotalCount: page.TotalCount, Workflows: page.Workflows, NextPage: nextPage(resp.Header)}, nil
	}, readOptions("List workflows")...)

// WorkflowRun is one run of a workflow.
type WorkflowRun struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	DisplayTitle string `json:"display_title,omitempty"`
	WorkflowID   int64  `json:"workflow_id"`
	RunNumber    int    `json:"run_number"`
	RunAttempt   int    `json:"run_attempt"`
	Event        string `json:"event" jsonschema:"what started the run, e.g. push or pull_request"`
	Status       string `json:"status" jsonschema:"queued, in_progress, completed, waiting, requested or pending"`
	Conclusion   string `json:"conclusion,omitempty" jsonschema:"for a completed run: success, failure, cancelled, skipped, timed_out, neutral, stale or action_required"`
	HeadBranch   string `json:"head_branch"`
	HeadSHA      string `json:"head_sha"`
	HTMLURL      string `json:"html_url"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// ListWorkflowRunsInput is the input of github_list_workflow_runs.
type ListWorkflowRunsInput struct {
	RepoRef
	Branch string `json:"branch,omitempty" jsonschema:"only runs for pushes to or pull requests from this branch"`
	Status string `json:"status,omitempty" jsonschema:"only runs with this status or conclusion" enum:"completed,action_required,cancelled,failure,neutral,skipped,stale,success,timed_out,in_progress,queued,requested,waiting,pending"`
	Paging
}

// WorkflowRunList is one page of workflow runs, newest first.
type WorkflowRunList struct {
	TotalCount int           `json:"total_count" jsonschema:"runs that match, over every page"`
	Runs       []WorkflowRun `json:"runs"`
	NextPage   int           `json:"next_page" jsonschema:"page to ask for next; 0 when this is the last page"`
}

var listWorkflowRuns = pdk.Tool("github_list_workflow_runs",
	"Lists a repository's GitHub Actions workflow runs, newest first, one page at a time; can narrow to a branch or a status.",
	func(_ pdk.Context, in ListWorkflowRunsInput) (WorkflowRunList, error) {
		path, err := in.path("actions", "runs")
		if err != nil {
			return WorkflowRunList{}, err
		}
		q := url.Values{}
		if in.Branch != "" {
			q.Set("branch", in.Branch)
		}
		if in.Status != "" {
			q.Set("status", in.Status)
		}
		in.Paging.set(q)
		var page struct {
			TotalCount int           `json:"total_count"`
			Runs       []WorkflowRun `json:"workflow_runs"`
		}
		resp, err := send("GET", path, q, nil, &page)
		if err != nil {
			return WorkflowRunList{}, err
		}
		if page.Runs == nil {
			page.Runs = []WorkflowRun{}
		}
		return WorkflowRunList{TotalCount: page.TotalCount, Runs: page.Runs, NextPage: nextPage(resp.Header)}, nil
	}, readOptions("List workflow runs")...)
