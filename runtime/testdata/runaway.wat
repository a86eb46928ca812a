;; Runaway plugin for the interrupt tests (deadline_test.go): each tool
;; never returns on its own. The manifest is filled in by the test.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{{MANIFEST}}")
  ;; a WASI clock subscription of 10 ms at 256, for sleep
  (data (i32.const 256) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\80\96\98\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")

  (func (export "wb_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "manifest") (result i32)
    (call $output_set (i32.const 1024) (i32.const {{MANIFEST_LEN}}))
    (i32.const 0))

  ;; loop spins in a loop.
  (func (export "runaway_loop") (param i32 i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0))
  ;; recurse calls itself until the stack runs out.
  (func $recurse (export "runaway_recurse") (param i32 i32) (result i32)
    (call $recurse (local.get 0) (local.get 1)))
  ;; tree calls itself twice per level, 2^60 calls in all, never deep.
  (func $tree (param $depth i32)
    (if (local.get $depth)
      (then
        (call $tree (i32.sub (local.get $depth) (i32.const 1)))
        (call $tree (i32.sub (local.get $depth) (i32.const 1))))))
  (func (export "runaway_tree") (param i32 i32) (result i32)
    (call $tree (i32.const 60))
    (i32.const 0))
  ;; sleep sleeps 10 ms at a time, forever.
  (func (export "runaway_sleep") (param i32 i32) (result i32)
    (loop $forever
      (drop (call $poll_oneoff (i32.const 256) (i32.const 512) (i32.const 1) (i32.const 600)))
      (br $forever))
    (i32.const 0)))
