package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/workbench-dev/workbench/runtime/manifest"
)

// Func describes one imported or exported function.
type Func struct {
	Module  string   `json:"module,omitempty"`
	Name    string   `json:"name"`
	Params  []string `json:"params"`
	Results []string `json:"results"`
}

// Memory describes a module's memory limits in 64 KiB pages.
type Memory struct {
	Min    uint32 `json:"min"`
	Max    uint32 `json:"max,omitempty"`
	HasMax bool   `json:"hasMax"`
}

// Report is what Inspect finds in a module. An empty Problems means the
// module satisfies ABI v1.
type Report struct {
	Size     int                `json:"size"`
	Imports  []Func             `json:"imports"`
	Exports  []Func             `json:"exports"`
	Memory   *Memory            `json:"memory,omitempty"`
	Limits   *Limits            `json:"limits,omitempty"`
	Manifest *manifest.Manifest `json:"manifest,omitempty"`
	Problems []string           `json:"problems"`
}

// Inspect describes a module and checks it against ABI v1 without loading
// it into the host's set of plugins.
func (h *Host) Inspect(ctx context.Context, wasm []byte) *Report {
	r := &Report{Size: len(wasm), Problems: []string{}}
	rt, err := h.newRuntime(ctx, h.cfg.Ceiling.MemoryPages)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	defer rt.Close(ctx)
	// The manifest runs on the rewritten module, which the deadline can
	// stop; the report shows the module as given, without the injected
	// import.
	rewritten, err := h.rewrite(wasm)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	compiled, err := rt.CompileModule(ctx, rewritten)
	if err != nil {
		r.Problems = append(r.Problems, "compile: "+err.Error())
		return r
	}
	for _, d := range compiled.ImportedFunctions() {
		if mod, name, _ := d.Import(); mod != InterruptImport.Module || name != InterruptImport.Name {
			r.Imports = append(r.Imports, describe(mod, name, d))
		}
	}
	exports := compiled.ExportedFunctions()
	for _, name := range slices.Sorted(maps.Keys(exports)) {
		r.Exports = append(r.Exports, describe("", name, exports[name]))
	}
	if mem, ok := compiled.ExportedMemories()[exportMemory]; ok {
		r.Memory = &Memory{Min: mem.Min()}
		r.Memory.Max, r.Memory.HasMax = mem.Max()
	}
	if r.Problems = append(r.Problems, checkModule(compiled)...); len(r.Problems) > 0 {
		return r
	}
	e := &nativeEngine{rt: rt, compiled: compiled}
	m, err := readManifest(ctx, e, h.logger)
	if err == nil {
		r.Manifest = m
		limits := h.cfg.Defaults.apply(m.Limits, h.cfg.Ceiling)
		r.Limits = &limits
		err = e.checkExports(ctx, m)
	}
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
	}
	return r
}

func describe(module, name string, d api.FunctionDefinition) Func {
	return Func{Module: module, Name: name, Params: typeNames(d.ParamTypes()), Results: typeNames(d.ResultTypes())}
}

func typeNames(ts []api.ValueType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = api.ValueTypeName(t)
	}
	return out
}

// checkModule lists every way the module's imports and fixed exports differ
// from ABI v1.
func checkModule(compiled wazero.CompiledModule) []string {
	var problems []string
	known := map[string]hostImport{}
	for _, h := range hostImports {
		known[h.name] = h
	}
	for _, d := range compiled.ImportedFunctions() {
		mod, name, _ := d.Import()
		switch mod {
		case "wasi_snapshot_preview1":
		case ImportModule:
			if name == InterruptImport.Name {
				continue // injected by the host, which refuses it in a plugin
			}
			h, ok := known[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("imports unknown function %s.%s", mod, name))
			} else if !slices.Equal(d.ParamTypes(), h.params) || !slices.Equal(d.ResultTypes(), h.results) {
				problems = append(problems, fmt.Sprintf("imports %s.%s with type %s, ABI v1 has %s", mod, name, signature(d.ParamTypes(), d.ResultTypes()), signature(h.params, h.results)))
			}
		default:
			problems = append(problems, fmt.Sprintf("imports %s.%s from unknown module %q (ABI v1 offers %s and wasi_snapshot_preview1)", mod, name, mod, ImportModule))
		}
	}
	if len(compiled.ImportedMemories()) > 0 {
		problems = append(problems, "imports a memory; a plugin must export its own")
	}
	if _, ok := compiled.ExportedMemories()[exportMemory]; !ok {
		problems = append(problems, `does not export its memory as "memory"`)
	}
	exports := compiled.ExportedFunctions()
	for _, want := range []struct {
		name            string
		params, results []api.ValueType
	}{
		{exportAlloc, []api.ValueType{i32}, []api.ValueType{i32}},
		{exportManifest, nil, []api.ValueType{i32}},
	} {
		d, ok := exports[want.name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("does not export %q", want.name))
		case !slices.Equal(d.ParamTypes(), want.params) || !slices.Equal(d.ResultTypes(), want.results):
			problems = append(problems, fmt.Sprintf("exports %q with type %s, ABI v1 needs %s", want.name, signature(d.ParamTypes(), d.ResultTypes()), signature(want.params, want.results)))
		}
	}
	if d, ok := exports[exportInitialize]; ok && (len(d.ParamTypes()) > 0 || len(d.ResultTypes()) > 0) {
		problems = append(problems, fmt.Sprintf("exports %q with type %s, ABI v1 needs () -> ()", exportInitialize, signature(d.ParamTypes(), d.ResultTypes())))
	}
	return problems
}

// checkToolExports verifies that every tool, resource and prompt export of
// the manifest exists with type (i32, i32) -> i32.
func checkToolExports(compiled wazero.CompiledModule, m *manifest.Manifest) error {
	exports := compiled.ExportedFunctions()
	want := []api.ValueType{i32, i32}
	for i := range m.Tools {
		t := &m.Tools[i]
		d, ok := exports[t.ExportName()]
		switch {
		case !ok:
			return &manifest.FieldError{Field: fmt.Sprintf("tools[%d].export", i), Msg: fmt.Sprintf("the module has no export %q for tool %s", t.ExportName(), t.Slug)}
		case !slices.Equal(d.ParamTypes(), want) || !slices.Equal(d.ResultTypes(), []api.ValueType{i32}):
			return &manifest.FieldError{Field: fmt.Sprintf("tools[%d].export", i), Msg: fmt.Sprintf("export %q has type %s, a tool needs (i32, i32) -> i32", t.ExportName(), signature(d.ParamTypes(), d.ResultTypes()))}
		}
	}
	for _, export := range slices.Sorted(maps.Keys(m.ContentExports())) {
		field := m.ContentExports()[export]
		d, ok := exports[export]
		switch {
		case !ok:
			return &manifest.FieldError{Field: field, Msg: fmt.Sprintf("the module has no export %q", export)}
		case !slices.Equal(d.ParamTypes(), want) || !slices.Equal(d.ResultTypes(), []api.ValueType{i32}):
			return &manifest.FieldError{Field: field, Msg: fmt.Sprintf("export %q has type %s, it needs (i32, i32) -> i32", export, signature(d.ParamTypes(), d.ResultTypes()))}
		}
	}
	return nil
}

func signature(params, results []api.ValueType) string {
	return fmt.Sprintf("(%s) -> (%s)", strings.Join(typeNames(params), ", "), strings.Join(typeNames(results), ", "))
}
