// Package runtime is the wasm plugin host: it compiles plugins, reads and
// validates their manifests, pools instances per user, enforces limits and
// serves the host imports of ABI v1 (docs/abi.md), including the
// credential-injecting http_request.
//
// It imports only the standard library, wazero and small leaf packages. It
// never imports the web framework, the database or the browser driver: the
// server supplies credentials, settings and logging through the interfaces
// declared here and in runtime/credential.
package runtime
