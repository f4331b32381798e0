// Standard base64 (RFC 4648, padded), for binary HTTP bodies and blobs.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** encodeBase64 writes bytes as padded standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  const parts = new Array<string>();
  for (let i = 0; i < bytes.length; i += 3) {
    let v: u32 = (<u32>bytes[i]) << 16;
    if (i + 1 < bytes.length) v |= (<u32>bytes[i + 1]) << 8;
    if (i + 2 < bytes.length) v |= <u32>bytes[i + 2];
    parts.push(ALPHABET.charAt((v >> 18) & 63));
    parts.push(ALPHABET.charAt((v >> 12) & 63));
    parts.push(i + 1 < bytes.length ? ALPHABET.charAt((v >> 6) & 63) : "=");
    parts.push(i + 2 < bytes.length ? ALPHABET.charAt(v & 63) : "=");
  }
  return parts.join("");
}

function sextet(c: i32): i32 {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/** decodeBase64 reads standard base64 (padding optional); null on a character outside the alphabet. */
export function decodeBase64(s: string): Uint8Array | null {
  let n = s.length;
  while (n > 0 && s.charCodeAt(n - 1) == 0x3d) n--;
  const out = new Uint8Array((n * 6) >> 3);
  let v: u32 = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < n; i++) {
    const d = sextet(s.charCodeAt(i));
    if (d < 0) return null;
    v = (v << 6) | <u32>d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = <u8>((v >> bits) & 0xff);
    }
  }
  return out;
}
