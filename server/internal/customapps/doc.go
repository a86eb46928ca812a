// Package customapps owns users' custom apps: their own external MCP
// servers (streamable HTTP), registered per user and served to that user
// only, beside the shared catalog, as integrations named by the app whose
// tools are <app>__<remote tool>.
//
// It registers and removes apps (Service.Add, List, Remove), lists an app's
// tools with a TTL cache bounded per app, and calls them through the go-sdk
// MCP client over an HTTP client whose every dial goes through the egress
// address rule (NewHTTPClient). Service.Integrations is what the meta-tools'
// catalog resolves per caller. It never reads another user's apps, never
// holds a credential in plain text beyond one request (credentials are
// sealed by the connection service, see Credentials), and treats every
// answer of an app as hostile input.
package customapps
