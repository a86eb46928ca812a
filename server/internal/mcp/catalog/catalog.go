package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

// Caller runs one tool of an integration; *runtime.Plugin implements it.
// Every failure is a *failure.Error.
type Caller interface {
	Call(ctx context.Context, c toolcall.Call) (json.RawMessage, error)
}

var _ Caller = (*runtime.Plugin)(nil)

// Integration is one loaded integration.
type Integration struct {
	Manifest *manifest.Manifest
	Builtin  bool
	Caller   Caller
}

// Name returns the integration's name.
func (i *Integration) Name() string { return i.Manifest.Name }

// Tool is one tool and the integration that provides it.
type Tool struct {
	Spec        *manifest.Tool
	Integration *Integration
}

// View is an immutable index of integrations and tools. Callers must not
// modify the slices or values it returns.
type View struct {
	integrations []*Integration // sorted by name
	byName       map[string]*Integration
	tools        []Tool // sorted by slug
	bySlug       map[string]Tool
}

// NewView indexes integrations. Two integrations with the same name or two
// tools with the same slug are an error.
func NewView(integrations []*Integration) (*View, error) {
	v := &View{byName: map[string]*Integration{}, bySlug: map[string]Tool{}}
	for _, in := range integrations {
		if in == nil || in.Manifest == nil || in.Caller == nil {
			return nil, fmt.Errorf("catalog: integration without a manifest or caller")
		}
		if _, dup := v.byName[in.Name()]; dup {
			return nil, fmt.Errorf("catalog: integration %q is listed twice", in.Name())
		}
		v.byName[in.Name()] = in
		v.integrations = append(v.integrations, in)
		for i := range in.Manifest.Tools {
			t := Tool{Spec: &in.Manifest.Tools[i], Integration: in}
			if prev, dup := v.bySlug[t.Spec.Slug]; dup {
				return nil, fmt.Errorf("catalog: tool %q is provided by %s and %s", t.Spec.Slug, prev.Integration.Name(), in.Name())
			}
			v.bySlug[t.Spec.Slug] = t
			v.tools = append(v.tools, t)
		}
	}
	slices.SortFunc(v.integrations, func(a, b *Integration) int { return strings.Compare(a.Name(), b.Name()) })
	slices.SortFunc(v.tools, func(a, b Tool) int { return strings.Compare(a.Spec.Slug, b.Spec.Slug) })
	return v, nil
}

// Integrations returns every integration sorted by name.
func (v *View) Integrations() []*Integration { return v.integrations }

// Integration returns the integration with the given name.
func (v *View) Integration(name string) (*Integration, bool) {
	in, ok := v.byName[name]
	return in, ok
}

// Tools returns every tool sorted by slug.
func (v *View) Tools() []Tool { return v.tools }

// Tool returns the tool with the given slug.
func (v *View) Tool(slug string) (Tool, bool) {
	t, ok := v.bySlug[slug]
	return t, ok
}

// Source supplies the current view.
type Source interface {
	// Current returns the current view for reading metadata. Its tools may
	// be closed at any time; call them through Acquire.
	Current() *View
	// Acquire returns the current view with a lease: its tools stay callable
	// until release is called. release is safe to call more than once.
	Acquire() (v *View, release func())
}
