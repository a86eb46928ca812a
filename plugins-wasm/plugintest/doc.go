// Package plugintest is the harness the plugin test packages share to run
// a built plugin .wasm in the real runtime: reading the module, building a
// host (memory credentials, map settings, an egress client with the options
// a test needs), loading, calling a tool and decoding its output or its
// *failure.Error, keeping the records a plugin logs, and recording the
// requests a fake API receives.
//
// It owns no fake API and no assertion about any plugin; those stay in the
// packages that test one plugin.
package plugintest
