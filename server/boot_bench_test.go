package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkBoot measures a server start with every built-in plugin over a
// warm compilation cache: from Run until the registry holds the plugins.
func BenchmarkBoot(b *testing.B) {
	builtin := filepath.Join("..", "plugins-wasm")
	if matches, _ := filepath.Glob(filepath.Join(builtin, "*", "*.wasm")); len(matches) == 0 {
		b.Fatal("no built plugins: run `make plugins` first (make bench does)")
	}
	dataDir := b.TempDir()
	boot := func() time.Duration {
		cfg, err := ConfigFromEnv(func(string) string { return "" })
		if err != nil {
			b.Fatal(err)
		}
		cfg.ListenAddr, cfg.DataDir, cfg.BuiltinPluginsDir = "127.0.0.1:0", dataDir, builtin
		s, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- s.Run(ctx) }()
		<-s.Ready()
		for h := s.PluginHealth(); h.Loading || h.Loaded == 0; h = s.PluginHealth() {
			if h.Failed > 0 {
				b.Fatalf("a built-in plugin failed to load: %+v", h)
			}
			time.Sleep(time.Millisecond)
		}
		elapsed := time.Since(start)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		return elapsed
	}
	boot() // fills the compilation and manifest caches
	var total time.Duration
	for b.Loop() {
		total += boot()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/boot")
}
