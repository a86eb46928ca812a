// Package pdk is the Go plugin development kit for Workbench plugins: the
// guest side of the ABI in docs/abi.md.
//
// A plugin is a WASI preview 1 reactor built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o name.wasm .
//
// Importing this package exports the module's allocator (wb_alloc) and its
// manifest (manifest). The author declares typed tools with [Tool], registers
// them with [Register] from an init function, and writes one exported
// function per tool, because Go's //go:wasmexport needs a static name:
//
//	var getRepo = pdk.Tool("github_get_repo", "Returns one repository.", getRepoHandler, pdk.ReadOnly())
//
//	func init() { pdk.Register(pdk.Plugin{Name: "github", ...}, getRepo) }
//
//	//go:wasmexport github_get_repo
//	func githubGetRepo(ptr, size uint32) uint32 { return getRepo.Run(ptr, size) }
//
//	func main() {}
//
// # Schemas and input
//
// A tool's inputSchema and outputSchema are generated from the handler's Go
// types by the rules of github.com/google/jsonschema-go (the PDK no longer
// links that library, but writes the same schemas): json tags name the
// properties, fields without omitempty (or omitzero) are required, a
// `jsonschema:"..."` tag is the description, and structs admit no other
// properties. Field tags add enum:"a,b", default:"30", minimum:"1",
// maximum:"100" and pattern:"^re$". Before a handler runs, its input is
// checked against that schema; a violation is an INVALID_ARGUMENTS error
// naming the field ("list[1].per_page"), and defaults fill the fields the
// input left out.
//
// Schemas follow Go's field visibility: a field shadowed by an embedded
// struct of the same name (an embedded Page holding a Page field) is left
// out of the schema, so inputs using it are refused. Name embedded structs
// differently from their fields.
//
// # Cost of a call
//
// Go code is slow under the host's loop interruption in wasm, so the PDK
// decodes and checks a tool's input in one pass through a plan compiled
// once per type, encodes results the same way, and reuses its buffers
// between calls. Strings in a handler's input share the memory of that
// input (the host writes it once; nothing changes it after), so a handler
// that keeps a short string keeps the whole input alive. Inputs the fast
// path does not take (errors, types with their own UnmarshalJSON or
// UnmarshalText, ...) go through json.Unmarshal and the schema check, which
// word the errors. [Response.DecodeJSON] decodes through such plans too,
// with json.Unmarshal's rules.
//
// # Errors
//
// A handler that returns an [*Error] reports its code; any other error is
// TOOL_ERROR; a panic is recovered and reported as TOOL_ERROR with the panic
// value (and logged with its stack). Host failures of [HTTPClient] requests
// arrive as [*Error] with the host's code (EGRESS_DENIED, NOT_CONNECTED, ...)
// and keep it when returned.
//
// # Host services
//
// Handlers reach the outside world only through [HTTPClient] (the host adds
// the user's credential; a plugin never sees it), read settings with [Config]
// and [BaseURL], report through [LogInfo] and its siblings and [Progress],
// and ask the user, the client's model or the client's roots through
// [Elicit], [Sample] and [Input] (several questions at once, by key).
//
// On an MCP 2026-07-28 request the client cannot be asked during a call: an
// unanswered question ends the call inside Elicit, Sample or Input, and the
// host runs the tool again from the start once the client has answered. Ask
// before acting, and keep what happens before the last question repeatable
// (docs/abi.md, "Input-required results").
//
// # Content, resources and prompts
//
// A handler that returns [Content] sends MCP content blocks ([Text],
// [Image], [Audio], [EmbeddedText], ...) instead of JSON. A plugin declares
// resources, resource templates and prompts in [Plugin] and serves them from
// exports that call [ReadResource] and [GetPrompt].
//
// In a native (non-wasip1) build, used by `go test`, the host imports are
// served by a [TestHost] instead of the Workbench runtime.
package pdk
