// Package server wires Workbench together: it reads the configuration,
// creates the wasm runtime host, loads the plugins into the registry and
// serves the HTTP surface. Everything it assembles lives under
// server/internal; this package owns only Config, New and Run.
package server
