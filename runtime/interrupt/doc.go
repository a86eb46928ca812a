// Package interrupt makes a WebAssembly module stoppable without help from
// the engine: Inject rewrites the module so that it counts down a budget at
// every loop header and at the entry of every function that calls or loops,
// and calls one host import when the budget runs out. The host decides in
// that import whether the call goes on (and returns the next budget) or ends
// (by failing the call), and lets other goroutines run.
//
// The package decodes and re-encodes the binary itself. It knows every
// instruction of WebAssembly 2.0 as wazero's CoreFeaturesV2 enables it (MVP,
// mutable globals, multi-value, sign extension, non-trapping conversions,
// bulk memory, reference types, SIMD) and refuses anything else with an
// error naming the opcode and its offset. It checks the structure it needs
// to renumber function indices, not the module's types: the engine
// validates the rewritten module, which keeps every original instruction.
//
// It imports only the standard library, so any host (the plugin runtime,
// the exec workbench's WASI tools) can run modules through it.
package interrupt
