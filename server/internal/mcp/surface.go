package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// Refresh brings the advertised plugin tools and the resources in line with
// the current catalog. Call it after every registry swap (plugin loaded,
// reloaded or unloaded): sessions of the direct and both surfaces then get
// notifications/tools/list_changed, and every session
// notifications/resources/list_changed. Refresh is cheap when nothing
// changed and safe to call concurrently.
func (e *Endpoint) Refresh() {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.opts.Catalog.Current()
	if v == e.synced {
		return
	}
	e.synced = v
	if e.opts.Surface != SurfaceMeta {
		e.syncTools(v)
	}
	e.syncResources(v)
	e.syncContent(v)
	e.tools.Warm()
}

// syncTools registers every plugin tool of v under its slug and removes the
// ones v no longer has. The SDK debounces the change into one
// notifications/tools/list_changed.
func (e *Endpoint) syncTools(v *registry.Snapshot) {
	want := map[string]bool{}
	for _, tool := range v.Tools() {
		slug := tool.Spec.Slug
		if e.reserve[slug] {
			e.logger.Warn("plugin tool hidden: its slug is a meta-tool name", "tool", slug, "integration", tool.Integration.Name)
			continue
		}
		t, err := directTool(tool)
		if err != nil {
			e.logger.Warn("plugin tool not advertised", "tool", slug, "err", err)
			continue
		}
		want[slug] = true
		e.server.AddTool(t, e.directHandler(tool))
	}
	e.direct.keep(want)
}

// directTool describes a plugin tool as a native MCP tool.
func directTool(tool registry.Tool) (*sdk.Tool, error) {
	spec := tool.Spec
	t := &sdk.Tool{
		Name:        spec.Slug,
		Title:       spec.Title,
		Description: spec.Description,
		InputSchema: json.RawMessage(spec.InputSchema),
		Annotations: annotations(spec.Title, spec.Annotations.ReadOnly, spec.Annotations.Destructive, spec.Annotations.Idempotent, spec.Annotations.OpenWorld),
	}
	if len(spec.OutputSchema) > 0 {
		t.OutputSchema = json.RawMessage(spec.OutputSchema)
	}
	var schema struct{ Type string }
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil || schema.Type != "object" {
		return nil, fmt.Errorf("input schema is not an object schema")
	}
	return t, nil
}

// directHandler runs a plugin tool called by its slug. A content result
// (docs/abi.md) is sent as its content blocks and structured content;
// any other result as JSON text and, when it is an object, as
// structuredContent. A tool that
// declares an output schema must return an object that satisfies it, or
// the call fails with TOOL_ERROR/BAD_OUTPUT rather than hand the client a
// result its schema check would reject.
func (e *Endpoint) directHandler(tool registry.Tool) sdk.ToolHandler {
	var output *argcheck.Schema
	if len(tool.Spec.OutputSchema) > 0 {
		s, err := argcheck.Compile(tool.Spec.OutputSchema)
		if err != nil {
			e.logger.Warn("output schema not checked", "tool", tool.Spec.Slug, "err", err)
		}
		output = s
	}
	slug := tool.Spec.Slug
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := principalOf(tokenInfo(req.Extra))
		if !ok {
			return nil, errNoPrincipal
		}
		ctx, cancel := e.scoped(ctx)
		defer cancel()
		peer := peerOf(ctx, req)
		var round *roundClient
		if sc, ok := peer.Client.(*sessionClient); ok {
			binding := bindingOf(p.UserID, "tools/call", slug, req.Params.Arguments)
			client, rc, err := e.clientFor(sc, binding, req.Params.InputResponses, req.Params.RequestState)
			if err != nil {
				return nil, err
			}
			peer.Client, round = client, rc
		}
		out, terr := e.tools.Call(ctx, p, slug, req.Params.Arguments, peer)
		if terr != nil {
			if reqs, state, ok, err := round.inputRequired(e.states, failure.Code(terr.Reason)); ok {
				return &sdk.CallToolResult{InputRequests: reqs, RequestState: state}, nil
			} else if err != nil {
				return errorResult(&metatools.Error{Code: failure.ToolError, Reason: failure.InputRequired, Message: "the answers given so far are too large to carry to the next round: " + err.Error()}), nil
			}
			if missing := missingCapability(terr); missing != nil {
				return nil, missing
			}
			return errorResult(terr), nil
		}
		content, isContent, terr := parseContentResult(out)
		if terr != nil {
			return errorResult(terr), nil
		}
		if isContent {
			if len(tool.Spec.OutputSchema) > 0 {
				if terr := checkOutput(content.structured, output); terr != nil {
					return errorResult(terr), nil
				}
			}
			res := &sdk.CallToolResult{Content: content.blocks}
			if res.Content == nil {
				res.Content = []sdk.Content{}
			}
			if content.structured != nil {
				res.StructuredContent = content.structured
			}
			return res, nil
		}
		if len(tool.Spec.OutputSchema) > 0 {
			if terr := checkOutput(out, output); terr != nil {
				return errorResult(terr), nil
			}
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}}
		if isObject(out) {
			res.StructuredContent = out
		}
		return res, nil
	}
}

// checkOutput checks a result against its tool's output schema.
func checkOutput(out json.RawMessage, schema *argcheck.Schema) *metatools.Error {
	if !isObject(out) {
		return &metatools.Error{Code: failure.ToolError, Reason: failure.BadOutput, Message: "the tool returned a result that is not an object although it declares an output schema"}
	}
	if schema == nil {
		return nil
	}
	if problems := schema.Check(out); problems != nil {
		return &metatools.Error{Code: failure.ToolError, Reason: failure.BadOutput, Problems: problems,
			Message: "the tool returned a result that does not match its output schema"}
	}
	return nil
}

// missingCapability turns a tool that failed because the client lacks a
// capability (elicit or sample answered UNSUPPORTED with the capability in
// its details) into MCP's missing-client-capability error (-32021, SEP-2575),
// which tells the client what to declare. It is nil for every other error.
func missingCapability(e *metatools.Error) error {
	if e.Reason != "UNSUPPORTED" || len(e.Details) == 0 {
		return nil
	}
	var data sdk.MissingRequiredClientCapabilityData
	if err := json.Unmarshal(e.Details, &data); err != nil || data.RequiredCapabilities == nil {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: e.Message, Data: b}
}

func errorResult(e *metatools.Error) *sdk.CallToolResult {
	b, _ := json.Marshal(struct {
		Error *metatools.Error `json:"error"`
	}{e})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, IsError: true}
}

func isObject(b json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
}

// resource URIs.
const (
	integrationPrefix = "workbench://integration/"
	toolPrefix        = "workbench://tool/"
)

// registerTemplates adds the two resource templates; their handler serves
// every integration and tool URI, listed or not.
func (e *Endpoint) registerTemplates() {
	e.server.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: integrationPrefix + "{name}",
		Name:        "integration",
		Title:       "Integration",
		Description: "One integration as list_integrations describes it: auth mode, tool count, whether you are connected.",
		MIMEType:    "application/json",
	}, e.readResource)
	e.server.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: toolPrefix + "{slug}",
		Name:        "tool",
		Title:       "Tool",
		Description: "One tool as get_tool_schema describes it: input and output schemas, annotations, integration.",
		MIMEType:    "application/json",
	}, e.readResource)
}

// syncResources lists a resource per integration and per tool of v.
func (e *Endpoint) syncResources(v *registry.Snapshot) {
	want := map[string]bool{}
	for _, in := range v.Integrations() {
		uri := integrationPrefix + in.Name
		want[uri] = true
		e.server.AddResource(&sdk.Resource{
			URI: uri, Name: in.Name, Title: in.Manifest().DisplayTitle(),
			Description: in.Manifest().Description, MIMEType: "application/json",
		}, e.readResource)
	}
	for _, tool := range v.Tools() {
		uri := toolPrefix + tool.Spec.Slug
		want[uri] = true
		e.server.AddResource(&sdk.Resource{
			URI: uri, Name: tool.Spec.Slug, Title: tool.Spec.Title,
			Description: firstLine(tool.Spec.Description), MIMEType: "application/json",
		}, e.readResource)
	}
	e.listed.keep(want)
}

// readResource serves workbench://integration/<name> and
// workbench://tool/<slug> with the JSON of list_integrations and
// get_tool_schema.
func (e *Endpoint) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := principalOf(tokenInfo(req.Extra))
	if !ok {
		return nil, errNoPrincipal
	}
	var body any
	var err error
	switch {
	case strings.HasPrefix(uri, integrationPrefix):
		body, err = e.tools.Integration(ctx, p, strings.TrimPrefix(uri, integrationPrefix))
	case strings.HasPrefix(uri, toolPrefix):
		body, err = e.tools.GetToolSchema(ctx, p, strings.TrimPrefix(uri, toolPrefix))
	default:
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
