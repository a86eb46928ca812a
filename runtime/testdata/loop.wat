;; A loop for the interrupt benchmarks (bench_test.go): loop_sum adds the
;; numbers below n, the input length being unused; n is passed as the
;; pointer so the benchmark needs no memory traffic.
(module
  (import "workbench_v1" "output_set" (func $output_set (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "loop_sum") (param $n i32) (param i32) (result i32) (local $acc i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $acc)))
