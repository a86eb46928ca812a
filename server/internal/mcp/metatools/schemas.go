package metatools

import (
	"encoding/json"
	"fmt"

	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
)

// Names of the meta-tools.
const (
	SearchTools       = "search_tools"
	GetToolSchema     = "get_tool_schema"
	ExecuteTools      = "execute_tools"
	Whoami            = "whoami"
	ListIntegrations  = "list_integrations"
	Connect           = "connect"
	WaitForConnection = "wait_for_connection"
	GetAuthURL        = "get_auth_url"
	CurlSessionTool   = "curl_session"
)

// Limits of the meta-tools' inputs.
const (
	MaxExecutions        = 50
	MaxIdempotencyKey    = 200
	MaxWaitSeconds       = 300
	DefaultWaitSeconds   = 60
	MaxCurlIntegrations  = 10
	MaxQueryLength       = 512
	MaxSearchLimit       = 50
	DefaultSearchResults = 10
)

// Definition describes one meta-tool for an MCP tools/list.
type Definition struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	ReadOnly     bool
	Destructive  bool
	Idempotent   bool
	OpenWorld    bool
	// Account marks the tools the direct surface offers next to the
	// plugin tools: whoami, list_integrations, connect, wait_for_connection.
	Account bool
}

// Definitions returns the nine meta-tools in a stable order.
func Definitions() []Definition { return append([]Definition(nil), definitions...) }

// DefinitionOf returns the definition of the meta-tool name.
func DefinitionOf(name string) (Definition, bool) {
	for _, d := range definitions {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// errorSchema is the schema of an Error, shared by the output schemas that
// carry per-item errors.
const errorSchema = `{
	"type": "object",
	"description": "Why an execution failed and how to fix it.",
	"properties": {
		"code": {"type": "string", "description": "NOT_CONNECTED, INVALID_ARGUMENTS, UNKNOWN_TOOL, TIMEOUT, TOOL_ERROR, EGRESS_DENIED or IDEMPOTENCY_CONFLICT."},
		"message": {"type": "string"},
		"fix": {"type": "string", "description": "The call that resolves the error, e.g. connect('github')."},
		"integration": {"type": "string"},
		"reason": {"type": "string", "description": "The plugin's own code behind TOOL_ERROR or TIMEOUT, e.g. NOT_FOUND."},
		"problems": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}, "message": {"type": "string"}}, "required": ["path", "message"]}},
		"suggestions": {"type": "array", "items": {"type": "string"}},
		"details": {}
	},
	"required": ["code", "message"]
}`

// integrationSchema is one entry of list_integrations and the contents of a
// workbench://integration/<name> resource.
const integrationSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "description": "The integration's name; tool slugs start with it."},
		"title": {"type": "string"},
		"description": {"type": "string"},
		"version": {"type": "string"},
		"authMode": {"type": "string", "enum": ["oauth2", "apikey", "cookie", "none"]},
		"toolCount": {"type": "integer"},
		"logo": {"type": "string", "description": "An https URL of the logo."},
		"categories": {"type": "array", "items": {"type": "string"}},
		"connected": {"type": "boolean", "description": "Whether you can call this integration's tools now."},
		"curl": {"type": "boolean", "description": "Whether curl_session can open this integration's API."},
		"custom": {"type": "boolean", "description": "Set for your own custom app (an MCP server you added); its tools are <app>__<tool>."},
		"error": {"type": "string", "description": "Why your custom app shows no tools now (it cannot be reached, for example)."}
	},
	"required": ["name", "title", "description", "version", "authMode", "toolCount", "connected", "curl"]
}`

// toolSchemaSchema is get_tool_schema's output and the contents of a
// workbench://tool/<slug> resource.
const toolSchemaSchema = `{
	"type": "object",
	"properties": {
		"slug": {"type": "string"},
		"integration": {"type": "string"},
		"title": {"type": "string"},
		"description": {"type": "string"},
		"inputSchema": {"type": "object", "description": "JSON Schema the arguments of execute_tools must satisfy."},
		"outputSchema": {"type": "object", "description": "JSON Schema of the tool's result, when it declares one."},
		"annotations": {
			"type": "object",
			"properties": {
				"readOnly": {"type": "boolean"},
				"destructive": {"type": "boolean"},
				"idempotent": {"type": "boolean"},
				"openWorld": {"type": "boolean"}
			},
			"required": ["readOnly", "destructive", "idempotent", "openWorld"]
		},
		"connected": {"type": "boolean"},
		"fix": {"type": "string", "description": "The call to make before executing, when you are not connected."}
	},
	"required": ["slug", "integration", "title", "description", "inputSchema", "annotations", "connected"]
}`

const connectInput = `{
	"type": "object",
	"properties": {
		"integration": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The integration to connect, e.g. \"github\" (see list_integrations)."},
		"reconnect": {"type": "boolean", "description": "Start a new connection even when one exists, e.g. after the user revoked access."}
	},
	"required": ["integration"],
	"additionalProperties": false
}`

const connectOutput = `{
	"type": "object",
	"properties": {
		"integration": {"type": "string"},
		"status": {"type": "string", "enum": ["PENDING", "CONNECTED"]},
		"url": {"type": "string", "description": "Give this URL to the user to open; it authorizes Workbench."},
		"connectionId": {"type": "string", "description": "Pass it to wait_for_connection."},
		"message": {"type": "string"}
	},
	"required": ["integration", "status", "message"]
}`

const connectDescription = "Connect the user to an integration so that its tools can run on their behalf. " +
	"Returns status CONNECTED when nothing is needed, or PENDING with a url and a connectionId: " +
	"show the url to the user (they open it in a browser and authorize), then call wait_for_connection with the connectionId. " +
	"Call it when a tool fails with NOT_CONNECTED."

var definitions = []Definition{
	{
		Name:  SearchTools,
		Title: "Search tools",
		Description: "Find tools by keyword across every integration. Ranks an exact slug first, then tools whose name matches more of the query, then tools whose description does. " +
			"Each hit has the slug to pass to get_tool_schema and execute_tools, its integration, a one-line description and whether you are connected. " +
			"An empty query lists every tool in slug order. Results are paged: pass nextCursor back as cursor with the same query for the next page.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"query": {"type": "string", "maxLength": %d, "description": "Keywords, e.g. \"list pull requests\" or an exact slug."},
				"integration": {"type": "string", "maxLength": 64, "description": "Only search this integration's tools."},
				"limit": {"type": "integer", "minimum": 1, "maximum": %d, "default": %d, "description": "Hits per page."},
				"cursor": {"type": "string", "maxLength": 128, "description": "nextCursor of the previous page."}
			},
			"additionalProperties": false
		}`, MaxQueryLength, MaxSearchLimit, DefaultSearchResults)),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"hits": {"type": "array", "items": {
					"type": "object",
					"properties": {
						"slug": {"type": "string"},
						"integration": {"type": "string"},
						"title": {"type": "string"},
						"description": {"type": "string", "description": "First line of the tool's description."},
						"connected": {"type": "boolean"}
					},
					"required": ["slug", "integration", "title", "description", "connected"]
				}},
				"total": {"type": "integer", "description": "Hits over all pages."},
				"nextCursor": {"type": "string", "description": "Pass as cursor for the next page; absent on the last page."}
			},
			"required": ["hits", "total"]
		}`),
		ReadOnly: true, Idempotent: true,
	},
	{
		Name:  GetToolSchema,
		Title: "Get a tool's schema",
		Description: "Return one tool's input JSON Schema (what execute_tools arguments must satisfy), its output schema when it has one, " +
			"its annotations (readOnly, destructive, idempotent, openWorld), its integration and whether you are connected. " +
			"Call it before the first execute_tools of a tool. An unknown slug fails with UNKNOWN_TOOL and the closest slugs.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"tool": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The tool's slug, e.g. \"github_list_pulls\"."}
			},
			"required": ["tool"],
			"additionalProperties": false
		}`),
		OutputSchema: json.RawMessage(toolSchemaSchema),
		ReadOnly:     true, Idempotent: true,
	},
	{
		Name:  ExecuteTools,
		Title: "Execute tools",
		Description: fmt.Sprintf("Run one or more tools (at most %d) and return their results in the order given. "+
			"Independent executions run concurrently; one failure never stops the others. Each execution names a tool slug and its arguments, "+
			"which are checked against the tool's input schema first. Each result has ok true and the tool's result, or ok false and an error whose code is "+
			"NOT_CONNECTED (call the fix, e.g. connect('github')), INVALID_ARGUMENTS (problems lists each failing argument path), "+
			"UNKNOWN_TOOL (suggestions lists the closest slugs), TIMEOUT, TOOL_ERROR (reason holds the tool's own code) or EGRESS_DENIED. "+
			"Give an idempotencyKey to an execution with side effects: retrying with the same key and the same arguments returns the first outcome "+
			"instead of running again; the same key with different arguments fails with IDEMPOTENCY_CONFLICT. "+
			"To run one tool, pass a one-element executions array.", MaxExecutions),
		InputSchema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"executions": {
					"type": "array",
					"minItems": 1,
					"maxItems": %d,
					"items": {
						"type": "object",
						"properties": {
							"tool": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The tool's slug."},
							"arguments": {"type": "object", "description": "Arguments matching the tool's input schema (get_tool_schema)."},
							"idempotencyKey": {"type": "string", "minLength": 1, "maxLength": %d, "description": "A key unique to this operation, e.g. a UUID; replays return the stored outcome."}
						},
						"required": ["tool"],
						"additionalProperties": false
					}
				}
			},
			"required": ["executions"],
			"additionalProperties": false
		}`, MaxExecutions, MaxIdempotencyKey)),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"results": {"type": "array", "items": {
					"type": "object",
					"properties": {
						"index": {"type": "integer", "description": "Position in executions."},
						"tool": {"type": "string"},
						"ok": {"type": "boolean"},
						"result": {"description": "The tool's result when ok."},
						"error": ` + errorSchema + `,
						"replayed": {"type": "boolean", "description": "The outcome was stored under the idempotencyKey by an earlier call."},
						"durationMs": {"type": "integer"}
					},
					"required": ["index", "tool", "ok"]
				}},
				"succeeded": {"type": "integer"},
				"failed": {"type": "integer"}
			},
			"required": ["results", "succeeded", "failed"]
		}`),
		OpenWorld: true,
	},
	{
		Name:        Whoami,
		Title:       "Who am I",
		Description: "Return the user this session acts for: user id, tenant, email and the scopes of the access token.",
		InputSchema: json.RawMessage(`{"type": "object", "additionalProperties": false}`),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"userId": {"type": "string"},
				"tenantId": {"type": "string"},
				"email": {"type": "string"},
				"scopes": {"type": "array", "items": {"type": "string"}}
			},
			"required": ["userId"]
		}`),
		ReadOnly: true, Idempotent: true, Account: true,
	},
	{
		Name:  ListIntegrations,
		Title: "List integrations",
		Description: "List every integration with its auth mode, number of tools, logo, categories, whether you are connected " +
			"and whether curl_session can open its API. Connect to one with connect(integration).",
		InputSchema: json.RawMessage(`{"type": "object", "additionalProperties": false}`),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {"integrations": {"type": "array", "items": ` + integrationSchema + `}},
			"required": ["integrations"]
		}`),
		ReadOnly: true, Idempotent: true, Account: true,
	},
	{
		Name:         Connect,
		Title:        "Connect an integration",
		Description:  connectDescription,
		InputSchema:  json.RawMessage(connectInput),
		OutputSchema: json.RawMessage(connectOutput),
		OpenWorld:    true, Account: true,
	},
	{
		Name:  WaitForConnection,
		Title: "Wait for a connection",
		Description: fmt.Sprintf("Wait until the user finishes the connection that connect started, for at most timeoutSeconds (default %d, at most %d). "+
			"Returns status CONNECTED (the integration's tools now work), EXPIRED or FAILED (with a reason; call connect again), "+
			"or PENDING when the time ran out (call wait_for_connection again).", DefaultWaitSeconds, MaxWaitSeconds),
		InputSchema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"connectionId": {"type": "string", "minLength": 1, "maxLength": 128, "description": "connectionId returned by connect."},
				"timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": %d, "default": %d}
			},
			"required": ["connectionId"],
			"additionalProperties": false
		}`, MaxWaitSeconds, DefaultWaitSeconds)),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"connectionId": {"type": "string"},
				"status": {"type": "string", "enum": ["PENDING", "CONNECTED", "EXPIRED", "FAILED"]},
				"reason": {"type": "string"},
				"message": {"type": "string"}
			},
			"required": ["connectionId", "status", "message"]
		}`),
		ReadOnly: true, Account: true,
	},
	{
		Name:         GetAuthURL,
		Title:        "Get an authorization URL (deprecated)",
		Description:  "Deprecated: use connect, which this tool is an alias of; it behaves exactly the same. " + connectDescription,
		InputSchema:  json.RawMessage(connectInput),
		OutputSchema: json.RawMessage(connectOutput),
		OpenWorld:    true,
	},
	{
		Name:  CurlSessionTool,
		Title: "Open a curl session",
		Description: fmt.Sprintf("Mint a short-lived token (15 minutes) that lets you call the raw HTTP APIs of up to %d connected integrations through Workbench's proxy, "+
			"e.g. with curl, when no tool does what you need. Workbench adds the user's credential; you never see it. "+
			"The token can do anything the user's credential can, including destructive writes (deleting, overwriting, sending, paying). "+
			"BEFORE calling this tool, tell the user which integrations you want and exactly what you intend to do with them, "+
			"and wait for their explicit approval; do not call it on your own initiative or to work around a refusal. "+
			"Every integration must exist, support curl and be connected (see list_integrations); if any is not, nothing is minted "+
			"and the error lists every offending integration with its reason.", MaxCurlIntegrations),
		InputSchema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"integrations": {"type": "array", "minItems": 1, "maxItems": %d, "uniqueItems": true, "items": {"type": "string", "minLength": 1, "maxLength": 64}}
			},
			"required": ["integrations"],
			"additionalProperties": false
		}`, MaxCurlIntegrations)),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"token": {"type": "string", "description": "Send as Authorization: Bearer <token>."},
				"expiresAt": {"type": "string", "format": "date-time"},
				"endpoints": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Base URL per integration; append the API path."},
				"usage": {"type": "string"}
			},
			"required": ["token", "expiresAt", "endpoints", "usage"]
		}`),
		OpenWorld: true,
	},
}

// inputSchemas are the compiled input schemas of the meta-tools.
var inputSchemas = func() map[string]*argcheck.Schema {
	m := make(map[string]*argcheck.Schema, len(definitions))
	for _, d := range definitions {
		s, err := argcheck.Compile(d.InputSchema)
		if err != nil {
			panic(fmt.Sprintf("metatools: input schema of %s: %v", d.Name, err))
		}
		m[d.Name] = s
	}
	return m
}()
