package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/failure"
	"github.com/workbench-dev/workbench/toolcall"
)

// ImportModule is the module name of the ABI v1 host imports.
const ImportModule = "workbench_v1"

// progressInterval rate-limits progress reports to 20 per second per call.
const progressInterval = 50 * time.Millisecond

var (
	i32, i64, f64 = api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF64
)

// hostImport is one function of the workbench_v1 module.
type hostImport struct {
	name            string
	fn              api.GoModuleFunc
	params, results []api.ValueType
}

// hostImports are the functions of docs/abi.md, section 5.
var hostImports = []hostImport{
	{"output_set", outputSet, []api.ValueType{i32, i32}, nil},
	{"result_read", resultRead, []api.ValueType{i32, i32}, []api.ValueType{i32}},
	{"log", logRecord, []api.ValueType{i32, i32, i32}, nil},
	{"config_get", configGet, []api.ValueType{i32, i32}, []api.ValueType{i32}},
	{"progress", progress, []api.ValueType{f64, f64, i32, i32}, nil},
	{"http_request", httpRequest, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
	{"elicit", elicit, []api.ValueType{i32, i32}, []api.ValueType{i32}},
	{"sample", sample, []api.ValueType{i32, i32}, []api.ValueType{i32}},
	{"input", input, []api.ValueType{i32, i32}, []api.ValueType{i32}},
}

func hostModule(rt wazero.Runtime) wazero.HostModuleBuilder {
	b := rt.NewHostModuleBuilder(ImportModule)
	for _, h := range hostImports {
		b = b.NewFunctionBuilder().WithGoModuleFunction(h.fn, h.params, h.results).Export(h.name)
	}
	return b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(interruptCheck), nil, []api.ValueType{i32}).Export(InterruptImport.Name)
}

// callState is what the host imports know about the call in progress. It is
// reached through the context wazero passes to every host function.
type callState struct {
	plugin   *Plugin
	tool     *toolEntry
	user     string
	progress func(toolcall.Progress)
	client   toolcall.Client

	output     []byte
	outputSet  bool
	pending    []byte
	hasPending bool
	logs       int
	requests   int
	talkBacks  int
	asked      map[string]bool // input request keys asked in this call
	lastReport time.Time

	cred *credentialState
}

type callStateKey struct{}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	if st == nil {
		// Only reachable if a plugin calls an import outside a call, e.g. from
		// _initialize; there is no call to attach the effect to.
		panic(&abort{toolError(failure.Trap, "host import called outside a tool call")})
	}
	return st
}

// guestBytes returns the guest's region [ptr, ptr+n) or aborts the call.
// The slice aliases guest memory: copy it before the guest runs again.
func guestBytes(mod api.Module, ptr, n uint32, what string) []byte {
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		panic(&abort{toolError(failure.BadPointer, fmt.Sprintf("%s: region at %d of %d bytes is outside guest memory (%d bytes)", what, ptr, n, mod.Memory().Size()))})
	}
	return b
}

// requireTool aborts an import that only makes sense inside a tool call,
// such as http_request while the host is reading the manifest.
func (st *callState) requireTool(name string) {
	if st.plugin.manifest == nil {
		panic(&abort{toolError(failure.Trap, name+" is not available while the host reads the manifest")})
	}
}

func (st *callState) setPending(b []byte) {
	st.pending, st.hasPending = b, true
}

func outputSet(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if int64(n) > st.tool.limits.OutputBytes {
		panic(&abort{toolError(failure.OutputTooLarge, fmt.Sprintf("output of %d bytes is over the limit of %d bytes", n, st.tool.limits.OutputBytes))})
	}
	st.output = append(st.output[:0], guestBytes(mod, ptr, n, "output_set")...)
	st.outputSet = true
}

func resultRead(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if !st.hasPending {
		stack[0] = api.EncodeI32(-1)
		return
	}
	n = min(n, uint32(len(st.pending)))
	copy(guestBytes(mod, ptr, n, "result_read"), st.pending[:n])
	stack[0] = api.EncodeU32(n)
}

func logRecord(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	level, ptr, n := int32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	msg := guestBytes(mod, ptr, n, "log")
	st.logs++
	if st.logs > maxLogRecordsPerCall {
		if st.logs == maxLogRecordsPerCall+1 {
			st.plugin.logger.Warn("plugin log records over the per-call limit; dropping the rest", "tool", st.tool.Slug, "limit", maxLogRecordsPerCall)
		}
		return
	}
	text := string(msg[:min(len(msg), MaxLogRecordBytes)])
	st.plugin.logger.Log(ctx, logLevel(level), text, "tool", st.tool.Slug, "user", st.user)
	if st.client != nil {
		st.client.Log(logLevel(level), text)
	}
}

func logLevel(l int32) slog.Level {
	switch l {
	case 0:
		return slog.LevelDebug
	case 1:
		return slog.LevelInfo
	case 2:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func configGet(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.requireTool("config_get")
	key := string(guestBytes(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), "config_get"))
	v, ok := st.plugin.config(ctx, st, key)
	if !ok {
		stack[0] = api.EncodeI32(-1)
		return
	}
	st.setPending([]byte(v))
	stack[0] = api.EncodeU32(uint32(len(v)))
}

func progress(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.requireTool("progress")
	done, total := api.DecodeF64(stack[0]), api.DecodeF64(stack[1])
	msg := guestBytes(mod, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]), "progress")
	if st.progress == nil {
		return
	}
	now := time.Now()
	final := total > 0 && done >= total
	if !final && now.Sub(st.lastReport) < progressInterval {
		return
	}
	st.lastReport = now
	st.progress(toolcall.Progress{Done: done, Total: total, Message: string(msg[:min(len(msg), MaxLogRecordBytes)])})
}

func httpRequest(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.requireTool("http_request")
	req := guestBytes(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), "http_request request")
	body := guestBytes(mod, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]), "http_request body")
	head, respBody, terr := st.plugin.httpRequest(ctx, st, req, body)
	if terr != nil {
		b, _ := json.Marshal(terr)
		st.setPending(b)
		stack[0] = api.EncodeI64(-int64(len(b)))
		return
	}
	st.setPending(append(head, respBody...))
	stack[0] = uint64(len(head))<<32 | uint64(len(respBody))
}

func elicit(ctx context.Context, mod api.Module, stack []uint64) {
	talkBackImport(ctx, mod, stack, "elicit")
}

func sample(ctx context.Context, mod api.Module, stack []uint64) {
	talkBackImport(ctx, mod, stack, "sample")
}

func input(ctx context.Context, mod api.Module, stack []uint64) {
	talkBackImport(ctx, mod, stack, "input")
}

// talkBackImport serves elicit, sample and input: the result JSON becomes
// the pending result and its length is returned; a failure returns minus
// the length of the pending error JSON.
func talkBackImport(ctx context.Context, mod api.Module, stack []uint64, kind string) {
	st := stateFrom(ctx)
	st.requireTool(kind)
	req := guestBytes(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), kind)
	var out []byte
	var terr *failure.Error
	if kind == "input" {
		out, terr = st.input(ctx, req)
	} else {
		out, terr = st.talkBack(ctx, kind, req)
	}
	if terr != nil {
		out, _ = json.Marshal(terr)
		st.setPending(out)
		stack[0] = api.EncodeI32(-int32(len(out)))
		return
	}
	st.setPending(out)
	stack[0] = api.EncodeU32(uint32(len(out)))
}
