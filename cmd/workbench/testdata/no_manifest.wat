;; no_manifest.wat looks like a plugin but does not export "manifest".
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "wb_alloc") (param i32) (result i32) (i32.const 1024))
)
