package interrupt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/internal/wattest"
)

var testImport = Import{Module: "wb", Name: "interrupt"}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	return wattest.Compile(t, src)
}

// errStop is what the test's import panics with to end a call.
var errStop = errors.New("stopped by the interrupt import")

// instantiate runs wasm under wazero without any engine-side interrupt,
// with env.add and the interrupt import, which calls check and returns
// budget.
func instantiate(t testing.TB, wasm []byte, check func() uint32) api.Module {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(a, b int32) int32 { return a + b }).Export("add").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.NewHostModuleBuilder(testImport.Module).NewFunctionBuilder().
		WithFunc(func() uint32 { return check() }).Export(testImport.Name).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// TestInject_behaviour runs each export of testdata/shapes.wat before and
// after the rewrite, with a budget of 3 so that the import runs often.
func TestInject_behaviour(t *testing.T) {
	wasm := fixture(t, "shapes")
	rewritten, err := Inject(wasm, testImport)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		export string
		params []uint64
		want   []uint64
	}{
		{"sum", []uint64{100}, []uint64{4950}},
		{"count", []uint64{50}, []uint64{0}},
		{"indirect", []uint64{0, 21}, []uint64{42}},
		{"indirect", []uint64{1, 5}, []uint64{120}},
		{"ref_func", []uint64{7}, []uint64{49}},
		{"via_global", []uint64{7}, []uint64{14}},
		{"started", nil, []uint64{42}},
		{"fact", []uint64{10}, []uint64{3628800}},
		{"simd", nil, []uint64{22}},
		{"bulk", nil, []uint64{0x04030201 + 9}},
		{"numeric", []uint64{api.EncodeF64(1e30)}, []uint64{uint64(1<<63-1) - 1}},
		{"tree", []uint64{10}, nil},
	}
	for name, wasm := range map[string][]byte{"original": wasm, "rewritten": rewritten} {
		t.Run(name, func(t *testing.T) {
			mod := instantiate(t, wasm, func() uint32 { return 3 })
			for _, tt := range tests {
				got, err := mod.ExportedFunction(tt.export).Call(context.Background(), tt.params...)
				if err != nil || !slices.Equal(got, tt.want) {
					t.Errorf("%s%v = %v, %v; want %v", tt.export, tt.params, got, err, tt.want)
				}
			}
			// table_init fills slots 2 and 3 from the passive segment.
			if _, err := mod.ExportedFunction("table_init").Call(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, err := mod.ExportedFunction("indirect").Call(context.Background(), 2, 10); err != nil || got[0] != 55 {
				t.Errorf("indirect(2, 10) after table_init = %v, %v; want 55", got, err)
			}
		})
	}
}

// TestInject_stops checks that runaway shapes reach the import, which ends
// them: a loop, an exponential call tree and infinite recursion.
func TestInject_stops(t *testing.T) {
	for _, name := range []string{"shapes", "leaf"} {
		rewritten, err := Inject(fixture(t, name), testImport)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			export string
			params []uint64
		}{{"spin", nil}, {"tree", []uint64{60}}, {"recurse", nil}} {
			if name == "leaf" && tt.export != "spin" {
				continue
			}
			t.Run(name+"/"+tt.export, func(t *testing.T) {
				calls := 0
				mod := instantiate(t, rewritten, func() uint32 {
					if calls++; calls == 5 {
						panic(errStop)
					}
					return Budget
				})
				_, err := mod.ExportedFunction(tt.export).Call(context.Background(), tt.params...)
				// Infinite recursion may overflow wazero's stack first; both end it.
				if !errors.Is(err, errStop) && !(tt.export == "recurse" && err != nil && strings.Contains(err.Error(), "stack overflow")) {
					t.Fatalf("%s = %v, want it stopped by the import", tt.export, err)
				}
			})
		}
	}
}

// TestInject_exportsKeepTypes compares the exports of each fixture before
// and after the rewrite, and checks the one added import.
func TestInject_exportsKeepTypes(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, name := range []string{"shapes", "leaf"} {
		wasm := fixture(t, name)
		rewritten, err := Inject(wasm, testImport)
		if err != nil {
			t.Fatal(err)
		}
		before, after := compile(t, rt, wasm), compile(t, rt, rewritten)
		if err := sameExports(before, after); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		imports := after.ImportedFunctions()
		last := imports[len(imports)-1]
		if mod, fn, _ := last.Import(); mod != testImport.Module || fn != testImport.Name || len(last.ParamTypes()) != 0 || !slices.Equal(last.ResultTypes(), []api.ValueType{api.ValueTypeI32}) {
			t.Errorf("%s: last import is %s.%s %v -> %v", name, mod, fn, last.ParamTypes(), last.ResultTypes())
		}
	}
}

func compile(t testing.TB, rt wazero.Runtime, wasm []byte) wazero.CompiledModule {
	t.Helper()
	c, err := rt.CompileModule(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameExports reports the first export that differs between two modules.
func sameExports(before, after wazero.CompiledModule) error {
	b, a := before.ExportedFunctions(), after.ExportedFunctions()
	if len(b) != len(a) {
		return errors.New("the number of exported functions changed")
	}
	for name, d := range b {
		e, ok := a[name]
		if !ok || !slices.Equal(d.ParamTypes(), e.ParamTypes()) || !slices.Equal(d.ResultTypes(), e.ResultTypes()) {
			return errors.New("export " + name + " changed")
		}
	}
	if len(before.ExportedMemories()) != len(after.ExportedMemories()) {
		return errors.New("exported memories changed")
	}
	return nil
}

// TestInject_names checks that function names follow their functions.
func TestInject_names(t *testing.T) {
	wasm := fixture(t, "leaf") // functions 0 (answer) and 1 (spin)
	funcNames := []byte{0x02, 0x00, 0x06, 'a', 'n', 's', 'w', 'e', 'r', 0x01, 0x04, 's', 'p', 'i', 'n'}
	custom := appendSection([]byte{0x04, 'n', 'a', 'm', 'e'}, 1, funcNames)
	wasm = appendSection(wasm, secCustom, custom)
	rewritten, err := Inject(wasm, testImport)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for export, want := range map[string]string{"answer": "answer", "spin": "spin"} {
		if got := compile(t, rt, rewritten).ExportedFunctions()[export].Name(); got != want {
			t.Errorf("name of export %s = %q, want %q", export, got, want)
		}
	}
}

// moduleWithBody is a module of one function () -> () with the given body
// (locals and instructions, without the size).
func moduleWithBody(body []byte) []byte {
	b := slices.Clone(header)
	b = append(b, secType, 4, 1, 0x60, 0, 0)
	b = append(b, secFunction, 2, 1, 0)
	code := append(appendU32([]byte{1}, uint32(len(body))), body...)
	return appendSection(b, secCode, code)
}

func TestInject_errors(t *testing.T) {
	importsIt := slices.Clone(header)
	imp := []byte{1, 2, 'w', 'b', 9, 'i', 'n', 't', 'e', 'r', 'r', 'u', 'p', 't', 0, 0}
	importsIt = appendSection(append(importsIt, secType, 4, 1, 0x60, 0, 0), secImport, imp)
	tests := []struct {
		name, want string
		wasm       []byte
	}{
		{"not wasm", "bad magic number", []byte("\x00asm\x02\x00\x00\x00")},
		{"truncated section", "bytes announced", append(slices.Clone(header), secType, 9, 1)},
		{"unknown section", "unsupported section id 13", append(slices.Clone(header), 13, 0)},
		{"sections out of order", "out of order", append(slices.Clone(header), secFunction, 1, 0, secType, 1, 0)},
		{"threads", "offset 0x17: unsupported opcode 0xfe (threads)", moduleWithBody([]byte{0, 0xfe, 0x00, 0x02, 0x00, 0x0b})},
		{"tail call", "unsupported opcode 0x12 (tail calls)", moduleWithBody([]byte{0, 0x12, 0x00, 0x0b})},
		{"relaxed simd", "unsupported opcode 0xfd 256 (relaxed SIMD)", moduleWithBody([]byte{0, 0xfd, 0x80, 0x02, 0x0b})},
		{"simd gap", "unsupported opcode 0xfd 154", moduleWithBody([]byte{0, 0xfd, 0x9a, 0x01, 0x0b})},
		{"misc", "unsupported opcode 0xfc 18", moduleWithBody([]byte{0, 0xfc, 18, 0x0b})},
		{"multi-memory", "multi-memory", moduleWithBody([]byte{0, 0x41, 0, 0x28, 0x40, 0, 0, 0x1a, 0x0b})},
		{"endless body", "unexpected end", moduleWithBody([]byte{0, 0x41})},
		{"long integer", "too long", moduleWithBody([]byte{0, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00})},
		{"reserved import", "already imports wb.interrupt", importsIt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Inject(tt.wasm, testImport)
			var ie *Error
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Inject = %d bytes, %v; want an *Error containing %q", len(out), err, tt.want)
			}
		})
	}
}
