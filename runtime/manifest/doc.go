// Package manifest defines the plugin manifest of ABI v1 (docs/abi.md, section 4)
// and validates it strictly. It knows nothing about wasm or the host.
package manifest
