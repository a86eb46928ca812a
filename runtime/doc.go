// Package runtime is the wasm plugin host: it compiles plugins, reads and
// validates their manifests, pools instances per user, enforces limits and
// serves the host imports of ABI v1 (docs/abi.md), including the
// credential-injecting http_request. Plugins of another ABI (Extism's) run
// through an ABI handed in Config.Extism (runtime/extism), behind the same
// Plugin API.
//
// It builds from the standard library, wazero, golang.org/x/net (through
// runtime/egress), the JSON Schema validator (through runtime/manifest) and
// the leaf package failure, whose codes and sentinels it reports. It never
// imports the web framework, the database, the browser driver or go-sdk:
// the server supplies credentials, settings, logging and the Extism ABI
// through the interfaces declared here and in runtime/credential.
package runtime
