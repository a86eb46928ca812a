;; echo.wat is a minimal ABI v1 plugin: integration "echo" with one tool,
;; echo_ping, that returns its input.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"abi\":1,\"name\":\"echo\",\"version\":\"0.1.0\",\"description\":\"Echoes its input.\",\"auth\":{\"mode\":\"none\"},\"tools\":[{\"slug\":\"echo_ping\",\"description\":\"Returns its input.\",\"inputSchema\":{\"type\":\"object\"}}]}")
  ;; the input always goes to the second page; an echo never needs the previous one
  (func (export "wb_alloc") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "manifest") (result i32)
    (call $output_set (i32.const 1024) (i32.const 196))
    (i32.const 0))
  (func (export "echo_ping") (param $ptr i32) (param $len i32) (result i32)
    (call $output_set (local.get $ptr) (local.get $len))
    (i32.const 0))
)
