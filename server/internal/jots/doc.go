// Package jots owns jots, the static sites agents deploy: the built-in
// `jots` integration's tools (deploy, update, list, delete), the single-use
// upload endpoint, and serving /j/<name>/ from the store under a sandbox
// Content-Security-Policy with an optional password gate. Files live in the
// store so every replica serves every jot; this package keeps only caches.
// Tarball extraction is package tarball's job. It imports no sibling
// service: the server wires it to the store and the MCP catalog.
package jots
