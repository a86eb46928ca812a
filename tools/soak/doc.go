// Package soak drives a real workbench binary with mixed traffic from
// several users (meta-tools, a wasm plugin, a native integration, the JSON
// API, health checks and a trickle of wrong-password sign-ins) and checks
// that nothing unexpected fails, that memory stays flat and what the p99
// is. `make test` runs a short campaign; `make soak` the long one
// (SOAK_DURATION, SOAK_RPS). Nothing imports this package.
package soak
