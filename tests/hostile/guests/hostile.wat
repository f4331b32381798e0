;; hostile.wat — a wasmcp guest (ABI v1, command shape) whose tools each
;; misbehave in one exact way. The battery in tests/hostile runs every tool
;; through `wasmcp serve` and checks what the client gets.
;;
;; Build: wat2wasm hostile.wat -o hostile.wasm (the .wasm is committed; the
;; battery's TestWATUpToDate rebuilds it and compares when wat2wasm is
;; installed).
;;
;; The guest reads one request line, answers wasmcp/describe with the
;; description below, and for tools/call dispatches on params.name. It
;; parses just enough JSON for that: the first "id": (the host writes the
;; id before the params) and the first "name":" (the harness sends compact
;; JSON).
;;
;; Memory map (page 0 and 1 fixed, pages 2..3 buffers):
;;   0      iovec for writes (ptr, len), 8: nwritten
;;   16     iovec for reads (ptr, len),  24: nread
;;   64     number scratch (up to 20 digits)
;;   1024   NUL-terminated strings, one per 256-byte slot
;;   8192   the description (NUL-terminated)
;;   131072 the request line (64 KiB)
;;   196608 the flood buffer (64 KiB)
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

  (memory (export "memory") 4)

  (global $req_len (mut i32) (i32.const 0))
  (global $id_ptr (mut i32) (i32.const 0))
  (global $id_len (mut i32) (i32.const 0))
  (global $name_ptr (mut i32) (i32.const 0))
  (global $name_len (mut i32) (i32.const 0))

  ;; Strings (slot addresses are used below by number).
  (data (i32.const 1024) "\"id\":\00")                              ;; needle for the id
  (data (i32.const 1280) "\"name\":\"\00")                          ;; needle for the tool name
  (data (i32.const 1536) "\"wasmcp/describe\"\00")
  (data (i32.const 1792) "{\"jsonrpc\":\"2.0\",\"id\":\00")
  (data (i32.const 2048) ",\"result\":\00")
  (data (i32.const 2304) "}\0a\00")
  (data (i32.const 2560) "{\"content\":[{\"type\":\"text\",\"text\":\"\00")
  (data (i32.const 2816) "\"}]}\00")
  (data (i32.const 3072) "\"}],\"isError\":true}\00")
  (data (i32.const 3328) "{\"content\":[\0a\00")                     ;; malformed: cut short
  (data (i32.const 3584) "{\"jsonrpc\":\"2.0\",\"id\":987654321,\"result\":{\"content\":[]}}\0a\00")
  (data (i32.const 3840) "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"warning\",\"logger\":\"hostile\",\"data\":\"flood\"}}\0a\00")
  (data (i32.const 4096) ",\"method\":\"elicitation/create\",\"params\":{\"message\":\"flood\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\0a\00")
  (data (i32.const 4352) "{\"jsonrpc\":\"2.0\",\"id\":\"r\00")
  (data (i32.const 4608) "\"\00")
  (data (i32.const 4864) "first answer\00")
  (data (i32.const 5120) "second answer\00")
  (data (i32.const 5376) "fd_read after fd_close(0): errno \00")
  (data (i32.const 5632) "fd_write(3)=\00")
  (data (i32.const 5888) " fd_write(99)=\00")
  (data (i32.const 6144) " fd_write(-1)=\00")
  (data (i32.const 6400) " fd_write(2147483647)=\00")
  (data (i32.const 6656) "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32602,\"message\":\"hostile: unknown tool\"},\"id\":\00")
  (data (i32.const 6912) "{\"jsonrpc\":\"2.0\",\"id\":\00")          ;; exit_mid: half of a response
  (data (i32.const 7168) ",\"result\":{\"content\":[{\"type\":\"te\00")
  ;; tool names
  (data (i32.const 7424) "loop\00")
  (data (i32.const 7440) "recurse\00")
  (data (i32.const 7456) "grow\00")
  (data (i32.const 7472) "stdout_flood\00")
  (data (i32.const 7488) "endless_line\00")
  (data (i32.const 7504) "malformed\00")
  (data (i32.const 7520) "wrong_id\00")
  (data (i32.const 7536) "two_responses\00")
  (data (i32.const 7552) "silent\00")
  (data (i32.const 7568) "exit_mid\00")
  (data (i32.const 7584) "unreachable\00")
  (data (i32.const 7600) "closed_stdin\00")
  (data (i32.const 7616) "bad_fds\00")
  (data (i32.const 7632) "notify_flood\00")
  (data (i32.const 7648) "request_flood\00")
  (data (i32.const 7664) "close_stdout\00")

  (data (i32.const 8192)
    "{\"abiVersion\":1,\"name\":\"hostile\",\"version\":\"1.0.0\",\"tools\":["
    "{\"name\":\"loop\",\"description\":\"Spins in an empty loop forever.\"},"
    "{\"name\":\"recurse\",\"description\":\"Calls itself until the stack is exhausted.\"},"
    "{\"name\":\"grow\",\"description\":\"Grows memory a page at a time until refused, then traps.\"},"
    "{\"name\":\"stdout_flood\",\"description\":\"Writes blank lines to stdout forever.\"},"
    "{\"name\":\"endless_line\",\"description\":\"Writes one line that never ends.\"},"
    "{\"name\":\"malformed\",\"description\":\"Writes a line of broken JSON.\"},"
    "{\"name\":\"wrong_id\",\"description\":\"Answers with an id the host did not send.\"},"
    "{\"name\":\"two_responses\",\"description\":\"Answers twice.\"},"
    "{\"name\":\"silent\",\"description\":\"Never answers and never exits (blocks reading stdin).\"},"
    "{\"name\":\"exit_mid\",\"description\":\"Exits with code 7 in the middle of its answer.\"},"
    "{\"name\":\"unreachable\",\"description\":\"Executes unreachable.\"},"
    "{\"name\":\"closed_stdin\",\"description\":\"Closes stdin and reads it.\"},"
    "{\"name\":\"bad_fds\",\"description\":\"Writes to file descriptors it does not have.\"},"
    "{\"name\":\"notify_flood\",\"description\":\"Writes log notifications forever.\"},"
    "{\"name\":\"request_flood\",\"description\":\"Sends elicitation requests to the client without waiting.\"},"
    "{\"name\":\"close_stdout\",\"description\":\"Closes stdout, then tries to answer.\"}"
    "]}\00")

  ;; strlen of a NUL-terminated string.
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; write: one fd_write of len bytes at ptr to fd; returns the errno.
  (func $write (param $fd i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))

  ;; out: writes all of a buffer to stdout (short writes are retried).
  (func $out (param $ptr i32) (param $len i32)
    (block $done
      (loop $more
        (br_if $done (i32.le_s (local.get $len) (i32.const 0)))
        (br_if $done (call $write (i32.const 1) (local.get $ptr) (local.get $len)))
        (local.set $ptr (i32.add (local.get $ptr) (i32.load (i32.const 8))))
        (local.set $len (i32.sub (local.get $len) (i32.load (i32.const 8))))
        (br $more))))

  ;; puts: writes a NUL-terminated string to stdout.
  (func $puts (param $s i32)
    (call $out (local.get $s) (call $strlen (local.get $s))))

  ;; putu: writes an unsigned decimal number to stdout.
  (func $putu (param $v i32)
    (local $p i32)
    (local.set $p (i32.const 84))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digit (local.get $v)))
    (call $out (local.get $p) (i32.sub (i32.const 84) (local.get $p))))

  ;; read_line: reads stdin into the request buffer until a newline, EOF or
  ;; a full buffer; sets $req_len.
  (func $read_line
    (local $got i32)
    (block $done
      (loop $more
        (i32.store (i32.const 16) (i32.add (i32.const 131072) (global.get $req_len)))
        (i32.store (i32.const 20) (i32.sub (i32.const 65536) (global.get $req_len)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 24)))
        (local.set $got (i32.load (i32.const 24)))
        (br_if $done (i32.eqz (local.get $got)))
        (global.set $req_len (i32.add (global.get $req_len) (local.get $got)))
        (br_if $done (i32.ge_u (global.get $req_len) (i32.const 65536)))
        (br_if $done (i32.eq (i32.load8_u (i32.add (i32.const 131071) (global.get $req_len))) (i32.const 10)))
        (br $more))))

  ;; find: the offset in the request of the first occurrence of a
  ;; NUL-terminated needle, or -1.
  (func $find (param $needle i32) (result i32)
    (local $n i32) (local $i i32) (local $j i32)
    (local.set $n (call $strlen (local.get $needle)))
    (block $none
      (loop $at
        (br_if $none (i32.gt_s (i32.add (local.get $i) (local.get $n)) (global.get $req_len)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $n)) (then (return (local.get $i))))
            (br_if $mismatch (i32.ne
              (i32.load8_u (i32.add (i32.add (i32.const 131072) (local.get $i)) (local.get $j)))
              (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const -1))

  ;; span: the length of the run starting at ptr that stops before any of
  ;; the bytes a or b.
  (func $span (param $ptr i32) (param $a i32) (param $b i32) (result i32)
    (local $n i32) (local $c i32)
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (i32.add (local.get $ptr) (local.get $n)) (i32.add (i32.const 131072) (global.get $req_len))))
        (local.set $c (i32.load8_u (i32.add (local.get $ptr) (local.get $n))))
        (br_if $done (i32.eq (local.get $c) (local.get $a)))
        (br_if $done (i32.eq (local.get $c) (local.get $b)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $more)))
    (local.get $n))

  ;; is: whether the tool name equals a NUL-terminated string.
  (func $is (param $s i32) (result i32)
    (local $i i32)
    (if (i32.ne (call $strlen (local.get $s)) (global.get $name_len)) (then (return (i32.const 0))))
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $i) (global.get $name_len)))
        (if (i32.ne (i32.load8_u (i32.add (global.get $name_ptr) (local.get $i)))
                    (i32.load8_u (i32.add (local.get $s) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $more)))
    (i32.const 1))

  ;; head: writes {"jsonrpc":"2.0","id":<id>,"result":
  (func $head
    (call $puts (i32.const 1792))
    (call $out (global.get $id_ptr) (global.get $id_len))
    (call $puts (i32.const 2048)))

  ;; answer_text: answers a CallToolResult with one text block.
  (func $answer_text (param $text i32)
    (call $head)
    (call $puts (i32.const 2560))
    (call $puts (local.get $text))
    (call $puts (i32.const 2816))
    (call $puts (i32.const 2304)))

  ;; fill: fills the flood buffer with byte c, a newline every 1024 bytes
  ;; when nl is set.
  (func $fill (param $c i32) (param $nl i32)
    (local $i i32)
    (loop $more
      (i32.store8 (i32.add (i32.const 196608) (local.get $i))
        (select (i32.const 10) (local.get $c)
          (i32.and (local.get $nl) (i32.eq (i32.and (local.get $i) (i32.const 1023)) (i32.const 1023)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 65536)))))

  ;; flood: writes the flood buffer to stdout until a write fails.
  (func $flood
    (loop $more
      (br_if $more (i32.eqz (call $write (i32.const 1) (i32.const 196608) (i32.const 65536))))))

  (func $recurse (param $depth i64) (result i64)
    (i64.add (call $recurse (i64.add (local.get $depth) (i64.const 1))) (local.get $depth)))

  (func (export "_start")
    (local $at i32) (local $k i32) (local $e i32)
    (call $read_line)
    (local.set $at (call $find (i32.const 1024)))
    (if (i32.lt_s (local.get $at) (i32.const 0)) (then (call $proc_exit (i32.const 2))))
    (global.set $id_ptr (i32.add (i32.add (i32.const 131072) (local.get $at)) (i32.const 5)))
    (global.set $id_len (call $span (global.get $id_ptr) (i32.const 44) (i32.const 125))) ;; ',' '}'

    (if (i32.ge_s (call $find (i32.const 1536)) (i32.const 0))
      (then
        (call $head)
        (call $puts (i32.const 8192))
        (call $puts (i32.const 2304))
        (return)))

    (local.set $at (call $find (i32.const 1280)))
    (if (i32.ge_s (local.get $at) (i32.const 0))
      (then
        (global.set $name_ptr (i32.add (i32.add (i32.const 131072) (local.get $at)) (i32.const 8)))
        (global.set $name_len (call $span (global.get $name_ptr) (i32.const 34) (i32.const 34)))))

    (if (call $is (i32.const 7424)) (then (loop $spin (br $spin))))
    (if (call $is (i32.const 7440)) (then (drop (call $recurse (i64.const 0))) (return)))
    (if (call $is (i32.const 7456))
      (then
        (loop $grow (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
        unreachable))
    (if (call $is (i32.const 7472)) (then (call $fill (i32.const 32) (i32.const 1)) (call $flood) (return)))
    (if (call $is (i32.const 7488)) (then (call $fill (i32.const 120) (i32.const 0)) (call $flood) (return)))
    (if (call $is (i32.const 7504)) (then (call $puts (i32.const 3328)) (return)))
    (if (call $is (i32.const 7520)) (then (call $puts (i32.const 3584)) (return)))
    (if (call $is (i32.const 7536))
      (then
        (call $answer_text (i32.const 4864))
        (call $answer_text (i32.const 5120))
        (return)))
    (if (call $is (i32.const 7552))
      (then
        ;; Block on stdin for more input that never comes; if a read ever
        ;; returns, block again.
        (loop $wait
          (global.set $req_len (i32.const 0))
          (call $read_line)
          (br $wait))))
    (if (call $is (i32.const 7568))
      (then
        (call $puts (i32.const 6912))
        (call $out (global.get $id_ptr) (global.get $id_len))
        (call $puts (i32.const 7168))
        (call $proc_exit (i32.const 7))))
    (if (call $is (i32.const 7584)) (then unreachable))
    (if (call $is (i32.const 7600))
      (then
        (drop (call $fd_close (i32.const 0)))
        ;; Read the closed stdin a thousand times; keep the last errno.
        (loop $again
          (i32.store (i32.const 16) (i32.const 131072))
          (i32.store (i32.const 20) (i32.const 16))
          (local.set $e (call $fd_read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 24)))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br_if $again (i32.lt_u (local.get $k) (i32.const 1000))))
        (call $head)
        (call $puts (i32.const 2560))
        (call $puts (i32.const 5376))
        (call $putu (local.get $e))
        (call $puts (i32.const 3072))
        (call $puts (i32.const 2304))
        (return)))
    (if (call $is (i32.const 7616))
      (then
        (call $head)
        (call $puts (i32.const 2560))
        (call $puts (i32.const 5632))
        (call $putu (call $write (i32.const 3) (i32.const 1024) (i32.const 4)))
        (call $puts (i32.const 5888))
        (call $putu (call $write (i32.const 99) (i32.const 1024) (i32.const 4)))
        (call $puts (i32.const 6144))
        (call $putu (call $write (i32.const -1) (i32.const 1024) (i32.const 4)))
        (call $puts (i32.const 6400))
        (call $putu (call $write (i32.const 2147483647) (i32.const 1024) (i32.const 4)))
        (call $puts (i32.const 3072))
        (call $puts (i32.const 2304))
        (return)))
    (if (call $is (i32.const 7632))
      (then
        (loop $note
          (call $puts (i32.const 3840))
          (br $note))))
    (if (call $is (i32.const 7648))
      (then
        ;; Thirty-two requests without waiting for answers (ids "r0".."r31"),
        ;; then wait.
        (local.set $k (i32.const 0))
        (loop $req
          (call $puts (i32.const 4352))
          (call $putu (local.get $k))
          (call $puts (i32.const 4608))
          (call $puts (i32.const 4096))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br_if $req (i32.lt_u (local.get $k) (i32.const 32))))
        (loop $wait
          (global.set $req_len (i32.const 0))
          (call $read_line)
          (br $wait))))
    (if (call $is (i32.const 7664))
      (then
        (drop (call $fd_close (i32.const 1)))
        (call $answer_text (i32.const 4864))
        (return)))

    ;; Unknown tool: a JSON-RPC error.
    (call $puts (i32.const 6656))
    (call $out (global.get $id_ptr) (global.get $id_len))
    (call $puts (i32.const 2304)))
)
