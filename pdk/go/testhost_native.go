//go:build !wasip1

package pdk

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// TestHost is test support: an in-process stand-in for the Workbench host
// that exists only in native builds (GOOS other than wasip1), so that `go
// test` can run a plugin's tools without a wasm runtime. A built plugin always
// talks to the real host in the runtime package; nothing here is compiled into
// it.
//
// TestHost serves the host imports through the same wire formats as the real
// host: config_get from Settings, http_request through HTTP, and it records
// log and progress calls. One TestHost call runs at a time per process.
type TestHost struct {
	// Settings answer config_get.
	Settings map[string]string
	// HTTP answers http_request with the request as the host decoded it.
	// Returning an *Error reports that code to the plugin (EGRESS_DENIED,
	// NOT_CONNECTED, ...); any other error reports UPSTREAM_UNREACHABLE.
	// A nil HTTP refuses every request with EGRESS_DENIED.
	HTTP func(req *Request) (*Response, error)
	// Elicit and Sample answer the elicit and sample imports with the
	// result JSON; an *Error is reported to the plugin with its code, and a
	// nil handler answers UNSUPPORTED, as the host does for a client
	// without the capability.
	Elicit func(req json.RawMessage) (json.RawMessage, error)
	Sample func(req json.RawMessage) (json.RawMessage, error)
	// Input answers the input import: the request is the map of keyed
	// requests, the result the map of results by key. Errors and a nil
	// handler are as for Elicit.
	Input func(requests json.RawMessage) (json.RawMessage, error)

	mu       sync.Mutex
	logs     []LogRecord
	progress []ProgressRecord
	output   []byte
}

// LogRecord is one log call seen by a TestHost.
type LogRecord struct {
	Level   string // debug, info, warn or error
	Message string
}

// ProgressRecord is one progress call seen by a TestHost.
type ProgressRecord struct {
	Done, Total float64
	Message     string
}

// testCalls serialises TestHost calls: the host imports are package-level.
var testCalls sync.Mutex

// activeHost is the TestHost serving the running call, if any.
var activeHost atomic.Pointer[TestHost]

// Call runs tool t with input the way the host does (wb_alloc, copy, the
// tool's export, output_set) and returns the status and the output.
func (h *TestHost) Call(t *ToolDef, input []byte) (status uint32, output []byte) {
	return h.run(func() uint32 {
		var ptr uint32
		if len(input) > 0 {
			ptr = wbAlloc(uint32(len(input)))
			if ptr == 0 {
				return statusError
			}
			inputs.mu.Lock()
			copy(inputs.find(ptr), input)
			inputs.mu.Unlock()
		}
		return t.Run(ptr, uint32(len(input)))
	})
}

// CallExport runs a resource or prompt export body (a function calling
// [ReadResource] or [GetPrompt]) with input the way the host does, and
// returns the status and the output.
func (h *TestHost) CallExport(export func(ptr, size uint32) uint32, input []byte) (status uint32, output []byte) {
	return h.run(func() uint32 {
		var ptr uint32
		if len(input) > 0 {
			ptr = wbAlloc(uint32(len(input)))
			if ptr == 0 {
				return statusError
			}
			inputs.mu.Lock()
			copy(inputs.find(ptr), input)
			inputs.mu.Unlock()
		}
		return export(ptr, uint32(len(input)))
	})
}

// Manifest calls the manifest export and returns its status and output.
func (h *TestHost) Manifest() (status uint32, output []byte) {
	return h.run(manifestExport)
}

func (h *TestHost) run(export func() uint32) (uint32, []byte) {
	testCalls.Lock()
	defer testCalls.Unlock()
	h.mu.Lock()
	h.output = nil
	h.mu.Unlock()
	activeHost.Store(h)
	defer activeHost.Store(nil)
	status := export()
	h.mu.Lock()
	defer h.mu.Unlock()
	return status, h.output
}

// Logs returns the log records seen so far.
func (h *TestHost) Logs() []LogRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LogRecord(nil), h.logs...)
}

// ProgressReports returns the progress calls seen so far.
func (h *TestHost) ProgressReports() []ProgressRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ProgressRecord(nil), h.progress...)
}

// nextKey numbers native input buffers; in wasm the key is the address.
var nextKey atomic.Uint32

func bufferKey([]byte) uint32 {
	for {
		if k := nextKey.Add(1); k != 0 {
			return k
		}
	}
}

func hostOutputSet(b []byte) {
	h := activeHost.Load()
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.output = append([]byte(nil), b...)
}

func hostConfigGet(key string) (string, bool) {
	h := activeHost.Load()
	if h == nil {
		return "", false
	}
	v, ok := h.Settings[key]
	return v, ok
}

var levelNames = map[int32]string{levelDebug: "debug", levelInfo: "info", levelWarn: "warn", levelError: "error"}

func hostLog(level int32, msg string) {
	h := activeHost.Load()
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, LogRecord{Level: levelNames[level], Message: msg})
}

func hostProgress(done, total float64, msg string) {
	h := activeHost.Load()
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.progress = append(h.progress, ProgressRecord{Done: done, Total: total, Message: msg})
}

// hostHTTPRequest decodes the request JSON as the real host would, lets
// h.HTTP answer, and encodes the answer in the import's wire format.
func hostHTTPRequest(reqJSON, body []byte) (head, respBody, failure []byte) {
	fail := func(code, msg string) []byte {
		b, _ := json.Marshal(&Error{Code: code, Message: msg})
		return b
	}
	h := activeHost.Load()
	if h == nil {
		return nil, nil, fail("NO_HOST", "pdk: no TestHost is running this call (native build)")
	}
	var wr wireRequest
	if err := json.Unmarshal(reqJSON, &wr); err != nil {
		return nil, nil, fail("INVALID_REQUEST", "request JSON: "+err.Error())
	}
	if h.HTTP == nil {
		return nil, nil, fail("EGRESS_DENIED", "this TestHost allows no HTTP requests")
	}
	method := wr.Method
	if method == "" {
		method = "GET"
	}
	req := &Request{
		Method: method, URL: wr.URL, Header: wr.Headers,
		Body: body, Timeout: time.Duration(wr.TimeoutMs) * time.Millisecond,
	}
	if req.Header == nil {
		req.Header = Header{}
	}
	resp, err := h.HTTP(req)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, nil, fail(pe.Code, pe.Message)
		}
		return nil, nil, fail("UPSTREAM_UNREACHABLE", err.Error())
	}
	head, err = json.Marshal(wireResponseHead{Status: resp.Status, Headers: resp.Header, URL: resp.URL})
	if err != nil {
		return nil, nil, fail("INVALID_REQUEST", err.Error())
	}
	return head, resp.Body, nil
}

func hostTalkBack(kind string, req []byte) (result, failure []byte) {
	h := activeHost.Load()
	var handler func(json.RawMessage) (json.RawMessage, error)
	if h != nil {
		switch kind {
		case "elicit":
			handler = h.Elicit
		case "sample":
			handler = h.Sample
		default:
			handler = h.Input
		}
	}
	if handler == nil {
		return nil, encodeError(Errorf(CodeUnsupported, "the client does not support %s", kind))
	}
	res, err := handler(json.RawMessage(req))
	if err != nil {
		return nil, encodeError(toolError(err))
	}
	return res, nil
}
