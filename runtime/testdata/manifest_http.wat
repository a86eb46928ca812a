;; Calls http_request from inside its manifest export, which the host refuses.
(module
  (import "workbench_v1" "http_request" (func $http_request (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"url\":\"https://api.test/\"}")
  (func (export "wb_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "manifest") (result i32)
    (drop (call $http_request (i32.const 0) (i32.const 27) (i32.const 0) (i32.const 0)))
    (i32.const 0)))
