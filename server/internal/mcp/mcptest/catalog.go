package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/mcp/metatools"
	"github.com/workbench-dev/workbench/server/internal/registry"
	"github.com/workbench-dev/workbench/toolcall"
)

// ToolFunc implements one tool.
type ToolFunc func(ctx context.Context, c toolcall.Call) (json.RawMessage, error)

// Funcs is a toolcall.Caller that dispatches to Go functions by slug and
// counts the calls.
type Funcs struct {
	mu    sync.Mutex
	fns   map[string]ToolFunc
	calls map[string]int
}

// NewFuncs returns a caller over fns.
func NewFuncs(fns map[string]ToolFunc) *Funcs {
	return &Funcs{fns: fns, calls: map[string]int{}}
}

// Call implements toolcall.Caller: c.Export, when set, names the function
// (a resource or prompt export), else c.Tool. An unknown name fails as the
// runtime does.
func (f *Funcs) Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error) {
	name := c.Tool
	if c.Export != "" {
		name = c.Export
	}
	f.mu.Lock()
	fn := f.fns[name]
	f.calls[name]++
	f.mu.Unlock()
	if fn == nil {
		return nil, &failure.Error{Code: failure.UnknownTool, Message: "no tool " + name}
	}
	return fn(ctx, c)
}

// Calls returns how often slug was called.
func (f *Funcs) Calls(slug string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[slug]
}

// Echo returns its input.
func Echo(_ context.Context, c toolcall.Call) (json.RawMessage, error) {
	if len(c.Input) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return json.RawMessage(c.Input), nil
}

// Fail returns a tool error with code and message.
func Fail(code failure.Code, message string) ToolFunc {
	return func(context.Context, toolcall.Call) (json.RawMessage, error) {
		return nil, &failure.Error{Code: code, Message: message}
	}
}

// Tool is a manifest tool with an object input schema.
func Tool(slug, title, description, inputSchema string) manifest.Tool {
	if inputSchema == "" {
		inputSchema = `{"type":"object"}`
	}
	return manifest.Tool{Slug: slug, Title: title, Description: description, InputSchema: json.RawMessage(inputSchema)}
}

// Manifest is a valid manifest of integration name with the given auth mode
// (oauth2 integrations get a GitHub-like block) and tools.
func Manifest(name, mode string, tools ...manifest.Tool) *manifest.Manifest {
	m := &manifest.Manifest{
		ABI: 1, Name: name, Version: "1.0.0", Title: name + " (test)",
		Description: "Test integration " + name + ".", Auth: manifest.Auth{Mode: mode}, Tools: tools,
	}
	switch mode {
	case manifest.ModeOAuth2:
		m.Auth.OAuth2 = &manifest.OAuth2{AuthorizeURL: "https://example.com/authorize", TokenURL: "https://example.com/token"}
	case manifest.ModeAPIKey:
		m.Auth.APIKey = &manifest.APIKey{
			Fields:    []manifest.Field{{Name: "api_key", Label: "API key", Secret: true, Required: true}},
			Placement: manifest.Placement{In: "header", Name: "X-Api-Key", Value: "{api_key}"},
		}
	}
	if err := m.Validate(); err != nil {
		panic(fmt.Sprintf("mcptest: invalid manifest %s: %v", name, err))
	}
	return m
}

// Source is a metatools.Catalog whose snapshot tests swap. It counts
// leases.
type Source struct {
	current atomic.Pointer[registry.Snapshot]
	leases  atomic.Int64
}

var _ metatools.Catalog = (*Source)(nil)

// NewSource returns a source over integrations; it panics on a clash.
func NewSource(integrations ...*registry.Integration) *Source {
	s := &Source{}
	s.Set(integrations...)
	return s
}

// Set replaces the snapshot.
func (s *Source) Set(integrations ...*registry.Integration) {
	snap, err := registry.NewSnapshot(integrations...)
	if err != nil {
		panic(err)
	}
	s.current.Store(snap)
}

// Current implements metatools.Catalog.
func (s *Source) Current() *registry.Snapshot { return s.current.Load() }

// Acquire implements metatools.Catalog.
func (s *Source) Acquire() (*registry.Snapshot, func()) {
	s.leases.Add(1)
	return s.current.Load(), sync.OnceFunc(func() { s.leases.Add(-1) })
}

// Leases returns the leases not yet released.
func (s *Source) Leases() int64 { return s.leases.Load() }
