;; module.wat is an ABI v1 echo plugin whose manifest comes from the test
;; (servertest.EchoModule fills in the WAT-escaped manifest JSON, its length
;; in bytes, and one export of $echo per tool slug). Every
;; tool returns its input, except that the input {"fail":true} makes it fail
;; with the code FLAKY.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{{MANIFEST}}")
  (data (i32.const 512) "{\"code\":\"FLAKY\",\"message\":\"asked to fail\"}")
  (data (i32.const 600) "{\"fail\":true}")
  ;; the input always goes to the second page
  (func (export "wb_alloc") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "manifest") (result i32)
    (call $output_set (i32.const 1024) (i32.const {{LEN}}))
    (i32.const 0))
  (func $echo (param $ptr i32) (param $len i32) (result i32)
    (local $i i32)
    ;; 13 bytes equal to {"fail":true}: fail
    (if (i32.eq (local.get $len) (i32.const 13))
      (then
        (local.set $i (i32.const 0))
        (block $differ
          (loop $cmp
            (br_if $differ (i32.ne (i32.load8_u (i32.add (local.get $ptr) (local.get $i)))
                                   (i32.load8_u (i32.add (i32.const 600) (local.get $i)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br_if $cmp (i32.lt_u (local.get $i) (i32.const 13))))
          (call $output_set (i32.const 512) (i32.const 42))
          (return (i32.const 1)))))
    (call $output_set (local.get $ptr) (local.get $len))
    (i32.const 0))
  {{EXPORTS}}
)
