package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/workbench-dev/workbench/runtime/credential"
	"github.com/workbench-dev/workbench/runtime/egress"
)

// Config configures a Host. Every zero value has a documented default.
type Config struct {
	// CacheDir keeps compiled code on disk across restarts; "" keeps it in memory only.
	CacheDir string
	// Credentials supplies users' credentials; nil means nobody is connected.
	Credentials credential.Source
	// Egress performs plugins' outbound HTTP; nil means a client that refuses private addresses.
	Egress *egress.Client
	// Extism runs plugins built with Extism's PDKs (extism.ABI from
	// runtime/extism); nil refuses them as modules that are not ABI v1.
	Extism ABI
	// Settings supplies operator settings and base URL overrides; nil means none.
	Settings SettingsSource
	// Logger receives plugin logs and host events; nil discards them.
	Logger *slog.Logger
	// Defaults and Ceiling override DefaultLimits and CeilingLimits when non-zero.
	Defaults, Ceiling Limits
	// Pool bounds idle instances; zero fields take the defaults of PoolConfig.
	Pool PoolConfig
}

// PoolConfig bounds the idle instances kept per plugin.
type PoolConfig struct {
	IdleTimeout      time.Duration // default 60s
	MaxIdlePerUser   int           // default 4
	MaxIdlePerPlugin int           // default 256
}

func (c PoolConfig) withDefaults() PoolConfig {
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.MaxIdlePerUser <= 0 {
		c.MaxIdlePerUser = 4
	}
	if c.MaxIdlePerPlugin <= 0 {
		c.MaxIdlePerPlugin = 256
	}
	return c
}

// Host compiles and runs plugins. It is safe for concurrent use.
type Host struct {
	cfg    Config
	cache  wazero.CompilationCache
	logger *slog.Logger

	mu      sync.Mutex
	plugins map[*Plugin]struct{}
	closed  bool

	stopSweep context.CancelFunc
	swept     chan struct{}
}

// NewHost creates a host and starts its idle-instance sweeper; Close stops it.
func NewHost(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.NewClient(egress.Options{})
	}
	if cfg.Credentials == nil {
		cfg.Credentials = credential.NewMemory()
	}
	if cfg.Settings == nil {
		cfg.Settings = MapSettings{}
	}
	if cfg.Defaults == (Limits{}) {
		cfg.Defaults = DefaultLimits
	}
	if cfg.Ceiling == (Limits{}) {
		cfg.Ceiling = CeilingLimits
	}
	cfg.Pool = cfg.Pool.withDefaults()

	cache := wazero.NewCompilationCache()
	if cfg.CacheDir != "" {
		var err error
		if cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir); err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", cfg.CacheDir, err)
		}
	}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	h := &Host{
		cfg:       cfg,
		cache:     cache,
		logger:    cfg.Logger,
		plugins:   map[*Plugin]struct{}{},
		stopSweep: stop,
		swept:     make(chan struct{}),
	}
	go h.sweep(sweepCtx)
	return h, nil
}

// sweep closes idle instances past their idle timeout until ctx ends.
func (h *Host) sweep(ctx context.Context) {
	defer close(h.swept)
	interval := max(h.cfg.Pool.IdleTimeout/4, 100*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			plugins := make([]*Plugin, 0, len(h.plugins))
			for p := range h.plugins {
				plugins = append(plugins, p)
			}
			h.mu.Unlock()
			for _, p := range plugins {
				p.pool.evictIdle(ctx, now.Add(-h.cfg.Pool.IdleTimeout))
			}
		}
	}
}

// newRuntime builds a wazero runtime with WASI and the workbench_v1 host
// module, capped at the given number of memory pages. Compiled code is shared
// through the host's compilation cache. Calls are stopped by the interrupt
// check injected into every module (deadline.go), so wazero's own check
// (WithCloseOnContextDone, an exit to Go at every loop iteration) stays off.
func (h *Host) newRuntime(ctx context.Context, memoryPages uint32) (wazero.Runtime, error) {
	rc := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(h.cache).
		WithMemoryLimitPages(memoryPages)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if _, err := hostModule(rt).Instantiate(ctx); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiate %s: %w", ImportModule, err)
	}
	return rt, nil
}

func (h *Host) track(p *Plugin) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.plugins[p] = struct{}{}
	return nil
}

func (h *Host) untrack(p *Plugin) {
	h.mu.Lock()
	delete(h.plugins, p)
	h.mu.Unlock()
}

// Close closes every plugin loaded by the host, stops the sweeper and
// releases the in-memory compilation cache. Calls in flight are ended.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	plugins := make([]*Plugin, 0, len(h.plugins))
	for p := range h.plugins {
		plugins = append(plugins, p)
	}
	h.mu.Unlock()
	h.stopSweep()
	<-h.swept
	var errs []error
	for _, p := range plugins {
		errs = append(errs, p.Close(ctx))
	}
	errs = append(errs, h.cache.Close(ctx))
	return errors.Join(errs...)
}
