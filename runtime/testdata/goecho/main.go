// Command goecho is a Go plugin whose one tool echoes a typed value back. The
// runtime benchmarks use it to measure a Go plugin's round trip, instance cost
// and idle memory against the same work done natively.
package main

import pdk "github.com/workbench-dev/workbench/pdk/go"

// Payload is the 64 B round-trip value of the benchmarks.
type Payload struct {
	Owner  string `json:"owner"`
	Repo   string `json:"repo"`
	Number int    `json:"number"`
	X      int    `json:"x"`
}

var echo = pdk.Tool("goecho_echo", "Returns its input unchanged.",
	func(_ pdk.Context, in Payload) (Payload, error) { return in, nil }, pdk.ReadOnly())

func init() {
	pdk.Register(pdk.Plugin{Name: "goecho", Version: "1.0.0", Description: "Echo plugin for runtime benchmarks."}, echo)
}

//go:wasmexport goecho_echo
func goechoEcho(ptr, size uint32) uint32 { return echo.Run(ptr, size) }

func main() {}
