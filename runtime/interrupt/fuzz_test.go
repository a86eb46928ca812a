package interrupt

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInject feeds Inject arbitrary bytes, seeded with the fixtures in
// testdata: it must never panic, and a module wazero accepts must come out
// accepted too, with the same exports.
func FuzzInject(f *testing.F) {
	for _, name := range []string{"shapes", "leaf"} {
		f.Add(fixture(f, name))
	}
	ctx := context.Background()
	// The interpreter validates exactly as the compiler does, and compiles
	// faster.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := Inject(wasm, testImport)
		before, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			return // not a module: not panicking was the property
		}
		defer before.Close(ctx)
		if err != nil {
			if !strings.Contains(err.Error(), "already imports") {
				t.Fatalf("Inject refused a valid module: %v", err)
			}
			return
		}
		after, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the rewritten module does not compile: %v", err)
		}
		defer after.Close(ctx)
		if err := sameExports(before, after); err != nil {
			t.Fatal(err)
		}
	})
}
