;; Breaks ABI v1: imports from an unknown module and an unknown workbench_v1
;; function, gives output_set the wrong type, exports no wb_alloc and a
;; manifest of the wrong type.
(module
  (import "env" "system" (func (param i32) (result i32)))
  (import "workbench_v1" "fs_read" (func (param i32 i32) (result i32)))
  (import "workbench_v1" "output_set" (func (param i64)))
  (memory (export "memory") 1)
  (func (export "manifest") (param i32) (result i32) (i32.const 0)))
