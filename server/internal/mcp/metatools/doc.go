// Package metatools implements the nine meta-tools Workbench offers agents
// over MCP: search_tools, get_tool_schema, execute_tools, whoami,
// list_integrations, connect, wait_for_connection, get_auth_url (a
// deprecated alias of connect) and curl_session, and the single-tool call the
// direct surface uses.
//
// It is independent of the MCP SDK: Invoke takes a tool name and raw JSON
// arguments and returns JSON plus an error flag, and Definitions describes
// the tools (descriptions, input and output schemas) for whichever surface
// advertises them. Failures an agent can act on are *Error values with a
// stable code (NOT_CONNECTED, INVALID_ARGUMENTS, UNKNOWN_TOOL, TIMEOUT,
// TOOL_ERROR, EGRESS_DENIED, ...) and, where there is one, the fix.
//
// Services the tools depend on but do not own (connections, curl sessions,
// the idempotency store) are small interfaces declared here.
package metatools
