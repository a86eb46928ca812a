// Command goplugin is the smallest Go plugin of ABI v1, written without the
// PDK: integration "goplugin" with one tool, goplugin_echo, that returns its
// input. The CLI tests build it with `workbench plugin build`.
package main

import "unsafe"

const manifestJSON = `{"abi":1,"name":"goplugin","version":"0.0.1","description":"Echo test plugin built from Go.",` +
	`"auth":{"mode":"none"},"tools":[{"slug":"goplugin_echo","description":"Returns its input.","inputSchema":{"type":"object"}}]}`

//go:wasmimport workbench_v1 output_set
func outputSet(ptr, size uint32)

// input keeps the latest input buffer reachable until the tool reads it.
var input []byte

//go:wasmexport wb_alloc
func wbAlloc(size uint32) uint32 {
	input = make([]byte, size)
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport manifest
func manifest() int32 {
	output([]byte(manifestJSON))
	return 0
}

//go:wasmexport goplugin_echo
func echo(ptr, size uint32) int32 {
	output(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(ptr))), size))
	return 0
}

func output(b []byte) {
	outputSet(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)))
}

func main() {}
