package failure

// Code is an upper-snake-case word that names a failure, such as
// NOT_CONNECTED. Plugins choose their own codes for their tool errors
// (NOT_FOUND, RATE_LIMITED, ...); the constants below are the codes
// Workbench itself sets, listed in docs/abi.md and docs/mcp.md.
type Code string

// Valid reports whether c is a well-formed code: 1 to 64 upper-case
// letters, digits and underscores.
func (c Code) Valid() bool {
	if c == "" || len(c) > 64 {
		return false
	}
	for _, r := range c {
		if (r < 'A' || r > 'Z') && r != '_' && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// Codes the plugin host sets when a call fails (docs/abi.md, section 3).
const (
	// Timeout: the call did not finish before its deadline.
	Timeout Code = "TIMEOUT"
	// Canceled: the caller went away before the call finished.
	Canceled Code = "CANCELED"
	// Trap: the plugin trapped, exited or misused a host import.
	Trap Code = "TRAP"
	// OutOfMemory: the plugin reached its memory limit.
	OutOfMemory Code = "OUT_OF_MEMORY"
	// BadPointer: the plugin passed a region outside its memory.
	BadPointer Code = "BAD_POINTER"
	// BadOutput: the plugin returned no output, output that is not JSON,
	// or a status the ABI does not define.
	BadOutput Code = "BAD_OUTPUT"
	// OutputTooLarge: the output is over the tool's limit.
	OutputTooLarge Code = "OUTPUT_TOO_LARGE"
	// InputTooLarge: the input is over the host's limit.
	InputTooLarge Code = "INPUT_TOO_LARGE"
	// Busy: every call slot of the plugin or tool stayed taken until the
	// call's deadline.
	Busy Code = "BUSY"
	// PluginClosed: the plugin was unloaded or replaced.
	PluginClosed Code = "PLUGIN_CLOSED"
	// UnknownTool: no tool (or resource or prompt export) by that name.
	UnknownTool Code = "UNKNOWN_TOOL"
	// InvalidArguments: the arguments do not fit the tool's input.
	InvalidArguments Code = "INVALID_ARGUMENTS"
	// ToolError: the tool failed; a plugin error without a valid code of
	// its own gets this one.
	ToolError Code = "TOOL_ERROR"
	// InputRequired: the client must answer input requests (elicit, sample,
	// input) before the call can go on; the call runs again from the start.
	InputRequired Code = "INPUT_REQUIRED"
)

// Codes the host imports report to a plugin, which usually passes them on
// as its tool error (docs/abi.md, section 5), and that the curl proxy
// answers with.
const (
	// NotConnected: the user has no usable connection to the integration.
	NotConnected Code = "NOT_CONNECTED"
	// Unavailable: something Workbench depends on (its database, a
	// service) failed; the same request may succeed later.
	Unavailable Code = "UNAVAILABLE"
	// InvalidRequest: a host import got a request it cannot parse.
	InvalidRequest Code = "INVALID_REQUEST"
	// TooManyRequests: over a per-call or per-session request limit.
	TooManyRequests Code = "TOO_MANY_REQUESTS"
	// EgressDenied: the destination is not one the integration may reach.
	EgressDenied Code = "EGRESS_DENIED"
	// ResponseTooLarge: the upstream response is over the size limit.
	ResponseTooLarge Code = "RESPONSE_TOO_LARGE"
	// UpstreamTimeout: the upstream did not answer in time.
	UpstreamTimeout Code = "UPSTREAM_TIMEOUT"
	// UpstreamUnreachable: the upstream could not be reached.
	UpstreamUnreachable Code = "UPSTREAM_UNREACHABLE"
	// TooManyRedirects: the upstream redirected too many times.
	TooManyRedirects Code = "TOO_MANY_REDIRECTS"
	// Unsupported: the MCP client lacks what an import needs (elicitation,
	// sampling, roots), or no client is attached to the call.
	Unsupported Code = "UNSUPPORTED"
	// ClientError: the MCP client failed to answer an input request, or
	// its answer is not usable.
	ClientError Code = "CLIENT_ERROR"
)

// Codes of the meta-tools and the connection flow (docs/mcp.md).
const (
	// UnknownIntegration: no integration by that name is loaded.
	UnknownIntegration Code = "UNKNOWN_INTEGRATION"
	// NotConfigured: the integration cannot be connected until the
	// operator configures it (an OAuth client ID and secret).
	NotConfigured Code = "NOT_CONFIGURED"
	// UnknownConnection: no pending connection by that ID.
	UnknownConnection Code = "UNKNOWN_CONNECTION"
	// NoProxy: the integration declares no proxy base URL.
	NoProxy Code = "NO_PROXY"
	// IdempotencyConflict: an idempotency key was reused for another request.
	IdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	// IdempotencyCapacity: the user holds as many live idempotency keys as
	// allowed (the execution did not run), or a keyed execution ran but its
	// outcome was over the byte budget and is not replayed.
	IdempotencyCapacity Code = "IDEMPOTENCY_CAPACITY"
	// ConnectionCheck: the reason of a TOOL_ERROR when checking the
	// user's connection failed before the tool ran.
	ConnectionCheck Code = "CONNECTION_CHECK"
	// BadSchema: the reason of a TOOL_ERROR when a tool's input schema
	// cannot be used.
	BadSchema Code = "BAD_SCHEMA"
	// Internal: Workbench itself failed; the message says what failed.
	Internal Code = "INTERNAL"
	// RateLimited: too many attempts; retry after the time given.
	RateLimited Code = "RATE_LIMITED"
)

// Codes of the jot tools and the jot upload endpoint.
const (
	// NotFound: the named thing (a jot, a file, a resource) does not exist.
	NotFound Code = "NOT_FOUND"
	// NameTaken: another user holds the name.
	NameTaken Code = "NAME_TAKEN"
	// LimitExceeded: over a size, count or quota limit.
	LimitExceeded Code = "LIMIT_EXCEEDED"
	// PathConflict: two paths of an update collide.
	PathConflict Code = "PATH_CONFLICT"
	// TooLarge: an upload is over its size limit.
	TooLarge Code = "TOO_LARGE"
	// BadTarball: an upload is not an acceptable gzip tarball.
	BadTarball Code = "BAD_TARBALL"
	// UploadNotFound: the upload URL is unknown or was used.
	UploadNotFound Code = "UPLOAD_NOT_FOUND"
	// UploadExpired: the upload URL expired.
	UploadExpired Code = "UPLOAD_EXPIRED"
)

// Codes of the exec workbench (docs/exec.md).
const (
	// CommandNotAllowed: the shell policy refused a command line; the
	// message names the node, the rule and the position.
	CommandNotAllowed Code = "COMMAND_NOT_ALLOWED"
	// NeedsComputerUse: the command needs the user's own computer (a
	// desktop or macOS tool, or the user's files), which the workbench does
	// not have; hand the step over to the user.
	NeedsComputerUse Code = "NEEDS_COMPUTER_USE"
	// PathNotAllowed: a workspace path is absolute, climbs out with '..',
	// or resolves through a symlink outside the workspace.
	PathNotAllowed Code = "PATH_NOT_ALLOWED"
)

// Codes of the curl proxy (/c/<integration>/<path>).
const (
	// MissingToken: the request carries no curl token.
	MissingToken Code = "MISSING_TOKEN"
	// InvalidToken: the curl token is malformed or unknown.
	InvalidToken Code = "INVALID_TOKEN"
	// TokenExpired: the curl token expired.
	TokenExpired Code = "TOKEN_EXPIRED"
	// TokenRevoked: the curl token was revoked.
	TokenRevoked Code = "TOKEN_REVOKED"
	// WrongIntegration: the curl token was minted for other integrations.
	WrongIntegration Code = "WRONG_INTEGRATION"
	// InvalidPath: the request path cannot be forwarded.
	InvalidPath Code = "INVALID_PATH"
	// MethodNotAllowed: the proxy does not forward this method.
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// URITooLong: the request target is over the limit.
	URITooLong Code = "URI_TOO_LONG"
	// HeadersTooLarge: the request headers are over the limit.
	HeadersTooLarge Code = "HEADERS_TOO_LARGE"
	// RequestTooLarge: the request body is over the limit.
	RequestTooLarge Code = "REQUEST_TOO_LARGE"
	// UpstreamAborted: the upstream broke off the response (logged only).
	UpstreamAborted Code = "UPSTREAM_ABORTED"
	// ClientAborted: the client went away during the response (logged only).
	ClientAborted Code = "CLIENT_ABORTED"
)

// Codes of custom apps (docs/custom-apps.md): a user's own MCP servers.
// An app that cannot be reached is UPSTREAM_UNREACHABLE, one too slow
// UPSTREAM_TIMEOUT, one answering too much RESPONSE_TOO_LARGE.
const (
	// AppToolGone: the app no longer lists the tool that was called.
	AppToolGone Code = "APP_TOOL_GONE"
	// AppProtocol: the app answered something that is not MCP (not JSON,
	// not JSON-RPC, an HTTP error) or a JSON-RPC error.
	AppProtocol Code = "APP_PROTOCOL_ERROR"
)

// Codes of the JSON API (/api), beside the ones derived from HTTP statuses.
const (
	// Unauthenticated: the request carries no valid API token or portal
	// session.
	Unauthenticated Code = "UNAUTHENTICATED"
	// Forbidden: the caller may not use the route (an admin route).
	Forbidden Code = "FORBIDDEN"
	// CSRFMismatch: a write made with the portal's session cookie lacks the
	// session's CSRF token.
	CSRFMismatch Code = "CSRF_MISMATCH"
)

// Codes of the operators' module API (/api/admin/modules, docs/operators.md).
const (
	// InvalidModule: an uploaded or reloaded module is not WebAssembly, does
	// not compile, or fails validation (its manifest, its exports, the name
	// it declares); the version serving before keeps serving.
	InvalidModule Code = "INVALID_MODULE"
	// Collision: the module's integration name or a tool slug is already
	// provided by another integration; the message names both.
	Collision Code = "COLLISION"
	// NativeModule: the integration is built into the server and cannot be
	// reloaded, replaced or unloaded.
	NativeModule Code = "NATIVE_MODULE"
	// ChangeInProgress: another load, reload or unload is running; retry
	// when it has finished.
	ChangeInProgress Code = "CHANGE_IN_PROGRESS"
)

// Codes of the browser sessions and the built-in browser integration
// (docs/browser.md).
const (
	// BrowserCapacity: every browser session the server allows
	// (BROWSER_MAX_SESSIONS) is in use by other users.
	BrowserCapacity Code = "BROWSER_CAPACITY"
	// BrowserSessionBusy: the user's browser is starting, or a profile
	// reset was asked while a call holds the browser.
	BrowserSessionBusy Code = "BROWSER_SESSION_BUSY"
	// SelectorNotFound: no element of the page matches the CSS selector.
	SelectorNotFound Code = "SELECTOR_NOT_FOUND"
	// NavigationFailed: the page did not load; the message names the
	// browser's network error (net::ERR_...).
	NavigationFailed Code = "NAVIGATION_FAILED"
)
