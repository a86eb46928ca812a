// Command github is the Workbench GitHub plugin: repositories, branches,
// commits and file contents, issues and labels, pull requests and reviews,
// releases, Actions workflows and runs, and search over the GitHub REST API
// (version 2022-11-28).
//
// It is built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o github.wasm .
//
// The plugin never sees the user's token: it sends no Authorization header
// and the host adds "Authorization: Bearer <token>" to each request. API
// URLs start from the host's base_url setting (GITHUB_BASE_URL), which
// defaults to https://api.github.com.
package main
