// Line-oriented stdin and stdout for the SDK, straight on WASI preview 1
// (fd_read, fd_write): one JSON-RPC message per line, UTF-8.

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
declare function wasi_fd_read(fd: u32, iovs: usize, iovsLen: usize, nread: usize): u16;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
declare function wasi_fd_write(fd: u32, iovs: usize, iovsLen: usize, nwritten: usize): u16;

const ERRNO_INTR: u16 = 27;
const ERRNO_AGAIN: u16 = 6;

// The bytes read from stdin and not yet returned as lines.
let inBuf = new Uint8Array(0);
let inLen: i32 = 0;
let inEOF = false;

/** Whether stdin has ended (no more lines will come). */
export function stdinEnded(): bool {
  return inEOF && inLen == 0;
}

/**
 * readLine returns the next line of stdin without its newline, decoded from
 * UTF-8, or null at end of input (a last line without a newline is still
 * returned) or on a read error.
 */
export function readLine(): string | null {
  let scanned = 0;
  while (true) {
    for (let i = scanned; i < inLen; i++) {
      if (inBuf[i] == 0x0a) return takeLine(i, i + 1);
    }
    scanned = inLen;
    if (inEOF) {
      if (inLen == 0) return null;
      return takeLine(inLen, inLen);
    }
    if (inLen == inBuf.length) {
      const grown = new Uint8Array(inBuf.length == 0 ? 4096 : inBuf.length * 2);
      grown.set(inBuf);
      inBuf = grown;
    }
    const iov = memory.data(16);
    store<u32>(iov, <u32>(inBuf.dataStart + <usize>inLen));
    store<u32>(iov, <u32>(inBuf.length - inLen), 4);
    const err = wasi_fd_read(0, iov, 1, iov + 8);
    if (err == ERRNO_INTR || err == ERRNO_AGAIN) continue;
    if (err != 0) {
      inEOF = true;
      inLen = 0;
      return null;
    }
    const n = load<u32>(iov, 8);
    if (n == 0) inEOF = true;
    inLen += <i32>n;
  }
}

// takeLine returns bytes [0, end) as a string and drops [0, used).
function takeLine(end: i32, used: i32): string {
  const line = String.UTF8.decodeUnsafe(inBuf.dataStart, <usize>end);
  inBuf.copyWithin(0, used, inLen);
  inLen -= used;
  return line;
}

/** writeLine writes s and a newline to stdout as UTF-8; false on a write error. */
export function writeLine(s: string): bool {
  return writeAll(1, String.UTF8.encode(s + "\n"));
}

/** writeStderr writes s and a newline to stderr (the host's log). */
export function writeStderr(s: string): void {
  writeAll(2, String.UTF8.encode(s + "\n"));
}

function writeAll(fd: u32, buf: ArrayBuffer): bool {
  let off: usize = 0;
  const total = <usize>buf.byteLength;
  const iov = memory.data(16);
  while (off < total) {
    store<u32>(iov, <u32>(changetype<usize>(buf) + off));
    store<u32>(iov, <u32>(total - off), 4);
    const err = wasi_fd_write(fd, iov, 1, iov + 8);
    if (err == ERRNO_INTR || err == ERRNO_AGAIN) continue;
    if (err != 0) return false;
    off += <usize>load<u32>(iov, 8);
  }
  return true;
}
