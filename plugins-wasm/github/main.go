package main

import (
	pdk "github.com/workbench-dev/workbench/pdk/go"
)

// tools are every tool of the plugin, in manifest order.
var tools = []*pdk.ToolDef{
	getAuthenticatedUser, listRepos, getRepo,
	listIssues, getIssue, createIssue, updateIssue, listIssueComments, createIssueComment,
	listPulls, getPull, createPull, mergePull,
	searchIssues, searchRepos,
	listBranches, getBranch, listCommits, getCommit, getContents,
	listLabels, addLabels, listReviews, createReview,
	listReleases, getLatestRelease, listWorkflows, listWorkflowRuns,
}

func init() {
	pdk.Register(pdk.Plugin{
		Name:         "github",
		Version:      version,
		Title:        "GitHub",
		Description:  "Repositories, code, issues, pull requests, reviews, releases, Actions runs and search on GitHub.",
		Logo:         "https://github.githubassets.com/favicons/favicon.svg",
		Categories:   []string{"developer-tools"},
		BaseURL:      "https://api.github.com",
		Hosts:        []string{"api.github.com"},
		ProxyBaseURL: "https://api.github.com",
		Auth: pdk.OAuth2(pdk.OAuth2Config{
			AuthorizeURL: "https://github.com/login/oauth/authorize",
			TokenURL:     "https://github.com/login/oauth/access_token",
			Scopes:       []string{"repo", "read:user"},
			TokenAuth:    "post",
		}),
	}, tools...)
}

// One export per tool: //go:wasmexport needs a static name.

//go:wasmexport github_get_authenticated_user
func githubGetAuthenticatedUser(ptr, size uint32) uint32 { return getAuthenticatedUser.Run(ptr, size) }

//go:wasmexport github_list_repos
func githubListRepos(ptr, size uint32) uint32 { return listRepos.Run(ptr, size) }

//go:wasmexport github_get_repo
func githubGetRepo(ptr, size uint32) uint32 { return getRepo.Run(ptr, size) }

//go:wasmexport github_list_issues
func githubListIssues(ptr, size uint32) uint32 { return listIssues.Run(ptr, size) }

//go:wasmexport github_get_issue
func githubGetIssue(ptr, size uint32) uint32 { return getIssue.Run(ptr, size) }

//go:wasmexport github_create_issue
func githubCreateIssue(ptr, size uint32) uint32 { return createIssue.Run(ptr, size) }

//go:wasmexport github_update_issue
func githubUpdateIssue(ptr, size uint32) uint32 { return updateIssue.Run(ptr, size) }

//go:wasmexport github_list_issue_comments
func githubListIssueComments(ptr, size uint32) uint32 { return listIssueComments.Run(ptr, size) }

//go:wasmexport github_create_issue_comment
func githubCreateIssueComment(ptr, size uint32) uint32 { return createIssueComment.Run(ptr, size) }

//go:wasmexport github_list_pulls
func githubListPulls(ptr, size uint32) uint32 { return listPulls.Run(ptr, size) }

//go:wasmexport github_get_pull
func githubGetPull(ptr, size uint32) uint32 { return getPull.Run(ptr, size) }

//go:wasmexport github_create_pull
func githubCreatePull(ptr, size uint32) uint32 { return createPull.Run(ptr, size) }

//go:wasmexport github_merge_pull
func githubMergePull(ptr, size uint32) uint32 { return mergePull.Run(ptr, size) }

//go:wasmexport github_search_issues
func githubSearchIssues(ptr, size uint32) uint32 { return searchIssues.Run(ptr, size) }

//go:wasmexport github_search_repos
func githubSearchRepos(ptr, size uint32) uint32 { return searchRepos.Run(ptr, size) }

//go:wasmexport github_list_branches
func githubListBranches(ptr, size uint32) uint32 { return listBranches.Run(ptr, size) }

//go:wasmexport github_get_branch
func githubGetBranch(ptr, size uint32) uint32 { return getBranch.Run(ptr, size) }

//go:wasmexport github_list_commits
func githubListCommits(ptr, size uint32) uint32 { return listCommits.Run(ptr, size) }

//go:wasmexport github_get_commit
func githubGetCommit(ptr, size uint32) uint32 { return getCommit.Run(ptr, size) }

//go:wasmexport github_get_contents
func githubGetContents(ptr, size uint32) uint32 { return getContents.Run(ptr, size) }

//go:wasmexport github_list_labels
func githubListLabels(ptr, size uint32) uint32 { return listLabels.Run(ptr, size) }

//go:wasmexport github_add_labels
func githubAddLabels(ptr, size uint32) uint32 { return addLabels.Run(ptr, size) }

//go:wasmexport github_list_reviews
func githubListReviews(ptr, size uint32) uint32 { return listReviews.Run(ptr, size) }

//go:wasmexport github_create_review
func githubCreateReview(ptr, size uint32) uint32 { return createReview.Run(ptr, size) }

//go:wasmexport github_list_releases
func githubListReleases(ptr, size uint32) uint32 { return listReleases.Run(ptr, size) }

//go:wasmexport github_get_latest_release
func githubGetLatestRelease(ptr, size uint32) uint32 { return getLatestRelease.Run(ptr, size) }

//go:wasmexport github_list_workflows
func githubListWorkflows(ptr, size uint32) uint32 { return listWorkflows.Run(ptr, size) }

//go:wasmexport github_list_workflow_runs
func githubListWorkflowRuns(ptr, size uint32) uint32 { return listWorkflowRuns.Run(ptr, size) }

// main is never called: the module is a reactor (-buildmode=c-shared).
func main() {}
