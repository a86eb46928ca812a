// Package catalog is the MCP endpoint's view of the loaded integrations and
// their tools: an immutable View per registry snapshot, and a Source that
// hands out views with leases so that a tool call always finishes on an open
// plugin.
//
// Views are built once per snapshot and cached, so lookups on the request
// path cost a map read. Tools run through the Caller interface, which
// *runtime.Plugin implements; tests supply plain Go callers instead of wasm.
package catalog
