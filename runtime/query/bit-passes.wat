;; The word-by-word passes of the query engine over bitsets (runtime/query/intersect.ts),
;; 128 bits at a time. In JavaScript each pass is a loop over size/32 words (31,250 at a
;; million jobs) with a bounds check and a table lookup per word; here it is four words per
;; SIMD instruction and popcnt.
;;
;; Every bitset lives in the one memory this module imports (runtime/query/bit-arena.ts):
;; arguments are byte offsets into it, 16-byte aligned, and `words` is how many 32-bit words
;; of each operand to read or write (the rest are left as they are). Each pass does its
;; whole vectors first, then the last 0-3 words one by one.
;;
;; Edit this file, then `npm run wasm` writes bit-passes.wasm.ts (test/build/bit-passes.test.ts
;; fails while the two disagree).
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; out &= a
  (func (export "and") (param $out i32) (param $a i32) (param $words i32)
    (local $end i32) (local $vectors i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vectors (i32.add (local.get $out) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $vectors)))
      (v128.store (local.get $out) (v128.and (v128.load (local.get $out)) (v128.load (local.get $a))))
      (local.set $out (i32.add (local.get $out) (i32.const 16)))
      (local.set $a (i32.add (local.get $a) (i32.const 16)))
      (br $next)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
      (i32.store (local.get $out) (i32.and (i32.load (local.get $out)) (i32.load (local.get $a))))
      (local.set $out (i32.add (local.get $out) (i32.const 4)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (br $next))))

  ;; out &= a; returns the bits left set
  (func (export "andCount") (param $out i32) (param $a i32) (param $words i32) (result i32)
    (local $end i32) (local $vectors i32) (local $v v128) (local $w i32) (local $count i64)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vectors (i32.add (local.get $out) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $vectors)))
      (local.set $v (v128.and (v128.load (local.get $out)) (v128.load (local.get $a))))
      (v128.store (local.get $out) (local.get $v))
      (local.set $count (i64.add (local.get $count)
        (i64.add (i64.popcnt (i64x2.extract_lane 0 (local.get $v))) (i64.popcnt (i64x2.extract_lane 1 (local.get $v))))))
      (local.set $out (i32.add (local.get $out) (i32.const 16)))
      (local.set $a (i32.add (local.get $a) (i32.const 16)))
      (br $next)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
      (local.set $w (i32.and (i32.load (local.get $out)) (i32.load (local.get $a))))
      (i32.store (local.get $out) (local.get $w))
      (local.set $count (i64.add (local.get $count) (i64.extend_i32_u (i32.popcnt (local.get $w)))))
      (local.set $out (i32.add (local.get $out) (i32.const 4)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (br $next)))
    (i32.wrap_i64 (local.get $count)))

  ;; the bits set in both a and b (a and b the same offset: the bits set in a); writes nothing
  (func (export "countAnd") (param $a i32) (param $b i32) (param $words i32) (result i32)
    (local $end i32) (local $vectors i32) (local $v v128) (local $count i64)
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vectors (i32.add (local.get $a) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $a) (local.get $vectors)))
      (local.set $v (v128.and (v128.load (local.get $a)) (v128.load (local.get $b))))
      (local.set $count (i64.add (local.get $count)
        (i64.add (i64.popcnt (i64x2.extract_lane 0 (local.get $v))) (i64.popcnt (i64x2.extract_lane 1 (local.get $v))))))
      (local.set $a (i32.add (local.get $a) (i32.const 16)))
      (local.set $b (i32.add (local.get $b) (i32.const 16)))
      (br $next)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
      (local.set $count (i64.add (local.get $count)
        (i64.extend_i32_u (i32.popcnt (i32.and (i32.load (local.get $a)) (i32.load (local.get $b)))))))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (local.set $b (i32.add (local.get $b) (i32.const 4)))
      (br $next)))
    (i32.wrap_i64 (local.get $count)))

  ;; out = a | b (out may be a or b)
  (func (export "or") (param $out i32) (param $a i32) (param $b i32) (param $words i32)
    (local $end i32) (local $vectors i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vectors (i32.add (local.get $out) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $vectors)))
      (v128.store (local.get $out) (v128.or (v128.load (local.get $a)) (v128.load (local.get $b))))
      (local.set $out (i32.add (local.get $out) (i32.const 16)))
      (local.set $a (i32.add (local.get $a) (i32.const 16)))
      (local.set $b (i32.add (local.get $b) (i32.const 16)))
      (br $next)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
      (i32.store (local.get $out) (i32.or (i32.load (local.get $a)) (i32.load (local.get $b))))
      (local.set $out (i32.add (local.get $out) (i32.const 4)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (local.set $b (i32.add (local.get $b) (i32.const 4)))
      (br $next))))

  ;; out &= a | b
  (func (export "andOr") (param $out i32) (param $a i32) (param $b i32) (param $words i32)
    (local $end i32) (local $vectors i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vectors (i32.add (local.get $out) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $vectors)))
      (v128.store (local.get $out)
        (v128.and (v128.load (local.get $out)) (v128.or (v128.load (local.get $a)) (v128.load (local.get $b)))))
      (local.set $out (i32.add (local.get $out) (i32.const 16)))
      (local.set $a (i32.add (local.get $a) (i32.const 16)))
      (local.set $b (i32.add (local.get $b) (i32.const 16)))
      (br $next)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
      (i32.store (local.get $out)
        (i32.and (i32.load (local.get $out)) (i32.or (i32.load (local.get $a)) (i32.load (local.get $b)))))
      (local.set $out (i32.add (local.get $out) (i32.const 4)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (local.set $b (i32.add (local.get $b) (i32.const 4)))
      (br $next))))
)
