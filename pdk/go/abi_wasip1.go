//go:build wasip1

package pdk

import (
	"math"
	"runtime"
	"unsafe"
)

// The workbench_v1 host imports of docs/abi.md section 5.

//go:wasmimport workbench_v1 output_set
func importOutputSet(ptr unsafe.Pointer, size uint32)

//go:wasmimport workbench_v1 result_read
func importResultRead(ptr unsafe.Pointer, size uint32) int32

//go:wasmimport workbench_v1 log
func importLog(level int32, ptr unsafe.Pointer, size uint32)

//go:wasmimport workbench_v1 config_get
func importConfigGet(ptr unsafe.Pointer, size uint32) int32

//go:wasmimport workbench_v1 progress
func importProgress(done, total float64, ptr unsafe.Pointer, size uint32)

//go:wasmimport workbench_v1 http_request
func importHTTPRequest(reqPtr unsafe.Pointer, reqLen uint32, bodyPtr unsafe.Pointer, bodyLen uint32) int64

//go:wasmimport workbench_v1 elicit
func importElicit(ptr unsafe.Pointer, size uint32) int32

//go:wasmimport workbench_v1 sample
func importSample(ptr unsafe.Pointer, size uint32) int32

//go:wasmimport workbench_v1 input
func importInput(ptr unsafe.Pointer, size uint32) int32

// hostTalkBack runs elicit ("elicit"), sample ("sample") or input
// ("input"): the pending result on success, the error JSON on failure.
func hostTalkBack(kind string, req []byte) (result, failure []byte) {
	var n int32
	switch kind {
	case "elicit":
		n = importElicit(bytesPtr(req), uint32(len(req)))
	case "sample":
		n = importSample(bytesPtr(req), uint32(len(req)))
	default:
		n = importInput(bytesPtr(req), uint32(len(req)))
	}
	runtime.KeepAlive(req)
	if n < 0 {
		b, ok := readResult(uint32(-int64(n)))
		if !ok {
			return nil, []byte(`{"code":"TOOL_ERROR","message":"could not read the host's error for ` + kind + `"}`)
		}
		return nil, b
	}
	b, ok := readResult(uint32(n))
	if !ok {
		return nil, []byte(`{"code":"TOOL_ERROR","message":"could not read the host's result for ` + kind + `"}`)
	}
	return b, nil
}

// bufferKey is the linear-memory address of buf's first byte: what wb_alloc
// returns and what the host passes back to the tool.
func bufferKey(buf []byte) uint32 {
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}

func bytesPtr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func stringPtr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

func hostOutputSet(b []byte) {
	importOutputSet(bytesPtr(b), uint32(len(b)))
	runtime.KeepAlive(b)
}

// readResult copies the pending result of n bytes into a new slice.
func readResult(n uint32) ([]byte, bool) {
	buf := make([]byte, n)
	if n == 0 {
		return buf, true
	}
	got := importResultRead(bytesPtr(buf), n)
	runtime.KeepAlive(buf)
	return buf, got >= 0 && uint32(got) == n
}

func hostConfigGet(key string) (string, bool) {
	n := importConfigGet(stringPtr(key), uint32(len(key)))
	runtime.KeepAlive(key)
	if n < 0 {
		return "", false
	}
	buf, ok := readResult(uint32(n))
	if !ok {
		return "", false
	}
	return string(buf), true
}

func hostLog(level int32, msg string) {
	importLog(level, stringPtr(msg), uint32(len(msg)))
	runtime.KeepAlive(msg)
}

func hostProgress(done, total float64, msg string) {
	importProgress(done, total, stringPtr(msg), uint32(len(msg)))
	runtime.KeepAlive(msg)
}

// hostHTTPRequest performs http_request. On success it returns the head JSON
// and the body; on failure the error JSON.
func hostHTTPRequest(req, body []byte) (head, respBody, failure []byte) {
	ret := importHTTPRequest(bytesPtr(req), uint32(len(req)), bytesPtr(body), uint32(len(body)))
	runtime.KeepAlive(req)
	runtime.KeepAlive(body)
	if ret < 0 {
		if -ret > math.MaxUint32 {
			return nil, nil, []byte(`{"code":"TOOL_ERROR","message":"http_request returned an impossible error length"}`)
		}
		errJSON, ok := readResult(uint32(-ret))
		if !ok {
			return nil, nil, []byte(`{"code":"TOOL_ERROR","message":"could not read the host's error for http_request"}`)
		}
		return nil, nil, errJSON
	}
	headLen, bodyLen := uint64(ret)>>32, uint64(ret)&0xffffffff
	if headLen+bodyLen > math.MaxUint32 {
		return nil, nil, []byte(`{"code":"TOOL_ERROR","message":"http_request returned an impossible response length"}`)
	}
	all, ok := readResult(uint32(headLen + bodyLen))
	if !ok {
		return nil, nil, []byte(`{"code":"TOOL_ERROR","message":"could not read the host's response for http_request"}`)
	}
	return all[:headLen], all[headLen:], nil
}
