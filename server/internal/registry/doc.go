// Package registry is the in-memory index of loaded integrations by name and
// of their tools by slug. A Snapshot is immutable; the Registry swaps whole
// snapshots atomically, so readers never see a half-built index.
//
// Lifetime of plugins: a Snapshot owns the plugins it was built with and is
// reference counted. Readers that call a plugin hold a lease (Acquire);
// Swap drops the registry's own reference to the old snapshot, and the old
// snapshot's plugins are closed when its last lease is released. A call that
// started on the old snapshot therefore always finishes on a live plugin, and
// once every such call is done the old plugins are gone.
//
// Install, Reload and Remove change one plugin: they build the next snapshot
// from the current one, which shares every other plugin with it. A plugin
// counts the snapshots holding it and closes when the last one retires.
// Writers are serialised; a module is compiled beside the serving plugins
// before the registry is locked, so a slow compile never blocks readers.
//
// The package compiles plugins through the small Loader interface and does
// not log: the server reports what Load found.
package registry
