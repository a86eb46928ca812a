package modules

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/manifest"
	"github.com/workbench-dev/workbench/server/internal/registry"
)

// DefaultMaxUploadBytes bounds an uploaded module when Options sets no
// other bound.
const DefaultMaxUploadBytes = 64 << 20

// pageBytes is the size of a wasm memory page.
const pageBytes = 64 << 10

// Catalog is the registry the service reads and changes.
type Catalog interface {
	Current() *registry.Snapshot
	Install(ctx context.Context, loader registry.Loader, src registry.Source, wasm []byte, name string) (registry.Change, error)
	Reload(ctx context.Context, loader registry.Loader, name string) (registry.Change, error)
	Remove(name string) (registry.Change, error)
}

var _ Catalog = (*registry.Registry)(nil)

// Host compiles modules and describes them; *runtime.Host implements it.
type Host interface {
	registry.Loader
	Inspect(ctx context.Context, wasm []byte) *runtime.Report
}

var _ Host = (*runtime.Host)(nil)

// Refresher is told after every change of the catalog; the MCP endpoint
// then tells direct-surface sessions that the tool list changed.
type Refresher interface{ Refresh() }

// nobody is the Refresher of a service without one.
type nobody struct{}

func (nobody) Refresh() {}

// Options configure a Service. Catalog, Host and UploadDir are required.
type Options struct {
	Catalog Catalog
	Host    Host
	// Refresher is told after every change; nil means nobody.
	Refresher Refresher
	// Loading reports that the first load of the plugins is still running;
	// changes are refused meanwhile, since that load replaces the catalog
	// when it ends. Nil means never.
	Loading func() bool
	// UploadDir keeps uploaded modules (created 0700 if missing).
	UploadDir string
	// MaxUploadBytes bounds an upload; 0 means DefaultMaxUploadBytes, and
	// it is at most registry.MaxPluginBytes.
	MaxUploadBytes int64
	// Logger records every change and who made it; nil discards.
	Logger *slog.Logger
}

// Service lists, inspects and changes the loaded modules.
type Service struct {
	opts     Options
	logger   *slog.Logger
	changing sync.Mutex // one change at a time; TryLock refuses the others

	mu        sync.Mutex
	described map[string]description // by sha256, for loaded modules only
}

// description is what a module's bytes say about it.
type description struct {
	imports, exports []runtime.Func
}

// New returns a service; it creates UploadDir.
func New(opts Options) (*Service, error) {
	if opts.Catalog == nil || opts.Host == nil || opts.UploadDir == "" {
		return nil, errors.New("modules: Catalog, Host and UploadDir are required")
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = DefaultMaxUploadBytes
	}
	opts.MaxUploadBytes = min(opts.MaxUploadBytes, registry.MaxPluginBytes)
	if opts.Loading == nil {
		opts.Loading = func() bool { return false }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Refresher == nil {
		opts.Refresher = nobody{}
	}
	if err := os.MkdirAll(opts.UploadDir, 0o700); err != nil {
		return nil, fmt.Errorf("modules: upload directory: %w", err)
	}
	return &Service{opts: opts, logger: opts.Logger, described: map[string]description{}}, nil
}

// Sources of a module.
const (
	SourceBuiltin = "built-in"
	SourcePlugins = "PLUGINS_DIR"
	SourceUpload  = "upload"
)

// Latency are latency quantiles in milliseconds, estimated from the
// runtime's histogram (runtime.LatencyBounds).
type Latency struct {
	P50 float64 `json:"p50Ms"`
	P95 float64 `json:"p95Ms"`
	P99 float64 `json:"p99Ms"`
}

// Counters are the call counters of a module or a tool.
type Counters struct {
	Calls        uint64                  `json:"calls"`
	Errors       uint64                  `json:"errors"`
	ErrorsByCode map[failure.Code]uint64 `json:"errorsByCode"`
	Latency      Latency                 `json:"latency"`
}

// Instances are a module's pooled instances and their memory.
type Instances struct {
	Idle        int    `json:"idle"`
	Busy        int    `json:"busy"`
	Users       int    `json:"users"` // users with idle instances
	MemoryPages uint64 `json:"memoryPages"`
	MaxPages    uint64 `json:"maxPages"` // the largest instance
	MemoryBytes uint64 `json:"memoryBytes"`
}

// LoadError is a module that failed to load or reload.
type LoadError struct {
	Name   string    `json:"name,omitempty"` // empty when the manifest could not be read
	Path   string    `json:"path"`
	Source string    `json:"source"`
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

// Module is one loaded module as the list shows it.
type Module struct {
	Name     string    `json:"name"`
	Version  string    `json:"version"`
	Title    string    `json:"title,omitempty"`
	SHA256   string    `json:"sha256"`
	Size     int       `json:"size"`
	ABI      string    `json:"abi"` // workbench_v1 or extism
	Source   string    `json:"source"`
	Path     string    `json:"path"`
	LoadedAt time.Time `json:"loadedAt"`
	Tools    int       `json:"tools"`
	Counters
	HTTPRequests uint64    `json:"httpRequests"`
	EgressDenied uint64    `json:"egressDenied"`
	Instances    Instances `json:"instances"`
	// LoadError is the last failed reload of this module, while the
	// version above keeps serving.
	LoadError *LoadError `json:"loadError,omitempty"`
}

// List is every loaded module and every module that failed to load.
type List struct {
	Modules []Module    `json:"modules"`
	Broken  []LoadError `json:"broken"`
	Natives []string    `json:"natives"` // integrations built into the server
}

// ToolCounters are one tool's counters.
type ToolCounters struct {
	Slug string `json:"slug"`
	Counters
}

// RecentError is one of a module's last failed calls.
type RecentError struct {
	At   time.Time    `json:"at"`
	Tool string       `json:"tool"`
	Code failure.Code `json:"code"`
}

// Detail is one module in full.
type Detail struct {
	Module
	Manifest *manifest.Manifest `json:"manifest"`
	Limits   runtime.Limits     `json:"limits"`
	Imports  []runtime.Func     `json:"imports"`
	Exports  []runtime.Func     `json:"exports"`
	// DescribeError says why imports and exports are missing (the file
	// changed or disappeared since the module was loaded).
	DescribeError string         `json:"describeError,omitempty"`
	ToolCounters  []ToolCounters `json:"toolCounters"`
	RecentErrors  []RecentError  `json:"recentErrors"`
}

// List returns every module of the current snapshot.
func (s *Service) List() List {
	snap := s.opts.Catalog.Current()
	out := List{Modules: []Module{}, Broken: []LoadError{}, Natives: []string{}}
	failures := map[string]LoadError{}
	for _, f := range snap.Failed() {
		le := loadError(f)
		if _, loaded := snap.Integration(f.Name); f.Name != "" && loaded {
			failures[f.Name] = le
			continue
		}
		out.Broken = append(out.Broken, le)
	}
	for _, in := range snap.Integrations() {
		if in.Plugin == nil {
			out.Natives = append(out.Natives, in.Name)
			continue
		}
		m := module(in, in.Plugin.Stats())
		if le, ok := failures[in.Name]; ok {
			m.LoadError = &le
		}
		out.Modules = append(out.Modules, m)
	}
	return out
}

// Inspect returns the named module in full; registry.ErrUnknown when no
// plugin has the name, registry.ErrNative for a native integration.
func (s *Service) Inspect(ctx context.Context, name string) (Detail, error) {
	snap := s.opts.Catalog.Current()
	in, err := lookup(snap, name)
	if err != nil {
		return Detail{}, err
	}
	st := in.Plugin.Stats()
	d := Detail{Module: module(in, st), Manifest: in.Manifest(), Limits: in.Plugin.Limits(),
		ToolCounters: []ToolCounters{}, RecentErrors: []RecentError{}}
	for _, f := range snap.Failed() {
		if f.Name == name {
			le := loadError(f)
			d.LoadError = &le
		}
	}
	for _, slug := range slices.Sorted(maps.Keys(st.Tools)) {
		d.ToolCounters = append(d.ToolCounters, ToolCounters{Slug: slug, Counters: counters(st.Tools[slug])})
	}
	for _, e := range st.Recent {
		d.RecentErrors = append(d.RecentErrors, RecentError{At: e.At, Tool: e.Tool, Code: e.Code})
	}
	desc, err := s.describe(ctx, snap, in)
	if err != nil {
		d.DescribeError = err.Error()
	}
	d.Imports, d.Exports = desc.imports, desc.exports
	return d, nil
}

// lookup finds a plugin by name.
func lookup(snap *registry.Snapshot, name string) (*registry.Integration, error) {
	in, ok := snap.Integration(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %q", registry.ErrUnknown, name)
	case in.Plugin == nil:
		return nil, fmt.Errorf("%w: %s is built into the server", registry.ErrNative, name)
	}
	return in, nil
}

// describe lists the module's imports and exports, reading its file again
// the first time: the runtime keeps the compiled code, not the bytes.
func (s *Service) describe(ctx context.Context, snap *registry.Snapshot, in *registry.Integration) (description, error) {
	s.mu.Lock()
	d, ok := s.described[in.SHA256]
	s.mu.Unlock()
	if ok {
		return d, nil
	}
	wasm, err := os.ReadFile(in.Path)
	if err != nil {
		return description{}, fmt.Errorf("cannot read %s again: %w", in.Path, err)
	}
	if sum := sha256.Sum256(wasm); hex.EncodeToString(sum[:]) != in.SHA256 {
		return description{}, fmt.Errorf("%s changed since the module was loaded; reload it to see its imports and exports", in.Path)
	}
	r := s.opts.Host.Inspect(ctx, wasm)
	d = description{imports: r.Imports, exports: r.Exports}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Keep descriptions of loaded modules only, so the cache stays as small
	// as the catalog.
	loaded := map[string]bool{}
	for _, other := range snap.Integrations() {
		loaded[other.SHA256] = true
	}
	maps.DeleteFunc(s.described, func(sum string, _ description) bool { return !loaded[sum] })
	s.described[in.SHA256] = d
	return d, nil
}

// module is the list entry of a plugin.
func module(in *registry.Integration, st runtime.Stats) Module {
	m := in.Manifest()
	return Module{
		Name: in.Name, Version: m.Version, Title: m.Title, SHA256: in.SHA256, Size: in.Size,
		ABI: in.Plugin.ABI(), Source: source(in.Builtin, in.Uploaded), Path: in.Path, LoadedAt: in.LoadedAt,
		Tools: len(m.Tools), Counters: counters(st.CallStats), HTTPRequests: st.HTTPRequests, EgressDenied: st.EgressDenied,
		Instances: Instances{Idle: st.InstancesIdle, Busy: st.InstancesBusy, Users: st.PoolUsers,
			MemoryPages: st.MemoryPages, MaxPages: st.MaxPages, MemoryBytes: st.MemoryPages * pageBytes},
	}
}

func counters(c runtime.CallStats) Counters {
	ms := func(q float64) float64 { return float64(c.Latency.Quantile(q)) / float64(time.Millisecond) }
	return Counters{Calls: c.Calls, Errors: c.Errors, ErrorsByCode: c.ErrorsByCode,
		Latency: Latency{P50: ms(0.5), P95: ms(0.95), P99: ms(0.99)}}
}

func source(builtin, uploaded bool) string {
	switch {
	case builtin:
		return SourceBuiltin
	case uploaded:
		return SourceUpload
	}
	return SourcePlugins
}

func loadError(f registry.Failure) LoadError {
	return LoadError{Name: f.Name, Path: f.Path, Source: source(f.Builtin, false), Error: f.Err.Error(), At: f.At}
}

// Outcome is what a load, reload or unload did.
type Outcome struct {
	// Module is the module serving now; nil after an unload.
	Module *Module `json:"module,omitempty"`
	// Replaced is the version that served before; nil when the module is new.
	Replaced *Module `json:"replaced,omitempty"`
}

// errLoading refuses changes while the first load runs.
var errLoading = errors.New("plugins are still loading; retry when /readyz answers 200")

// errBusy refuses a change while another runs.
var errBusy = errors.New("another load, reload or unload is running; retry when it has finished")

// begin takes the change slot, refusing at once when another change holds
// it or the first load still runs; call the returned function when done.
func (s *Service) begin() (func(), error) {
	if s.opts.Loading() {
		return nil, errLoading
	}
	if !s.changing.TryLock() {
		return nil, errBusy
	}
	return s.changing.Unlock, nil
}

// Reload reads the named module's file again and swaps the new version in.
func (s *Service) Reload(ctx context.Context, name, by string) (Outcome, error) {
	done, err := s.begin()
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	ch, err := s.opts.Catalog.Reload(ctx, s.opts.Host, name)
	if err != nil {
		s.logger.Warn("module reload failed", "module", name, "by", by, "err", err)
		return Outcome{}, err
	}
	return s.changed(ch, "reloaded", by), nil
}

// Unload removes the named module; calls in flight finish on it.
func (s *Service) Unload(name, by string) (Outcome, error) {
	done, err := s.begin()
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	ch, err := s.opts.Catalog.Remove(name)
	if err != nil {
		return Outcome{}, err
	}
	return s.changed(ch, "unloaded", by), nil
}

// Load reads a module from body (at most MaxUploadBytes), keeps it in
// UploadDir under its sha256 and installs it in place of the module of the
// same name, if there is one.
func (s *Service) Load(ctx context.Context, body io.Reader, by string) (Outcome, error) {
	done, err := s.begin()
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	wasm, err := io.ReadAll(io.LimitReader(body, s.opts.MaxUploadBytes+1))
	switch {
	case err != nil:
		return Outcome{}, fmt.Errorf("%w: %w", errUnreadable, err)
	case int64(len(wasm)) > s.opts.MaxUploadBytes:
		return Outcome{}, s.tooLarge()
	case !bytes.HasPrefix(wasm, []byte("\x00asm")):
		return Outcome{}, fmt.Errorf("%w: the body is not a WebAssembly module (it does not start with \\0asm)", errNotWasm)
	}
	sum := sha256.Sum256(wasm)
	path := filepath.Join(s.opts.UploadDir, hex.EncodeToString(sum[:])+".wasm")
	if err := writeFile(path, wasm); err != nil {
		return Outcome{}, fmt.Errorf("%w: %w", errStorage, err)
	}
	ch, err := s.opts.Catalog.Install(ctx, s.opts.Host, registry.Source{Path: path, Uploaded: true}, wasm, "")
	if err != nil {
		s.removeUnused(path)
		s.logger.Warn("module upload refused", "sha256", hex.EncodeToString(sum[:]), "by", by, "err", err)
		return Outcome{}, err
	}
	return s.changed(ch, "loaded", by), nil
}

// tooLarge is the error of an upload over MaxUploadBytes.
func (s *Service) tooLarge() error {
	return fmt.Errorf("%w: the upload is over the limit of %d bytes", errTooLarge, s.opts.MaxUploadBytes)
}

// Errors of an upload.
var (
	errTooLarge   = errors.New("module too large")
	errUnreadable = errors.New("the upload could not be read")
)

// errNotWasm marks an upload that is not WebAssembly at all.
var errNotWasm = errors.New("not WebAssembly")

// errStorage marks a failure to keep an upload: the server's fault.
var errStorage = errors.New("keeping the uploaded module")

// changed tells the refresher, drops an uploaded file no longer used and
// logs the change.
func (s *Service) changed(ch registry.Change, what, by string) Outcome {
	s.opts.Refresher.Refresh()
	var out Outcome
	attrs := []any{"by", by}
	if ch.New != nil {
		m := module(ch.New, ch.New.Plugin.Stats())
		out.Module = &m
		attrs = append(attrs, "module", m.Name, "version", m.Version, "sha256", m.SHA256, "source", m.Source)
	}
	if ch.Old != nil {
		m := module(ch.Old, ch.Old.Plugin.Stats())
		out.Replaced = &m
		attrs = append(attrs, "old_module", m.Name, "old_version", m.Version, "old_sha256", m.SHA256)
		if ch.Old.Uploaded {
			s.removeUnused(ch.Old.Path)
		}
	}
	s.logger.Info("module "+what, attrs...)
	return out
}

// removeUnused deletes an uploaded file unless a loaded module uses it.
func (s *Service) removeUnused(path string) {
	for _, in := range s.opts.Catalog.Current().Integrations() {
		if in.Path == path {
			return
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logger.Warn("cannot remove an unused uploaded module", "path", path, "err", err)
	}
}

// writeFile writes b to path (0600) through a temporary file and a rename.
func writeFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
