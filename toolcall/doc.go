// Package toolcall is the contract between the catalog and whatever runs a
// tool: a wasm plugin (package runtime) or a native Go service built into
// the server (jots today; exec workspaces, browser sessions, custom apps
// next). A Caller takes a Call and returns the tool's JSON result or a
// *failure.Error. The package imports nothing of Workbench but package
// failure, so native integrations never import the wasm runtime.
package toolcall
