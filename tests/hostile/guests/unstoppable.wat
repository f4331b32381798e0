;; unstoppable.wat — an invalid module built to defeat a deadline: its one
;; tool, clear_interrupt, loops writing 0 to global 0, a global it does not
;; define. A host that appends a global of its own before validating the
;; module (an interrupt flag its loops check, say) would find the module
;; valid, and this loop would clear that flag faster than the deadline sets
;; it. The host must refuse the module at load.
;;
;; wat2wasm flags: --no-check
;; Build: wat2wasm --no-check unstoppable.wat -o unstoppable.wasm (the .wasm
;; is committed; wat2wasm without --no-check refuses the undefined global).
;;
;; Memory: 0 iovec (ptr, len), 8 nwritten/nread, 1024 strings, 65536 the
;; request line (up to 64 KiB).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))

  (memory (export "memory") 2)

  (data (i32.const 1024) "\"id\":")                       ;; 5 bytes
  (data (i32.const 1040) "\"wasmcp/describe\"")            ;; 17 bytes
  (data (i32.const 1072) "{\"jsonrpc\":\"2.0\",\"id\":")   ;; 22 bytes
  (data (i32.const 1104)                                   ;; 127 bytes
    ",\"result\":{\"abiVersion\":1,\"name\":\"unstoppable\",\"tools\":[{\"name\":\"clear_interrupt\",\"description\":\"Loops clearing global 0.\"}]}}\0a")

  ;; write len bytes at ptr to stdout.
  (func $out (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))

  ;; read stdin into 65536.. until a newline or EOF; returns the length.
  (func $read_line (result i32)
    (local $n i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 65536) (local.get $n)))
        (i32.store (i32.const 4) (i32.sub (i32.const 65536) (local.get $n)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $done (i32.eqz (i32.load (i32.const 8))))
        (local.set $n (i32.add (local.get $n) (i32.load (i32.const 8))))
        (br_if $done (i32.ge_u (local.get $n) (i32.const 65536)))
        (br_if $done (i32.eq (i32.load8_u (i32.add (i32.const 65535) (local.get $n))) (i32.const 10)))
        (br $more)))
    (local.get $n))

  ;; at: the offset of the needle (ptr, len) in the first n bytes of the
  ;; request, or -1.
  (func $at (param $n i32) (param $ptr i32) (param $len i32) (result i32)
    (local $i i32) (local $j i32)
    (block $none
      (loop $try
        (br_if $none (i32.gt_s (i32.add (local.get $i) (local.get $len)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $miss
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $len)) (then (return (local.get $i))))
            (br_if $miss (i32.ne
              (i32.load8_u (i32.add (i32.add (i32.const 65536) (local.get $i)) (local.get $j)))
              (i32.load8_u (i32.add (local.get $ptr) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $try)))
    (i32.const -1))

  (func (export "_start")
    (local $n i32) (local $id i32) (local $end i32)
    (local.set $n (call $read_line))
    (if (i32.ge_s (call $at (local.get $n) (i32.const 1040) (i32.const 17)) (i32.const 0))
      (then
        ;; Answer the description, echoing the id (digits up to ',').
        (local.set $id (i32.add (i32.add (i32.const 65536)
          (call $at (local.get $n) (i32.const 1024) (i32.const 5))) (i32.const 5)))
        (local.set $end (local.get $id))
        (block $done
          (loop $digit
            (br_if $done (i32.eq (i32.load8_u (local.get $end)) (i32.const 44)))
            (local.set $end (i32.add (local.get $end) (i32.const 1)))
            (br $digit)))
        (call $out (i32.const 1072) (i32.const 22))
        (call $out (local.get $id) (i32.sub (local.get $end) (local.get $id)))
        (call $out (i32.const 1104) (i32.const 127))
        (return)))
    ;; clear_interrupt: loop writing 0 to global 0, which does not exist.
    (loop $spin
      (global.set 0 (i32.const 0))
      (br $spin)))
)

