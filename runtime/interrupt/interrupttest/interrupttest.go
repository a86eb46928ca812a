// Package interrupttest is test support for package interrupt: Compare runs
// a module before and after the rewrite and fails the test on the first
// difference. Only tests may import it.
package interrupttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/workbench-dev/workbench/runtime/interrupt"
)

// check is the import the rewritten module calls; no module imports it.
var check = interrupt.Import{Module: "interrupttest", Name: "check"}

// callTimeout ends calls that do not return, on both sides.
const callTimeout = 2 * time.Second

// deadline is the result of a call that passed callTimeout.
const deadline = "error: deadline"

// memoryPages caps memory as the plugin host does by default (32 MiB), so
// that a module growing its memory until refused stops at the same size on
// both sides.
const memoryPages = 512

// Compare calls every exported function of wasm on the original module
// (stopped by wazero's own check) and on the module rewritten by
// interrupt.Inject, each call on a fresh instance, once per input, and
// fails t unless both sides return the same results and error, leave the
// same bytes in memory and make the same import calls with the same
// arguments. WASI is wazero's, with its deterministic clocks and
// randomness; every other import is a stub that records its arguments and
// returns zeros. A function taking (i32, i32) in a module that exports
// wb_alloc gets the input through it, as ABI v1 passes it; every other
// function gets zeros. The rewritten side's budget is small, so the check
// runs often.
func Compare(t testing.TB, wasm []byte, inputs ...[]byte) {
	t.Helper()
	rewritten, err := interrupt.Inject(wasm, check)
	if err != nil {
		t.Fatalf("Inject: %v", err)
	}
	original := newSide(t, wasm, true)
	after := newSide(t, rewritten, false)
	exports := original.compiled.ExportedFunctions()
	for _, name := range slices.Sorted(maps.Keys(exports)) {
		if name == "_initialize" || name == "_start" {
			continue
		}
		for _, in := range inputs {
			want, got := original.call(t, name, in), after.call(t, name, in)
			if want.result == deadline || got.result == deadline {
				// How far a call gets before a deadline depends on the
				// machine: only calls that end are compared.
				t.Logf("%s(%.40q): original %.40s, rewritten %.40s: not compared", name, in, want.result, got.result)
				continue
			}
			if want.result != got.result || want.trace != got.trace {
				t.Errorf("%s(%.40q):\noriginal  %s\n%.2000s\nrewritten %s\n%.2000s", name, in, want.result, want.trace, got.result, got.trace)
			} else if !bytes.Equal(want.memory, got.memory) {
				t.Errorf("%s(%.40q): memory differs after the call", name, in)
			}
		}
	}
}

// side is one of the two modules under comparison.
type side struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	trace    *strings.Builder
}

// outcome is what one call did.
type outcome struct {
	result, trace string
	memory        []byte
}

func newSide(t testing.TB, wasm []byte, closeOnDone bool) *side {
	t.Helper()
	ctx := context.Background()
	rc := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnDone).WithMemoryLimitPages(memoryPages)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	t.Cleanup(func() { rt.Close(ctx) })
	s := &side{rt: rt, trace: &strings.Builder{}}
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var err error
	if s.compiled, err = rt.CompileModule(ctx, wasm); err != nil {
		t.Fatalf("compile: %v", err)
	}
	stubs := map[string]wazero.HostModuleBuilder{}
	for _, d := range s.compiled.ImportedFunctions() {
		mod, name, _ := d.Import()
		if mod == wasi_snapshot_preview1.ModuleName {
			continue
		}
		b, ok := stubs[mod]
		if !ok {
			b = rt.NewHostModuleBuilder(mod)
		}
		fn := s.stub(mod+"."+name, d.ParamTypes(), len(d.ResultTypes()))
		if mod == check.Module && name == check.Name {
			fn = checkBudget
		}
		stubs[mod] = b.NewFunctionBuilder().WithGoModuleFunction(fn, d.ParamTypes(), d.ResultTypes()).Export(name)
	}
	for mod, b := range stubs {
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatalf("stub module %s: %v", mod, err)
		}
	}
	return s
}

// stub records a call with its arguments and returns zeros. A 32-bit
// argument is recorded without the upper half of its stack slot, which
// wazero leaves undefined.
func (s *side) stub(name string, params []api.ValueType, results int) api.GoModuleFunc {
	return func(_ context.Context, _ api.Module, stack []uint64) {
		s.trace.WriteString(name)
		for i, p := range params {
			v := stack[i]
			if p == api.ValueTypeI32 || p == api.ValueTypeF32 {
				v = uint64(uint32(v))
			}
			fmt.Fprintf(s.trace, " %d", v)
		}
		s.trace.WriteByte('\n')
		clear(stack[:results])
	}
}

// checkBudget serves the check: the call ends when its context does.
func checkBudget(ctx context.Context, _ api.Module, stack []uint64) {
	if err := ctx.Err(); err != nil {
		panic(err)
	}
	stack[0] = 101
}

// call runs export on a fresh instance.
func (s *side) call(t testing.TB, export string, input []byte) outcome {
	t.Helper()
	s.trace.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	mod, err := s.rt.InstantiateModule(ctx, s.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return outcome{result: "instantiate: " + firstLine(err), trace: s.trace.String()}
	}
	defer mod.Close(ctx)
	res, err := invoke(ctx, mod, export, input)
	o := outcome{result: fmt.Sprint(res), trace: s.trace.String()}
	if err != nil {
		o.result = "error: " + firstLine(err)
		if ctx.Err() != nil {
			o.result = deadline
		}
	}
	if mem := mod.Memory(); mem != nil {
		o.memory, _ = mem.Read(0, mem.Size())
		o.memory = bytes.Clone(o.memory)
	}
	return o
}

// invoke runs _initialize, then the export with the input or zeros.
func invoke(ctx context.Context, mod api.Module, export string, input []byte) ([]uint64, error) {
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			return nil, fmt.Errorf("_initialize: %w", err)
		}
	}
	fn := mod.ExportedFunction(export)
	params := make([]uint64, len(fn.Definition().ParamTypes()))
	alloc := mod.ExportedFunction("wb_alloc")
	if len(params) == 2 && alloc != nil && mod.Memory() != nil {
		res, err := alloc.Call(ctx, uint64(len(input)))
		if err != nil {
			return nil, fmt.Errorf("wb_alloc: %w", err)
		}
		if !mod.Memory().Write(uint32(res[0]), input) {
			return nil, errors.New("wb_alloc returned a bad pointer")
		}
		params[0], params[1] = res[0], uint64(len(input))
	}
	return fn.Call(ctx, params...)
}

// firstLine is an error's message without wazero's stack trace (whose
// function indices differ after the rewrite).
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
