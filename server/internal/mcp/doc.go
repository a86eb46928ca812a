// Package mcp serves Workbench over the Model Context Protocol at /mcp: the
// streamable HTTP transport of github.com/modelcontextprotocol/go-sdk in both
// protocol eras (2025-11-25 sessions with SSE and resumability, and the
// stateless 2026-07-28 requests), bearer authentication through the
// Authenticator it declares, a Host/Origin guard against DNS rebinding, the
// tool surfaces (the nine meta-tools, every plugin tool, or both) and the
// integration and tool resources. Plugins' questions to the client
// (elicitation, sampling, roots) go over the session in the 2025 era and
// become input-required results in the 2026-07-28 era, with the request
// state sealed by roundstate.
//
// The meta-tools themselves live in metatools; this package only adapts
// them to MCP. It knows the registry only through Catalog, and learns
// of plugin loads and unloads when the server calls Refresh.
package mcp
