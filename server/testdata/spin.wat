;; spin.wat never finishes its manifest export: loading it blocks until the
;; load is canceled or times out. The server must answer /healthz meanwhile.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "wb_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "manifest") (result i32)
    (loop $forever (br $forever))
    (i32.const 1))
)
