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
}

func init() {
	pdk.Register(pdk.Plugin{
		Name:         "github",
		Version:      version,
		Title:        "GitHub",
		Description:  "Repositories, issues, pull requests and search on GitHub.",
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

// main is never called: the module is a reactor (-buildmode=c-shared).
func main() {}
