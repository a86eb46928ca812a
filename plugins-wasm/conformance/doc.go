// Command conformance is a test-only plugin: the integration "test", with
// the fixture tools, resources and prompts the official MCP conformance
// suite (@modelcontextprotocol/conformance) calls by name, such as
// test_simple_text, test://static-text and test_simple_prompt. Its sibling
// jsonschema is the integration "json" with json_schema_2020_12_tool.
//
// It is not a built-in: TestConformance in server/internal/mcp builds both
// into a temporary plugin directory with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o test.wasm .
//
// and starts the server on it in the direct surface.
package main
