package metatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/argcheck"
	"github.com/workbench-dev/workbench/server/internal/mcp/search"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// SearchInput is the input of search_tools.
type SearchInput struct {
	Query       string `json:"query"`
	Integration string `json:"integration"`
	Limit       int    `json:"limit"`
	Cursor      string `json:"cursor"`
}

// SearchHit is one result of search_tools.
type SearchHit struct {
	Slug        string `json:"slug"`
	Integration string `json:"integration"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Connected   bool   `json:"connected"`
}

// SearchOutput is the output of search_tools.
type SearchOutput struct {
	Hits       []SearchHit `json:"hits"`
	Total      int         `json:"total"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// GetToolSchemaInput is the input of get_tool_schema.
type GetToolSchemaInput struct {
	Tool string `json:"tool"`
}

// Annotations are a tool's hints.
type Annotations struct {
	ReadOnly    bool `json:"readOnly"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"openWorld"`
}

// ToolSchema is the output of get_tool_schema and the contents of a
// workbench://tool/<slug> resource.
type ToolSchema struct {
	Slug         string          `json:"slug"`
	Integration  string          `json:"integration"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Annotations     `json:"annotations"`
	Connected    bool            `json:"connected"`
	Fix          string          `json:"fix,omitempty"`
}

// IntegrationInfo is one entry of list_integrations and the contents of a
// workbench://integration/<name> resource.
type IntegrationInfo struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	AuthMode    string   `json:"authMode"`
	ToolCount   int      `json:"toolCount"`
	Logo        string   `json:"logo,omitempty"`
	Categories  []string `json:"categories,omitempty"`
	Connected   bool     `json:"connected"`
	Curl        bool     `json:"curl"`
	Custom      bool     `json:"custom,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// IntegrationsOutput is the output of list_integrations.
type IntegrationsOutput struct {
	Integrations []IntegrationInfo `json:"integrations"`
}

// WhoamiOutput is the output of whoami.
type WhoamiOutput = Principal

// Search runs search_tools.
func (t *Tools) Search(ctx context.Context, p Principal, in SearchInput) (*SearchOutput, error) {
	c := t.current(ctx, p)
	v := c.view
	if in.Integration != "" {
		if _, ok := v.Integration(in.Integration); !ok {
			return nil, unknownIntegration(v, in.Integration)
		}
	}
	page, err := c.searchIndex().Search(search.Query{
		Text: in.Query, Integration: in.Integration, Limit: in.Limit, Cursor: in.Cursor,
	})
	if errors.Is(err, search.ErrBadCursor) {
		return nil, &Error{Code: failure.InvalidArguments, Message: "cursor was not returned by search_tools for this query; search again without a cursor",
			Problems: []argcheck.Problem{{Path: "$.cursor", Message: err.Error()}}}
	}
	if err != nil {
		return nil, err
	}
	connected := t.connectedFunc(ctx, p)
	out := &SearchOutput{Hits: make([]SearchHit, 0, len(page.Docs)), Total: page.Total, NextCursor: page.NextCursor}
	for _, d := range page.Docs {
		tool, ok := v.Tool(d.Slug)
		if !ok {
			continue
		}
		out.Hits = append(out.Hits, SearchHit{
			Slug:        d.Slug,
			Integration: d.Integration,
			Title:       toolTitle(tool.Spec),
			Description: oneLine(tool.Spec.Description),
			Connected:   connected(tool.Integration),
		})
	}
	return out, nil
}

// GetToolSchema runs get_tool_schema.
func (t *Tools) GetToolSchema(ctx context.Context, p Principal, slug string) (*ToolSchema, error) {
	c := t.current(ctx, p)
	tool, ok := c.view.Tool(slug)
	if !ok {
		return nil, unknownTool(c, slug)
	}
	connected := t.connectedFunc(ctx, p)(tool.Integration)
	s := &ToolSchema{
		Slug:         tool.Spec.Slug,
		Integration:  tool.Integration.Name,
		Title:        toolTitle(tool.Spec),
		Description:  tool.Spec.Description,
		InputSchema:  tool.Spec.InputSchema,
		OutputSchema: tool.Spec.OutputSchema,
		Annotations: Annotations{
			ReadOnly:    tool.Spec.Annotations.ReadOnly,
			Destructive: tool.Spec.Annotations.Destructive,
			Idempotent:  tool.Spec.Annotations.Idempotent,
			OpenWorld:   tool.Spec.Annotations.OpenWorld,
		},
		Connected: connected,
	}
	if !connected {
		s.Fix = notConnected(s.Integration).Fix
	}
	return s, nil
}

// Whoami runs whoami.
func (t *Tools) Whoami(p Principal) *WhoamiOutput {
	out := p
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	return &out
}

// ListIntegrations runs list_integrations.
func (t *Tools) ListIntegrations(ctx context.Context, p Principal) (*IntegrationsOutput, error) {
	connected := t.connectedFunc(ctx, p)
	ins := t.current(ctx, p).view.Integrations()
	out := &IntegrationsOutput{Integrations: make([]IntegrationInfo, 0, len(ins))}
	for _, in := range ins {
		out.Integrations = append(out.Integrations, integrationInfo(in, connected(in)))
	}
	return out, nil
}

// Integration returns one list_integrations entry.
func (t *Tools) Integration(ctx context.Context, p Principal, name string) (*IntegrationInfo, error) {
	v := t.current(ctx, p).view
	in, ok := v.Integration(name)
	if !ok {
		return nil, unknownIntegration(v, name)
	}
	info := integrationInfo(in, t.connectedFunc(ctx, p)(in))
	return &info, nil
}

func integrationInfo(in *registry.Integration, connected bool) IntegrationInfo {
	m := in.Manifest()
	info := IntegrationInfo{
		Name:        m.Name,
		Title:       m.DisplayTitle(),
		Description: m.Description,
		Version:     m.Version,
		AuthMode:    m.Auth.Mode,
		ToolCount:   len(m.Tools),
		Categories:  m.Categories,
		Connected:   connected,
		Curl:        m.Proxy != nil,
		Custom:      in.Custom,
		Error:       in.Problem,
	}
	// Inline data: logos can be 64 KiB; agents get URLs only.
	if strings.HasPrefix(m.Logo, "https://") {
		info.Logo = m.Logo
	}
	return info
}

// connectedFunc returns a per-request memo of whether p can use an
// integration: auth mode none always, otherwise when Connections says so.
// A failing connection service counts as not connected and is logged.
func (t *Tools) connectedFunc(ctx context.Context, p Principal) func(*registry.Integration) bool {
	memo := map[string]bool{}
	return func(in *registry.Integration) bool {
		ok, _ := t.connected(ctx, p, in, memo)
		return ok
	}
}

// connected reports whether p can use in, consulting and filling memo.
func (t *Tools) connected(ctx context.Context, p Principal, in *registry.Integration, memo map[string]bool) (bool, error) {
	if in.Manifest().Auth.Mode == manifest.ModeNone {
		return true, nil
	}
	if ok, seen := memo[in.Name]; seen {
		return ok, nil
	}
	if t.opts.Connections == nil {
		return false, nil
	}
	ok, err := t.opts.Connections.Connected(ctx, p.UserID, in.Name)
	if err != nil {
		t.logger.Warn("checking a connection", "user", p.UserID, "integration", in.Name, "err", err)
		return false, err
	}
	if memo != nil {
		memo[in.Name] = ok
	}
	return ok, nil
}

func unknownTool(c *viewCache, slug string) *Error {
	return &Error{
		Code:        failure.UnknownTool,
		Message:     fmt.Sprintf("there is no tool %q; use search_tools to find one", truncate(slug, 128)),
		Suggestions: c.searchIndex().Closest(slug, 3),
	}
}

func unknownIntegration(v *registry.Snapshot, name string) *Error {
	var names []string
	for _, in := range v.Integrations() {
		names = append(names, in.Name)
	}
	return &Error{
		Code:        failure.UnknownIntegration,
		Message:     fmt.Sprintf("there is no integration %q; list_integrations shows them all", truncate(name, 64)),
		Suggestions: closestNames(name, names, 3),
	}
}

// closestNames ranks names by shared prefix and then edit distance.
func closestNames(name string, names []string, n int) []string {
	ix := search.NewIndex(func() []search.Doc {
		docs := make([]search.Doc, len(names))
		for i, nm := range names {
			docs[i] = search.Doc{Slug: nm}
		}
		return docs
	}())
	return ix.Closest(name, n)
}

func toolTitle(s *manifest.Tool) string {
	if s.Title != "" {
		return s.Title
	}
	return s.Slug
}

// oneLine is the first line of a description, at most 200 characters.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return truncate(s, 200)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
