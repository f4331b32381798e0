;; slowstart.wat: the guest of the start-up tests (tests/startup_test.go),
;; small.wat with a start-up delay: every instance sleeps 5 s (poll_oneoff on
;; the monotonic clock) before it reads its request, its describe run at
;; load included, so its module takes at least that long to load.
;;
;; Rebuild after editing: wat2wasm slowstart.wat -o slowstart.wasm   (wabt)
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))

  (memory (export "memory") 2)

  ;; Layout: 0..16 iovec and count scratch; 64..112 the clock subscription,
  ;; 112..144 its event, 144 the event count; 256.. NUL-terminated strings;
  ;; 4096.. output buffer; 8192..73728 input buffer.
  (global $in i32 (i32.const 8192))
  (global $in_cap i32 (i32.const 65536))
  (global $out i32 (i32.const 4096))
  (global $in_len (mut i32) (i32.const 0))
  (global $out_len (mut i32) (i32.const 0))

  (data (i32.const 256) "\"id\":\00")
  (data (i32.const 272) "\"method\":\"wasmcp/describe\"\00")
  (data (i32.const 320) "{\"jsonrpc\":\"2.0\",\"id\":\00")
  (data (i32.const 352) ",\"result\":\00")
  (data (i32.const 368) "}\0a\00")
  (data (i32.const 384)
    "{\"abiVersion\":1,\"name\":\"slowstart\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"slow_hello\",\"description\":\"Says hello after a 5 s start-up.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 768)
    "{\"content\":[{\"type\":\"text\",\"text\":\"hello from slowstart\"}]}\00")

  ;; strlen of a NUL-terminated string.
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; append copies n bytes from p to the end of the output buffer.
  (func $append (param $p i32) (param $n i32)
    (memory.copy (i32.add (global.get $out) (global.get $out_len)) (local.get $p) (local.get $n))
    (global.set $out_len (i32.add (global.get $out_len) (local.get $n))))

  (func $append_z (param $p i32)
    (call $append (local.get $p) (call $strlen (local.get $p))))

  ;; find returns the index in the input of the NUL-terminated pattern, or -1.
  (func $find (param $pat i32) (result i32)
    (local $plen i32) (local $i i32) (local $j i32)
    (local.set $plen (call $strlen (local.get $pat)))
    (block $miss
      (loop $at
        (br_if $miss (i32.gt_s (i32.add (local.get $i) (local.get $plen)) (global.get $in_len)))
        (local.set $j (i32.const 0))
        (block $differ
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $plen)) (then (return (local.get $i))))
            (br_if $differ (i32.ne
              (i32.load8_u (i32.add (global.get $in) (i32.add (local.get $i) (local.get $j))))
              (i32.load8_u (i32.add (local.get $pat) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const -1))

  ;; read_line fills the input buffer until it holds a newline or stdin ends.
  (func $read_line
    (local $n i32) (local $k i32)
    (loop $more
      (i32.store (i32.const 0) (i32.add (global.get $in) (global.get $in_len)))
      (i32.store (i32.const 4) (i32.sub (global.get $in_cap) (global.get $in_len)))
      (if (i32.ne (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)) (i32.const 0))
        (then (return)))
      (local.set $n (i32.load (i32.const 8)))
      (if (i32.eqz (local.get $n)) (then (return)))
      ;; stop at a newline among the bytes just read
      (local.set $k (global.get $in_len))
      (global.set $in_len (i32.add (global.get $in_len) (local.get $n)))
      (block $scanned
        (loop $scan
          (br_if $scanned (i32.ge_u (local.get $k) (global.get $in_len)))
          (if (i32.eq (i32.load8_u (i32.add (global.get $in) (local.get $k))) (i32.const 10))
            (then (return)))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $scan)))
      (br_if $more (i32.lt_u (global.get $in_len) (global.get $in_cap)))))

  (func $is_id_char (param $c i32) (result i32)
    (i32.or
      (i32.eq (local.get $c) (i32.const 45))                    ;; '-'
      (i32.lt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 10))))

  ;; sleep waits 5 s: one subscription to the monotonic clock (tag 0,
  ;; clock id 1, relative timeout in ns).
  (func $sleep
    (i64.store (i32.const 64) (i64.const 0))          ;; userdata
    (i32.store8 (i32.const 72) (i32.const 0))         ;; tag: clock
    (i32.store (i32.const 80) (i32.const 1))          ;; id: monotonic
    (i64.store (i32.const 88) (i64.const 5000000000)) ;; timeout
    (i64.store (i32.const 96) (i64.const 0))          ;; precision
    (i32.store16 (i32.const 104) (i32.const 0))       ;; flags: relative
    (drop (call $poll_oneoff (i32.const 64) (i32.const 112) (i32.const 1) (i32.const 144))))

  (func (export "_start")
    (local $at i32) (local $end i32)
    (call $sleep)
    (call $read_line)
    (local.set $at (call $find (i32.const 256)))
    (if (i32.lt_s (local.get $at) (i32.const 0)) (then (return)))
    (local.set $at (i32.add (global.get $in) (i32.add (local.get $at) (i32.const 5))))
    ;; skip spaces after the colon
    (block $skipped
      (loop $sp
        (br_if $skipped (i32.ne (i32.load8_u (local.get $at)) (i32.const 32)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $sp)))
    (local.set $end (local.get $at))
    (block $ended
      (loop $digit
        (br_if $ended (i32.eqz (call $is_id_char (i32.load8_u (local.get $end)))))
        (local.set $end (i32.add (local.get $end) (i32.const 1)))
        (br $digit)))
    (call $append_z (i32.const 320))
    (call $append (local.get $at) (i32.sub (local.get $end) (local.get $at)))
    (call $append_z (i32.const 352))
    (if (i32.ge_s (call $find (i32.const 272)) (i32.const 0))
      (then (call $append_z (i32.const 384)))
      (else (call $append_z (i32.const 768))))
    (call $append_z (i32.const 368))
    ;; write the whole answer, looping over short writes
    (local.set $at (global.get $out))
    (local.set $end (i32.add (global.get $out) (global.get $out_len)))
    (block $written
      (loop $write
        (br_if $written (i32.ge_u (local.get $at) (local.get $end)))
        (i32.store (i32.const 0) (local.get $at))
        (i32.store (i32.const 4) (i32.sub (local.get $end) (local.get $at)))
        (br_if $written (i32.ne (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)) (i32.const 0)))
        (br_if $written (i32.eqz (i32.load (i32.const 8))))
        (local.set $at (i32.add (local.get $at) (i32.load (i32.const 8))))
        (br $write))))
)
