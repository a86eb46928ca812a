// Package modules is the operators' view of the loaded plugins and their
// controls: it lists every module with its counters (calls, errors by code,
// latency quantiles, instances, memory), inspects one (imports, exports,
// manifest, recent errors, per-tool counters), and loads, reloads and
// unloads modules through the registry while calls keep running
// (/api/admin/modules, docs/operators.md).
//
// It reads the catalog and compiles modules only through the small
// interfaces in Options; it keeps no module state of its own beyond the
// uploaded files in its directory and a cache of module descriptions.
package modules
