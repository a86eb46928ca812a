// Package extism runs plugins built with Extism's PDKs (docs/abi.md,
// section 8) through github.com/extism/go-sdk: it implements runtime.ABI,
// which the server and the CLI hand to the host in runtime.Config.Extism.
//
// It offers such plugins one way out, the workbench_http_request host
// function, which goes through runtime.HTTPRequest (credential injection,
// egress policy, limits); Extism's own http_request reaches no host.
//
// The package exists so that go-sdk, with the protobuf and OpenTelemetry
// packages it imports, stays out of the core runtime's build. It holds no
// policy of its own: limits, pools, counters and error codes are the host's.
package extism
