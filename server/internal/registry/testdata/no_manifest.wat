;; no_manifest.wat looks like a plugin but does not export "manifest": it
;; must fail to load with a reason that says so.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "wb_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "noman_echo") (param $ptr i32) (param $len i32) (result i32)
    (call $output_set (local.get $ptr) (local.get $len))
    (i32.const 0))
)
