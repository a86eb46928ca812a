// Package server wires Workbench together: it reads the configuration,
// opens the store with the services over it (connections, connect
// handshakes, the portal), creates the wasm runtime host, loads the plugins
// into the registry and serves the HTTP surface. Everything it assembles
// lives under server/internal; this package owns Config, New and Run, and
// Admin, the operator's handle on the store that the CLI uses.
package server
