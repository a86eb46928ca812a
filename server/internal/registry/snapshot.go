package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/toolcall"
)

// pluginCloseTimeout bounds closing a retired snapshot's plugins. No call is
// in flight by then (every lease is released), so it only covers releasing
// instances and compiled code.
const pluginCloseTimeout = 30 * time.Second

// Integration is one integration of the catalog: a wasm plugin and the file
// it came from, or a native service built into the server.
type Integration struct {
	Name     string
	Path     string // the plugin file; empty for a native integration
	Builtin  bool   // shipped with Workbench: every native, and the plugins of BUILTIN_PLUGINS_DIR
	Uploaded bool   // added through the admin API rather than found in a directory
	// Custom marks a user's custom app, resolved per caller beside the
	// shared snapshot (Snapshot.With); its arguments go to the app as they
	// are, and its tools are addressed <app>__<tool> even when not listed.
	Custom bool
	// Problem says why a custom app has no tools now (it cannot be
	// reached, say); empty otherwise.
	Problem string
	// Caller runs the integration's tools; for a plugin it is Plugin.
	Caller toolcall.Caller
	// Plugin is the loaded wasm plugin; nil for a native integration.
	Plugin *runtime.Plugin
	// SHA256 (hex) and Size describe the module's bytes; LoadedAt is when
	// it was compiled. All zero for a native integration.
	SHA256   string
	Size     int
	LoadedAt time.Time
	manifest *manifest.Manifest

	// holders counts the snapshots that hold the plugin; the last one to
	// retire closes it.
	holders atomic.Int64
}

var _ toolcall.Caller = (*runtime.Plugin)(nil)

// Native returns a native integration: a Go service that runs the tools m
// declares. Manifest validation reserves the natives' names, so no plugin
// can take them.
func Native(m *manifest.Manifest, c toolcall.Caller) *Integration {
	return &Integration{Name: m.Name, Builtin: true, Caller: c, manifest: m}
}

// plugin returns the integration of a plugin compiled from wasm.
func plugin(p *runtime.Plugin, src Source, wasm []byte, loadedAt time.Time) *Integration {
	m := p.Manifest()
	sum := sha256.Sum256(wasm)
	return &Integration{Name: m.Name, Path: src.Path, Builtin: src.Builtin, Uploaded: src.Uploaded, Caller: p, Plugin: p,
		SHA256: hex.EncodeToString(sum[:]), Size: len(wasm), LoadedAt: loadedAt, manifest: m}
}

// source is the source the integration's plugin was loaded from.
func (i *Integration) source() Source {
	return Source{Path: i.Path, Builtin: i.Builtin, Uploaded: i.Uploaded}
}

// origin says where the integration comes from, for errors.
func (i *Integration) origin() string {
	switch {
	case i.Plugin == nil:
		return "the server (native)"
	case i.Uploaded:
		return "an upload (sha256 " + i.SHA256 + ")"
	}
	return i.Path
}

// Manifest returns the integration's validated manifest. Callers must not
// modify it.
func (i *Integration) Manifest() *manifest.Manifest { return i.manifest }

// Tool is one tool and the integration that provides it.
type Tool struct {
	Integration *Integration
	Spec        *manifest.Tool
}

// Failure is a plugin that did not make it into the snapshot.
type Failure struct {
	Path    string
	Builtin bool
	Name    string // the integration name when the manifest was read, else ""
	Err     error
	At      time.Time // when loading it failed
}

// Snapshot is the one immutable index of integrations and tools: the wasm
// plugins and the native integrations. Its metadata (names, manifests,
// failures) may be read at any time; calling a tool requires a lease from
// Registry.Acquire so its plugin stays open.
type Snapshot struct {
	integrations []*Integration // sorted by name
	byName       map[string]*Integration
	tools        []Tool // sorted by slug
	bySlug       map[string]Tool
	failed       []Failure // in source order

	// refs counts the owner's reference (Swap or Close hands it over) plus
	// every lease. At zero the plugins are closed and refs never rises again.
	refs    atomic.Int64
	claimed atomic.Bool // passed to Swap or Close already
	logger  *slog.Logger
}

// ErrClaimed is returned when a snapshot is passed to Swap or Close twice.
var ErrClaimed = errors.New("snapshot was already swapped in or closed")

func newSnapshot(integrations []*Integration, failed []Failure) *Snapshot {
	s := &Snapshot{
		byName: make(map[string]*Integration, len(integrations)),
		bySlug: map[string]Tool{},
		failed: failed,
	}
	for _, in := range integrations {
		if in.Plugin != nil {
			in.holders.Add(1)
		}
		s.integrations = append(s.integrations, in)
		s.byName[in.Name] = in
		m := in.Manifest()
		for i := range m.Tools {
			t := Tool{Integration: in, Spec: &m.Tools[i]}
			s.tools = append(s.tools, t)
			s.bySlug[t.Spec.Slug] = t
		}
	}
	slices.SortFunc(s.integrations, func(a, b *Integration) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.tools, func(a, b Tool) int { return strings.Compare(a.Spec.Slug, b.Spec.Slug) })
	s.refs.Store(1)
	return s
}

// Integration returns the integration with the given name.
func (s *Snapshot) Integration(name string) (*Integration, bool) {
	in, ok := s.byName[name]
	return in, ok
}

// Integrations returns every loaded integration sorted by name.
func (s *Snapshot) Integrations() []*Integration { return slices.Clone(s.integrations) }

// Tool returns the tool with the given slug and the integration providing it.
func (s *Snapshot) Tool(slug string) (Tool, bool) {
	t, ok := s.bySlug[slug]
	return t, ok
}

// Tools returns every tool sorted by slug.
func (s *Snapshot) Tools() []Tool { return slices.Clone(s.tools) }

// Failed returns the plugins that failed to load, in load order (built-in
// first, then by path), each with its reason.
func (s *Snapshot) Failed() []Failure { return slices.Clone(s.failed) }

// Close releases a snapshot that was never passed to Swap, for instance one
// built by Load and then discarded; its plugins close once no lease is left.
func (s *Snapshot) Close() error {
	if !s.claimed.CompareAndSwap(false, true) {
		return ErrClaimed
	}
	s.unref()
	return nil
}

// tryRef takes a lease unless the snapshot has already drained.
func (s *Snapshot) tryRef() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unref drops one reference. With the last one the snapshot retires and
// closes the plugins no other snapshot holds.
func (s *Snapshot) unref() {
	if s.refs.Add(-1) != 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pluginCloseTimeout)
	defer cancel()
	for _, in := range s.integrations {
		if in.Plugin == nil || in.holders.Add(-1) != 0 {
			continue // natives live as long as the server; shared plugins as long as a snapshot holds them
		}
		if err := in.Plugin.Close(ctx); err != nil && s.logger != nil {
			s.logger.Warn("closing retired plugin", "integration", in.Name, "path", in.Path, "err", err)
		}
	}
}
