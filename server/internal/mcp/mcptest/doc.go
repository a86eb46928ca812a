// Package mcptest is test support for the MCP endpoint: Go-function tools
// that stand in for wasm plugins, a swappable catalog, and in-memory
// connection and curl-session services that behave as the real ones are
// documented to. Nothing outside tests imports it.
package mcptest
