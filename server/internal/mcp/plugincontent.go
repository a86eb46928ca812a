package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// pluginContent indexes what plugins serve besides tools (docs/abi.md,
// "Resources and prompts"). It is immutable once built; Refresh swaps it.
type pluginContent struct {
	resources map[string]pluginResource // by URI
	templates []pluginTemplate          // in catalog order
	prompts   map[string]pluginPrompt   // by name
}

type pluginResource struct {
	integration string
	spec        *manifest.Resource
}

type pluginTemplate struct {
	integration string
	spec        *manifest.ResourceTemplate
	match       *regexp.Regexp // the template with each {var} as a group
	vars        []string
}

type pluginPrompt struct {
	integration string
	spec        *manifest.Prompt
}

// templateVar is one {var} expression of a resource template.
var templateVar = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// compileTemplate turns a template of simple {var} expressions into a
// pattern whose groups are the variables. A simple expansion
// percent-encodes reserved characters, so a value never holds '/', '?' or '#'.
func compileTemplate(t string) (*regexp.Regexp, []string) {
	var b strings.Builder
	var vars []string
	last := 0
	b.WriteString("^")
	for _, m := range templateVar.FindAllStringSubmatchIndex(t, -1) {
		b.WriteString(regexp.QuoteMeta(t[last:m[0]]))
		b.WriteString(`([^/?#]+)`)
		vars = append(vars, t[m[2]:m[3]])
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(t[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String()), vars
}

// variables returns the template's variables in uri, or false.
func (t pluginTemplate) variables(uri string) (map[string]string, bool) {
	m := t.match.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}

// syncContent registers the resources, templates and prompts of v's plugins
// and removes those v no longer has. The first integration (by name) to
// declare a URI, template or prompt name keeps it; later ones are logged.
func (e *Endpoint) syncContent(v *registry.Snapshot) {
	c := &pluginContent{resources: map[string]pluginResource{}, prompts: map[string]pluginPrompt{}}
	wantTemplates, wantPrompts := map[string]bool{}, map[string]bool{}
	for _, in := range v.Integrations() {
		m, name := in.Manifest(), in.Name
		for i := range m.Resources {
			r := &m.Resources[i]
			if _, dup := c.resources[r.URI]; dup {
				e.logger.Warn("plugin resource hidden: its URI is taken", "uri", r.URI, "integration", name)
				continue
			}
			err := guarded(func() {
				e.server.AddResource(&sdk.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}, e.readPluginResource)
			})
			if err != nil {
				e.logger.Warn("plugin resource not advertised", "uri", r.URI, "integration", name, "err", err)
				continue
			}
			c.resources[r.URI] = pluginResource{integration: name, spec: r}
		}
		for i := range m.ResourceTemplates {
			t := &m.ResourceTemplates[i]
			if wantTemplates[t.URITemplate] {
				e.logger.Warn("plugin resource template hidden: declared twice", "template", t.URITemplate, "integration", name)
				continue
			}
			err := guarded(func() {
				e.server.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType}, e.readPluginResource)
			})
			if err != nil {
				e.logger.Warn("plugin resource template not advertised", "template", t.URITemplate, "integration", name, "err", err)
				continue
			}
			re, vars := compileTemplate(t.URITemplate)
			c.templates = append(c.templates, pluginTemplate{integration: name, spec: t, match: re, vars: vars})
			wantTemplates[t.URITemplate] = true
		}
		for i := range m.Prompts {
			p := &m.Prompts[i]
			if wantPrompts[p.Name] {
				e.logger.Warn("plugin prompt hidden: declared twice", "prompt", p.Name, "integration", name)
				continue
			}
			args := make([]*sdk.PromptArgument, 0, len(p.Arguments))
			for _, a := range p.Arguments {
				args = append(args, &sdk.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			e.server.AddPrompt(&sdk.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: args}, e.getPluginPrompt)
			c.prompts[p.Name] = pluginPrompt{integration: name, spec: p}
			wantPrompts[p.Name] = true
		}
	}
	wantURIs := map[string]bool{}
	for uri := range c.resources {
		wantURIs[uri] = true
	}
	e.pluginURIs.keep(wantURIs)
	e.pluginTemplates.keep(wantTemplates)
	e.pluginPrompts.keep(wantPrompts)
	e.content.Store(c)
	// A reload may change what a resource holds: tell its subscribers.
	for uri := range c.resources {
		_ = e.server.ResourceUpdated(e.closing, &sdk.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// guarded runs an SDK registration that panics on input it rejects.
func guarded(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// resolve finds the plugin resource or template serving uri.
func (c *pluginContent) resolve(uri string) (integration, export, mimeType string, vars map[string]string, ok bool) {
	if c == nil {
		return "", "", "", nil, false
	}
	if r, found := c.resources[uri]; found {
		return r.integration, r.spec.ExportName(), r.spec.MIMEType, nil, true
	}
	for _, t := range c.templates {
		if vars, found := t.variables(uri); found {
			return t.integration, t.spec.ExportName(), t.spec.MIMEType, vars, true
		}
	}
	return "", "", "", nil, false
}

// readPluginResource reads a plugin resource through its export.
func (e *Endpoint) readPluginResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := principalOf(tokenInfo(req.Extra))
	if !ok {
		return nil, errNoPrincipal
	}
	integration, export, mimeType, vars, ok := e.content.Load().resolve(uri)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	input, err := json.Marshal(struct {
		URI       string            `json:"uri"`
		Variables map[string]string `json:"variables,omitempty"`
	}{uri, vars})
	if err != nil {
		return nil, err
	}
	client, round, err := e.contentClient(ctx, req.Session, req.ClientCapabilities(), bindingOf(p.UserID, "resources/read", uri, nil), req.Params.InputResponses, req.Params.RequestState)
	if err != nil {
		return nil, err
	}
	out, terr := e.callExport(ctx, p.UserID, integration, export, input, client)
	if terr != nil {
		if reqs, state, ok, err := round.inputRequired(e.states, terr.Code); ok {
			return &sdk.ReadResourceResult{InputRequests: reqs, RequestState: state}, nil
		} else if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the answers given so far are too large to carry to the next round: " + err.Error()}
		}
		if terr.Code == "NOT_FOUND" || terr.Code == failure.UnknownTool {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("reading %s failed with %s: %s", uri, terr.Code, terr.Message)}
	}
	var wire struct {
		Contents []*wireResource `json:"contents"`
	}
	if err := json.Unmarshal(out, &wire); err != nil || wire.Contents == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("reading %s: the plugin returned no contents list", uri)}
	}
	res := &sdk.ReadResourceResult{Contents: make([]*sdk.ResourceContents, 0, len(wire.Contents))}
	for i, w := range wire.Contents {
		if w == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("reading %s: contents[%d] is null", uri, i)}
		}
		rc, err := resourceContents(w, uri, mimeType)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("reading %s: contents[%d]: %v", uri, i, err)}
		}
		res.Contents = append(res.Contents, rc)
	}
	return res, nil
}

// getPluginPrompt renders a plugin prompt through its export after checking
// its arguments against the declaration.
func (e *Endpoint) getPluginPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	p, ok := principalOf(tokenInfo(req.Extra))
	if !ok {
		return nil, errNoPrincipal
	}
	name := req.Params.Name
	c := e.content.Load()
	pp, ok := c.prompts[name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	}
	for _, a := range pp.spec.Arguments {
		if _, given := req.Params.Arguments[a.Name]; a.Required && !given {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: argument %q is required", name, a.Name)}
		}
	}
	for arg := range req.Params.Arguments {
		if !slices.ContainsFunc(pp.spec.Arguments, func(a manifest.PromptArgument) bool { return a.Name == arg }) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s has no argument %q", name, arg)}
		}
	}
	input, err := json.Marshal(struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments,omitempty"`
	}{name, req.Params.Arguments})
	if err != nil {
		return nil, err
	}
	client, round, err := e.contentClient(ctx, req.Session, req.ClientCapabilities(), bindingOf(p.UserID, "prompts/get", name, req.Params.Arguments), req.Params.InputResponses, req.Params.RequestState)
	if err != nil {
		return nil, err
	}
	out, terr := e.callExport(ctx, p.UserID, pp.integration, pp.spec.ExportName(), input, client)
	if terr != nil {
		if reqs, state, ok, err := round.inputRequired(e.states, terr.Code); ok {
			return &sdk.GetPromptResult{InputRequests: reqs, RequestState: state}, nil
		} else if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the answers given so far are too large to carry to the next round: " + err.Error()}
		}
		code := int64(jsonrpc.CodeInternalError)
		if terr.Code == failure.InvalidArguments {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: fmt.Sprintf("prompt %s failed with %s: %s", name, terr.Code, terr.Message)}
	}
	var wire struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out, &wire); err != nil || wire.Messages == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: the plugin returned no messages list", name)}
	}
	res := &sdk.GetPromptResult{Description: wire.Description, Messages: make([]*sdk.PromptMessage, 0, len(wire.Messages))}
	for i, m := range wire.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: messages[%d].role %q is not user or assistant", name, i, m.Role)}
		}
		block, err := contentBlock(m.Content)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: messages[%d].content: %v", name, i, err)}
		}
		res.Messages = append(res.Messages, &sdk.PromptMessage{Role: sdk.Role(m.Role), Content: block})
	}
	return res, nil
}

// contentClient is the toolcall.Client of a prompt or resource export: nil
// without a session, else as clientFor decides.
func (e *Endpoint) contentClient(ctx context.Context, ss *sdk.ServerSession, caps *sdk.ClientCapabilities, binding string, responses sdk.InputResponseMap, state string) (toolcall.Client, *roundClient, error) {
	if ss == nil {
		return nil, nil, nil
	}
	return e.clientFor(&sessionClient{ctx: ctx, ss: ss, caps: caps}, binding, responses, state)
}

// callExport runs a resource or prompt export of an integration for a user.
func (e *Endpoint) callExport(ctx context.Context, user, integration, export string, input []byte, client toolcall.Client) (json.RawMessage, *failure.Error) {
	ctx, cancel := e.scoped(ctx)
	defer cancel()
	v, release := e.opts.Catalog.Acquire()
	defer release()
	in, ok := v.Integration(integration)
	if !ok {
		return nil, &failure.Error{Code: failure.UnknownTool, Message: fmt.Sprintf("integration %s is no longer loaded", integration)}
	}
	call := toolcall.Call{Export: export, UserID: user, Input: input, Client: client}
	out, err := in.Caller.Call(ctx, call)
	if err != nil {
		var terr *failure.Error
		if errors.As(err, &terr) {
			return nil, terr
		}
		return nil, &failure.Error{Code: "TOOL_ERROR", Message: err.Error()}
	}
	return out, nil
}

// complete answers completion/complete from the completions a prompt
// argument or a template variable declares: the values that start with what
// was typed, at most 100.
func (e *Endpoint) complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion needs a ref"}
	}
	c := e.content.Load()
	var values []string
	switch ref := req.Params.Ref; ref.Type {
	case "ref/prompt":
		p, ok := c.prompts[ref.Name]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		for _, a := range p.spec.Arguments {
			if a.Name == req.Params.Argument.Name {
				values = a.Completions
			}
		}
	case "ref/resource":
		for _, t := range c.templates {
			if t.spec.URITemplate == ref.URI {
				values = t.spec.Completions[req.Params.Argument.Name]
			}
		}
	}
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, req.Params.Argument.Value) && len(out) < manifest.MaxCompletions {
			out = append(out, v)
		}
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// subscribe accepts a subscription to any resource the endpoint serves;
// the SDK keeps the subscriptions.
func (e *Endpoint) subscribe(_ context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	if _, _, _, _, ok := e.content.Load().resolve(uri); ok {
		return nil
	}
	if strings.HasPrefix(uri, integrationPrefix) || strings.HasPrefix(uri, toolPrefix) {
		return nil
	}
	return sdk.ResourceNotFoundError(uri)
}

func (e *Endpoint) unsubscribe(context.Context, *sdk.UnsubscribeRequest) error { return nil }
