// Command jsonschema is a test-only plugin: the integration "json" with
// json_schema_2020_12_tool, whose input schema uses JSON Schema 2020-12
// keywords ($schema, $defs, $ref) the conformance suite checks survive
// tools/list unchanged. See the conformance plugin's package comment.
package main

import pdk "github.com/workbench-dev/workbench/pdk/go"

// address is the $defs/address of the advertised schema.
type address struct {
	Street string `json:"street,omitempty"`
	City   string `json:"city,omitempty"`
}

// input agrees with schema: the PDK checks input against this type, the
// host against the advertised schema (allOf, if/then/else).
type input struct {
	Name          string   `json:"name,omitempty"`
	Address       *address `json:"address,omitempty"`
	ContactMethod string   `json:"contactMethod,omitempty" enum:"phone,email"`
	Phone         string   `json:"phone,omitempty"`
	Email         string   `json:"email,omitempty"`
}

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

var tool = pdk.Tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
	func(_ pdk.Context, in input) (pdk.Content, error) {
		return pdk.Content{Blocks: []pdk.ContentBlock{pdk.Text("Hello, " + in.Name)}}, nil
	}, pdk.InputSchema(schema), pdk.ReadOnly())

func init() {
	pdk.Register(pdk.Plugin{
		Name: "json", Version: "1.0.0", Title: "JSON Schema conformance fixture",
		Description: "One tool whose input schema uses JSON Schema 2020-12 keywords. For tests only.",
		Categories:  []string{"testing"},
	}, tool)
}

//go:wasmexport json_schema_2020_12_tool
func jsonSchemaTool(ptr, size uint32) uint32 { return tool.Run(ptr, size) }

// main is never called: the module is a reactor (-buildmode=c-shared).
func main() {}
