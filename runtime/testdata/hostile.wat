;; Hand-written hostile plugin for the runtime tests (docs/abi.md).
;; The manifest is filled in by the test (fixtureManifest in fixture_test.go).
;; Memory: 1024 manifest (at most 15 KiB), 16384 constants, 32768 the leak slot,
;; 65536 input (wb_alloc), 196608 results of imports.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (import "workbench_v1" "result_read" (func $result_read (param i32 i32) (result i32)))
  (import "workbench_v1" "log" (func $log (param i32 i32 i32)))
  (import "workbench_v1" "config_get" (func $config_get (param i32 i32) (result i32)))
  (import "workbench_v1" "progress" (func $progress (param f64 f64 i32 i32)))
  (import "workbench_v1" "http_request" (func $http_request (param i32 i32 i32 i32) (result i64)))
  (import "workbench_v1" "elicit" (func $elicit (param i32 i32) (result i32)))
  (import "workbench_v1" "sample" (func $sample (param i32 i32) (result i32)))
  (import "workbench_v1" "input" (func $input (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 8)
  (data (i32.const 1024) "{{MANIFEST}}")
  (data (i32.const 16384) "{\"code\":\"NOT_FOUND\",\"message\":\"nothing here\",\"details\":{\"id\":7}}")
  (data (i32.const 16456) "this is not json")
  (data (i32.const 16480) "hello from wasm")
  (data (i32.const 16503) "half way")
  (data (i32.const 16519) "done")
  (data (i32.const 16531) "/etc/passwd")
  (data (i32.const 16550) "base_url")
  (data (i32.const 16566) "{}")
  (data (i32.const 16576) "null")
  (data (i32.const 32768) "null")
  (global $leak_len (mut i32) (i32.const 4))

  (func (export "wb_alloc") (param $n i32) (result i32)
    (local $need i32)
    ;; pages needed to hold [65536, 65536+n)
    (local.set $need (i32.shr_u (i32.add (i32.add (local.get $n) (i32.const 65536)) (i32.const 65535)) (i32.const 16)))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
        (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "manifest") (result i32)
    (call $output_set (i32.const 1024) (i32.const {{MANIFEST_LEN}}))
    (i32.const 0))

  (func $fixture_echo (param $p i32) (param $n i32) (result i32)
    (call $output_set (local.get $p) (local.get $n))
    (i32.const 0))

  (func $fixture_fail (param i32 i32) (result i32)
    (call $output_set (i32.const 16384) (i32.const 64))
    (i32.const 1))

  (func $fixture_loop (param i32 i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0))

  (func $fixture_trap (param i32 i32) (result i32)
    unreachable)

  ;; grows 16 pages at a time until refused, then outputs the page count as JSON
  (func $fixture_grow (param i32 i32) (result i32)
    (block $refused
      (loop $more
        (br_if $refused (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (br $more)))
    (call $output_set (i32.const 0) (call $itoa (memory.size) (i32.const 0)))
    (i32.const 0))

  ;; grows memory until refused, then traps, as an allocator does when it
  ;; cannot get more
  (func $fixture_oom (param i32 i32) (result i32)
    (block $refused
      (loop $more
        (br_if $refused (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (br $more)))
    (unreachable))

  (func $fixture_big (param i32 i32) (result i32)
    (call $output_set (i32.const 65536) (i32.const 4096))
    (i32.const 0))

  (func $fixture_bad_json (param i32 i32) (result i32)
    (call $output_set (i32.const 16456) (i32.const 16))
    (i32.const 0))

  (func $fixture_bad_status (param i32 i32) (result i32)
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 7))

  (func $fixture_no_output (param i32 i32) (result i32)
    (i32.const 0))

  ;; outputs the input of the previous call on this instance, then keeps this one
  (func $fixture_leak (param $p i32) (param $n i32) (result i32)
    (call $output_set (i32.const 32768) (global.get $leak_len))
    (memory.copy (i32.const 32768) (local.get $p) (local.get $n))
    (global.set $leak_len (local.get $n))
    (i32.const 0))

  ;; the input is the request head; an error becomes the tool error, success outputs the response body
  (func $fixture_http (param $p i32) (param $n i32) (result i32)
    (local $r i64) (local $head i32) (local $body i32)
    (local.set $r (call $http_request (local.get $p) (local.get $n) (i32.const 0) (i32.const 0)))
    (if (i64.lt_s (local.get $r) (i64.const 0))
      (then
        (drop (call $result_read (i32.const 196608) (i32.wrap_i64 (i64.sub (i64.const 0) (local.get $r)))))
        (call $output_set (i32.const 196608) (i32.wrap_i64 (i64.sub (i64.const 0) (local.get $r))))
        (return (i32.const 1))))
    (local.set $head (i32.wrap_i64 (i64.shr_u (local.get $r) (i64.const 32))))
    (local.set $body (i32.wrap_i64 (local.get $r)))
    (drop (call $result_read (i32.const 196608) (i32.add (local.get $head) (local.get $body))))
    (call $output_set (i32.add (i32.const 196608) (local.get $head)) (local.get $body))
    (i32.const 0))

  ;; the input is a JSON string naming a setting; outputs it as a JSON string, or null
  (func $fixture_config (param $p i32) (param $n i32) (result i32)
    (local $len i32)
    (local.set $len (call $config_get (i32.add (local.get $p) (i32.const 1)) (i32.sub (local.get $n) (i32.const 2))))
    (if (i32.lt_s (local.get $len) (i32.const 0))
      (then (call $output_set (i32.const 16576) (i32.const 4)) (return (i32.const 0))))
    (i32.store8 (i32.const 196608) (i32.const 34))
    (drop (call $result_read (i32.const 196609) (local.get $len)))
    (i32.store8 (i32.add (i32.const 196609) (local.get $len)) (i32.const 34))
    (call $output_set (i32.const 196608) (i32.add (local.get $len) (i32.const 2)))
    (i32.const 0))

  (func $fixture_progress (param i32 i32) (result i32)
    (call $progress (f64.const 1) (f64.const 2) (i32.const 16503) (i32.const 8))
    (call $progress (f64.const 2) (f64.const 2) (i32.const 16519) (i32.const 4))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_log (param i32 i32) (result i32)
    (call $log (i32.const 1) (i32.const 16480) (i32.const 15))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  ;; outputs [prestat errno of fd 3, path_open errno for /etc/passwd from fd 3, environ count, args count]
  (func $fixture_sandbox (param i32 i32) (result i32)
    (local $o i32)
    (i32.store8 (i32.const 0) (i32.const 91))
    (local.set $o (i32.const 1))
    (local.set $o (i32.add (local.get $o) (call $itoa (call $fd_prestat_get (i32.const 3) (i32.const 512)) (local.get $o))))
    (i32.store8 (local.get $o) (i32.const 44))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (local.set $o (i32.add (local.get $o) (call $itoa
      (call $path_open (i32.const 3) (i32.const 0) (i32.const 16531) (i32.const 11) (i32.const 0) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 512))
      (local.get $o))))
    (i32.store8 (local.get $o) (i32.const 44))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (drop (call $environ_sizes_get (i32.const 512) (i32.const 516)))
    (local.set $o (i32.add (local.get $o) (call $itoa (i32.load (i32.const 512)) (local.get $o))))
    (i32.store8 (local.get $o) (i32.const 44))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (drop (call $args_sizes_get (i32.const 512) (i32.const 516)))
    (local.set $o (i32.add (local.get $o) (call $itoa (i32.load (i32.const 512)) (local.get $o))))
    (i32.store8 (local.get $o) (i32.const 93))
    (call $output_set (i32.const 0) (i32.add (local.get $o) (i32.const 1)))
    (i32.const 0))

  (func $fixture_exit (param i32 i32) (result i32)
    (call $proc_exit (i32.const 3))
    (i32.const 0))

  (func $fixture_bad_output_set (param i32 i32) (result i32)
    (call $output_set (i32.const 0x7ffffff0) (i32.const 64))
    (i32.const 0))

  (func $fixture_bad_result_read (param i32 i32) (result i32)
    (drop (call $config_get (i32.const 16550) (i32.const 8)))
    (drop (call $result_read (i32.const -16) (i32.const 64)))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_bad_log (param i32 i32) (result i32)
    (call $log (i32.const 1) (i32.const 0x7ffffff0) (i32.const 64))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_bad_config_get (param i32 i32) (result i32)
    (drop (call $config_get (i32.const -8) (i32.const 64)))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_bad_progress (param i32 i32) (result i32)
    (call $progress (f64.const 1) (f64.const 2) (i32.const 0x7ffffff0) (i32.const 64))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  ;; the input is the request head; success outputs the response head as the guest sees it
  (func $fixture_http_head (param $p i32) (param $n i32) (result i32)
    (local $r i64) (local $head i32)
    (local.set $r (call $http_request (local.get $p) (local.get $n) (i32.const 0) (i32.const 0)))
    (if (i64.lt_s (local.get $r) (i64.const 0)) (then (unreachable)))
    (local.set $head (i32.wrap_i64 (i64.shr_u (local.get $r) (i64.const 32))))
    (drop (call $result_read (i32.const 196608) (i32.add (local.get $head) (i32.wrap_i64 (local.get $r)))))
    (call $output_set (i32.const 196608) (local.get $head))
    (i32.const 0))

  (func $fixture_bad_http_head (param i32 i32) (result i32)
    (drop (call $http_request (i32.const 0x7ffffff0) (i32.const 64) (i32.const 0) (i32.const 0)))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_bad_http_body (param $p i32) (param $n i32) (result i32)
    (drop (call $http_request (local.get $p) (local.get $n) (i32.const 65536) (i32.const -1)))
    (call $output_set (i32.const 16566) (i32.const 2))
    (i32.const 0))

  (func $fixture_len_overflow (param i32 i32) (result i32)
    (call $output_set (i32.const 65536) (i32.const -65536))
    (i32.const 0))

  ;; the input is the elicit (or sample) request; the result is the output, a failure the tool error
  (func $fixture_elicit (param $p i32) (param $n i32) (result i32)
    (call $relay (call $elicit (local.get $p) (local.get $n))))

  (func $fixture_sample (param $p i32) (param $n i32) (result i32)
    (call $relay (call $sample (local.get $p) (local.get $n))))

  (func $fixture_input (param $p i32) (param $n i32) (result i32)
    (call $relay (call $input (local.get $p) (local.get $n))))

  ;; asks the same input twice and relays the second answer
  (func $fixture_input_twice (param $p i32) (param $n i32) (result i32)
    (drop (call $input (local.get $p) (local.get $n)))
    (call $relay (call $input (local.get $p) (local.get $n))))

  ;; outputs the pending result of an import that returned $r: a length, or minus the error's length
  (func $relay (param $r i32) (result i32)
    (if (i32.lt_s (local.get $r) (i32.const 0))
      (then
        (drop (call $result_read (i32.const 196608) (i32.sub (i32.const 0) (local.get $r))))
        (call $output_set (i32.const 196608) (i32.sub (i32.const 0) (local.get $r)))
        (return (i32.const 1))))
    (drop (call $result_read (i32.const 196608) (local.get $r)))
    (call $output_set (i32.const 196608) (local.get $r))
    (i32.const 0))

  ;; writes the decimal form of a non-negative $v at $at; returns the number of bytes
  (func $itoa (param $v i32) (param $at i32) (result i32)
    (local $n i32) (local $t i32) (local $i i32)
    (local.set $t (local.get $v))
    (local.set $n (i32.const 1))
    (block $done (loop $count
      (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
      (br_if $done (i32.eqz (local.get $t)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $count)))
    (local.set $i (local.get $n))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (local.get $at) (local.get $i))
        (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digit (i32.gt_s (local.get $i) (i32.const 0))))
    (local.get $n))

  (export "fixture_echo" (func $fixture_echo))
  (export "fixture_fail" (func $fixture_fail))
  (export "fixture_loop" (func $fixture_loop))
  (export "fixture_trap" (func $fixture_trap))
  (export "fixture_grow" (func $fixture_grow))
  (export "fixture_oom" (func $fixture_oom))
  (export "fixture_big" (func $fixture_big))
  (export "fixture_bad_json" (func $fixture_bad_json))
  (export "fixture_bad_status" (func $fixture_bad_status))
  (export "fixture_no_output" (func $fixture_no_output))
  (export "fixture_leak" (func $fixture_leak))
  (export "fixture_http" (func $fixture_http))
  (export "fixture_http_head" (func $fixture_http_head))
  (export "fixture_config" (func $fixture_config))
  (export "fixture_progress" (func $fixture_progress))
  (export "fixture_log" (func $fixture_log))
  (export "fixture_sandbox" (func $fixture_sandbox))
  (export "fixture_exit" (func $fixture_exit))
  (export "fixture_bad_output_set" (func $fixture_bad_output_set))
  (export "fixture_bad_result_read" (func $fixture_bad_result_read))
  (export "fixture_bad_log" (func $fixture_bad_log))
  (export "fixture_bad_config_get" (func $fixture_bad_config_get))
  (export "fixture_bad_progress" (func $fixture_bad_progress))
  (export "fixture_bad_http_head" (func $fixture_bad_http_head))
  (export "fixture_bad_http_body" (func $fixture_bad_http_body))
  (export "fixture_len_overflow" (func $fixture_len_overflow))
  (export "fixture_elicit" (func $fixture_elicit))
  (export "fixture_sample" (func $fixture_sample))
  (export "fixture_input" (func $fixture_input))
  (export "fixture_input_twice" (func $fixture_input_twice))
)
