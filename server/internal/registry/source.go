package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// ErrNotDir is wrapped when a plugin directory is missing or not a directory.
var ErrNotDir = errors.New("not a directory")

// Source is one plugin file to load.
type Source struct {
	Path     string // the .wasm file
	Builtin  bool   // shipped with Workbench (plugins-wasm) rather than added by the operator
	Uploaded bool   // uploaded through the admin API; Path is where the server keeps it
}

// Discover lists the plugin files to load: the built-in plugins
// <builtinDir>/*/*.wasm, then the operator's <pluginsDir>/*.wasm, each group
// sorted by path. An empty directory name is skipped; a named directory that
// does not exist is an error wrapping ErrNotDir.
func Discover(builtinDir, pluginsDir string) ([]Source, error) {
	var sources []Source
	for _, group := range []struct {
		dir     string
		pattern string
		builtin bool
	}{
		{builtinDir, filepath.Join("*", "*.wasm"), true},
		{pluginsDir, "*.wasm", false},
	} {
		if group.dir == "" {
			continue
		}
		paths, err := globDir(group.dir, group.pattern)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			sources = append(sources, Source{Path: p, Builtin: group.builtin})
		}
	}
	return sources, nil
}

// globDir returns the regular files under dir matching pattern, sorted.
func globDir(dir, pattern string) ([]string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin directory %s: %w (%w)", dir, ErrNotDir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("plugin directory %s: %w", dir, ErrNotDir)
	}
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, fmt.Errorf("plugin directory %s: %w", dir, err)
	}
	files := matches[:0]
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			files = append(files, m)
		}
	}
	slices.Sort(files)
	return files, nil
}
