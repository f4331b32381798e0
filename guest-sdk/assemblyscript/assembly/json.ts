// A small JSON reader and writer (RFC 8259) for the wasmcp AssemblyScript
// SDK. AssemblyScript has no built-in JSON; this is a dynamic document
// model: parse() turns a text into a tree of Value, stringify() (or
// Value.toString()) turns a tree back into compact JSON text.
//
// Strings are AssemblyScript strings (UTF-16). The reader decodes every
// escape, \u escapes included; a \u surrogate pair becomes the one
// character it stands for, a lone surrogate becomes U+FFFD (as Go's
// encoding/json does). The writer escapes '"', '\\' and control characters
// and writes a lone surrogate as U+FFFD, so its output always encodes to
// valid UTF-8. Numbers are f64; integers up to 2^53 are exact and are
// written without a fraction ("6", not "6.0"); NaN and the infinities have
// no JSON form and are written as null.

/** The kind of a JSON value. */
export enum Kind {
  NULL = 0,
  BOOL = 1,
  NUMBER = 2,
  STRING = 3,
  ARRAY = 4,
  OBJECT = 5,
}

/** The deepest nesting of arrays and objects parse() accepts. */
export const MAX_DEPTH: i32 = 512;

/**
 * One JSON value. Build values with the static constructors
 * (Value.str("x"), Value.num(2), Value.object().set("a", ...)) and read
 * them with the accessors; an object keeps its members in order.
 */
export class Value {
  /** What this value is. */
  kind: Kind = Kind.NULL;
  /** The value of a BOOL. */
  boolean: bool = false;
  /** The value of a NUMBER. */
  number: f64 = 0;
  /** The value of a STRING. */
  string: string = "";
  /** The elements of an ARRAY. */
  items: Array<Value> = [];
  /** The member names of an OBJECT, in order (parallel to values). */
  keys: Array<string> = [];
  /** The member values of an OBJECT, in order (parallel to keys). */
  values: Array<Value> = [];

  /** null */
  static null(): Value {
    return new Value();
  }

  /** true or false */
  static bool(b: bool): Value {
    const v = new Value();
    v.kind = Kind.BOOL;
    v.boolean = b;
    return v;
  }

  /** A number. */
  static num(n: f64): Value {
    const v = new Value();
    v.kind = Kind.NUMBER;
    v.number = n;
    return v;
  }

  /** A string. */
  static str(s: string): Value {
    const v = new Value();
    v.kind = Kind.STRING;
    v.string = s;
    return v;
  }

  /** An empty array; add elements with push(). */
  static array(): Value {
    const v = new Value();
    v.kind = Kind.ARRAY;
    return v;
  }

  /** An empty object; add members with set(). */
  static object(): Value {
    const v = new Value();
    v.kind = Kind.OBJECT;
    return v;
  }

  /** An array of strings. */
  static strings(list: Array<string>): Value {
    const v = Value.array();
    for (let i = 0; i < list.length; i++) v.items.push(Value.str(list[i]));
    return v;
  }

  isNull(): bool {
    return this.kind == Kind.NULL;
  }
  isBool(): bool {
    return this.kind == Kind.BOOL;
  }
  isNumber(): bool {
    return this.kind == Kind.NUMBER;
  }
  isString(): bool {
    return this.kind == Kind.STRING;
  }
  isArray(): bool {
    return this.kind == Kind.ARRAY;
  }
  isObject(): bool {
    return this.kind == Kind.OBJECT;
  }

  /** Whether this is a number with no fraction, exactly representable (|n| <= 2^53). */
  isInteger(): bool {
    return this.kind == Kind.NUMBER && isInteger53(this.number);
  }

  /** The number of elements (array) or members (object); 0 otherwise. */
  get length(): i32 {
    if (this.kind == Kind.ARRAY) return this.items.length;
    if (this.kind == Kind.OBJECT) return this.keys.length;
    return 0;
  }

  /** The element at i of an array, or null. */
  at(i: i32): Value | null {
    if (this.kind != Kind.ARRAY || i < 0 || i >= this.items.length) return null;
    return this.items[i];
  }

  /** Appends an element to an array and returns the array. */
  push(v: Value): Value {
    assert(this.kind == Kind.ARRAY, "Value.push: not an array");
    this.items.push(v);
    return this;
  }

  /** The member called key of an object (the last one if repeated), or null. */
  get(key: string): Value | null {
    if (this.kind != Kind.OBJECT) return null;
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) return this.values[i];
    }
    return null;
  }

  /** Whether an object has a member called key. */
  has(key: string): bool {
    return this.get(key) != null;
  }

  /** Sets the member key of an object (replacing it if present) and returns the object. */
  set(key: string, v: Value): Value {
    assert(this.kind == Kind.OBJECT, "Value.set: not an object");
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) {
        this.values[i] = v;
        return this;
      }
    }
    this.keys.push(key);
    this.values.push(v);
    return this;
  }

  /** set(key, Value.str(s)) */
  setString(key: string, s: string): Value {
    return this.set(key, Value.str(s));
  }

  /** set(key, Value.num(n)) */
  setNumber(key: string, n: f64): Value {
    return this.set(key, Value.num(n));
  }

  /** set(key, Value.bool(b)) */
  setBool(key: string, b: bool): Value {
    return this.set(key, Value.bool(b));
  }

  /** The string member key of an object, or def when absent or not a string. */
  getString(key: string, def: string = ""): string {
    const v = this.get(key);
    if (v == null || v.kind != Kind.STRING) return def;
    return v.string;
  }

  /** The number member key of an object, or def when absent or not a number. */
  getNumber(key: string, def: f64 = 0): f64 {
    const v = this.get(key);
    if (v == null || v.kind != Kind.NUMBER) return def;
    return v.number;
  }

  /** The boolean member key of an object, or def when absent or not a boolean. */
  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    if (v == null || v.kind != Kind.BOOL) return def;
    return v.boolean;
  }

  /** A deep copy. */
  clone(): Value {
    const v = new Value();
    v.kind = this.kind;
    v.boolean = this.boolean;
    v.number = this.number;
    v.string = this.string;
    for (let i = 0; i < this.items.length; i++) v.items.push(this.items[i].clone());
    for (let i = 0; i < this.keys.length; i++) {
      v.keys.push(this.keys[i]);
      v.values.push(this.values[i].clone());
    }
    return v;
  }

  /** Deep equality; object members compare regardless of order. */
  equals(o: Value): bool {
    if (this.kind != o.kind) return false;
    switch (this.kind) {
      case Kind.NULL:
        return true;
      case Kind.BOOL:
        return this.boolean == o.boolean;
      case Kind.NUMBER:
        return this.number == o.number;
      case Kind.STRING:
        return this.string == o.string;
      case Kind.ARRAY: {
        if (this.items.length != o.items.length) return false;
        for (let i = 0; i < this.items.length; i++) {
          if (!this.items[i].equals(o.items[i])) return false;
        }
        return true;
      }
    }
    if (this.keys.length != o.keys.length) return false;
    for (let i = 0; i < this.keys.length; i++) {
      const w = o.get(this.keys[i]);
      if (w == null || !this.values[i].equals(w)) return false;
    }
    return true;
  }

  /** The compact JSON text of this value. */
  toString(): string {
    return stringify(this);
  }
}

/** What parseResult() returns: the value, or an error saying where the text went wrong. */
export class ParseResult {
  value: Value | null = null;
  error: string = "";
}

/** parse() reads one JSON text (surrounding whitespace allowed); null if it is not valid JSON. */
export function parse(text: string): Value | null {
  return parseResult(text).value;
}

/** parseResult() is parse() with an error message for invalid text. */
export function parseResult(text: string): ParseResult {
  const p = new Parser(text);
  const r = new ParseResult();
  p.ws();
  const v = p.value(0);
  if (v != null) {
    p.ws();
    if (p.pos != text.length) p.fail("text after the value");
  }
  if (p.error.length > 0) {
    r.error = p.error;
    return r;
  }
  r.value = v;
  return r;
}

function isDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x39;
}

function hexVal(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

class Parser {
  s: string;
  pos: i32 = 0;
  error: string = "";

  constructor(s: string) {
    this.s = s;
  }

  fail(msg: string): Value | null {
    if (this.error.length == 0) this.error = "invalid JSON at offset " + this.pos.toString() + ": " + msg;
    return null;
  }

  peek(): i32 {
    return this.pos < this.s.length ? <i32>this.s.charCodeAt(this.pos) : -1;
  }

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  value(depth: i32): Value | null {
    const c = this.peek();
    if (c == 0x7b /* { */) return this.object(depth);
    if (c == 0x5b /* [ */) return this.array(depth);
    if (c == 0x22 /* " */) {
      const s = this.string();
      if (s == null) return null;
      return Value.str(s);
    }
    if (c == 0x74) return this.literal("true", Value.bool(true));
    if (c == 0x66) return this.literal("false", Value.bool(false));
    if (c == 0x6e) return this.literal("null", Value.null());
    if (c == 0x2d || isDigit(c)) return this.number();
    if (c < 0) return this.fail("unexpected end of text");
    return this.fail("unexpected character");
  }

  literal(word: string, v: Value): Value | null {
    if (this.s.substr(this.pos, word.length) != word) return this.fail("invalid literal");
    this.pos += word.length;
    return v;
  }

  number(): Value | null {
    const start = this.pos;
    const s = this.s;
    let i = this.pos;
    if (i < s.length && s.charCodeAt(i) == 0x2d) i++;
    if (i >= s.length) {
      this.pos = i;
      return this.fail("unexpected end of number");
    }
    const first = <i32>s.charCodeAt(i);
    if (first == 0x30) {
      i++;
    } else if (first >= 0x31 && first <= 0x39) {
      while (i < s.length && isDigit(s.charCodeAt(i))) i++;
    } else {
      this.pos = i;
      return this.fail("invalid number");
    }
    if (i < s.length && s.charCodeAt(i) == 0x2e) {
      i++;
      if (i >= s.length || !isDigit(s.charCodeAt(i))) {
        this.pos = i;
        return this.fail("a fraction needs digits");
      }
      while (i < s.length && isDigit(s.charCodeAt(i))) i++;
    }
    if (i < s.length && (s.charCodeAt(i) == 0x65 || s.charCodeAt(i) == 0x45)) {
      i++;
      if (i < s.length && (s.charCodeAt(i) == 0x2b || s.charCodeAt(i) == 0x2d)) i++;
      if (i >= s.length || !isDigit(s.charCodeAt(i))) {
        this.pos = i;
        return this.fail("an exponent needs digits");
      }
      while (i < s.length && isDigit(s.charCodeAt(i))) i++;
    }
    this.pos = i;
    return Value.num(parseFloat(s.substring(start, i)));
  }

  // hex4 reads the 4 hex digits at pos (after "\u"), -1 if they are not.
  hex4(at: i32): i32 {
    if (at + 4 > this.s.length) return -1;
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const h = hexVal(this.s.charCodeAt(at + k));
      if (h < 0) return -1;
      v = (v << 4) | h;
    }
    return v;
  }

  string(): string | null {
    const s = this.s;
    let i = this.pos + 1;
    let runStart = i;
    let parts: Array<string> | null = null;
    while (true) {
      if (i >= s.length) {
        this.pos = i;
        this.fail("unterminated string");
        return null;
      }
      const c = s.charCodeAt(i);
      if (c == 0x22) break;
      if (c < 0x20) {
        this.pos = i;
        this.fail("control character in a string");
        return null;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        // A raw surrogate: keep a valid pair, replace a lone one.
        const pair = c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
        if (pair) {
          i += 2;
          continue;
        }
        if (parts == null) parts = new Array<string>();
        parts.push(s.substring(runStart, i));
        parts.push("\uFFFD");
        i++;
        runStart = i;
        continue;
      }
      if (c != 0x5c) {
        i++;
        continue;
      }
      if (parts == null) parts = new Array<string>();
      parts.push(s.substring(runStart, i));
      if (i + 1 >= s.length) {
        this.pos = i;
        this.fail("unterminated escape");
        return null;
      }
      const e = s.charCodeAt(i + 1);
      i += 2;
      if (e == 0x22) parts.push('"');
      else if (e == 0x5c) parts.push("\\");
      else if (e == 0x2f) parts.push("/");
      else if (e == 0x62) parts.push("\b");
      else if (e == 0x66) parts.push("\f");
      else if (e == 0x6e) parts.push("\n");
      else if (e == 0x72) parts.push("\r");
      else if (e == 0x74) parts.push("\t");
      else if (e == 0x75) {
        const cu = this.hex4(i);
        if (cu < 0) {
          this.pos = i;
          this.fail("invalid \\u escape");
          return null;
        }
        i += 4;
        if (cu >= 0xd800 && cu <= 0xdbff) {
          const lo = i + 6 <= s.length && s.charCodeAt(i) == 0x5c && s.charCodeAt(i + 1) == 0x75 ? this.hex4(i + 2) : -1;
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            parts.push(String.fromCharCode(cu, lo));
            i += 6;
          } else {
            parts.push("\uFFFD");
          }
        } else if (cu >= 0xdc00 && cu <= 0xdfff) {
          parts.push("\uFFFD");
        } else {
          parts.push(String.fromCharCode(cu));
        }
      } else {
        this.pos = i - 1;
        this.fail("invalid escape");
        return null;
      }
      runStart = i;
    }
    this.pos = i + 1;
    if (parts == null) return s.substring(runStart, i);
    parts.push(s.substring(runStart, i));
    return parts.join("");
  }

  array(depth: i32): Value | null {
    if (depth >= MAX_DEPTH) return this.fail("nested too deeply");
    this.pos++;
    const v = Value.array();
    this.ws();
    if (this.peek() == 0x5d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.ws();
      const e = this.value(depth + 1);
      if (e == null) return null;
      v.items.push(e);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) {
        this.pos++;
        continue;
      }
      if (c == 0x5d) {
        this.pos++;
        return v;
      }
      return this.fail("expected ',' or ']'");
    }
  }

  object(depth: i32): Value | null {
    if (depth >= MAX_DEPTH) return this.fail("nested too deeply");
    this.pos++;
    const v = Value.object();
    this.ws();
    if (this.peek() == 0x7d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.ws();
      if (this.peek() != 0x22) return this.fail("expected a member name");
      const k = this.string();
      if (k == null) return null;
      this.ws();
      if (this.peek() != 0x3a) return this.fail("expected ':'");
      this.pos++;
      this.ws();
      const e = this.value(depth + 1);
      if (e == null) return null;
      // Repeated names: the last one wins, as in most JSON libraries.
      v.set(k, e);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) {
        this.pos++;
        continue;
      }
      if (c == 0x7d) {
        this.pos++;
        return v;
      }
      return this.fail("expected ',' or '}'");
    }
  }
}

/** stringify() writes v as compact JSON text. */
export function stringify(v: Value): string {
  const parts = new Array<string>();
  write(parts, v);
  return parts.join("");
}

function write(parts: Array<string>, v: Value): void {
  switch (v.kind) {
    case Kind.NULL:
      parts.push("null");
      return;
    case Kind.BOOL:
      parts.push(v.boolean ? "true" : "false");
      return;
    case Kind.NUMBER:
      parts.push(formatNumber(v.number));
      return;
    case Kind.STRING:
      parts.push(quote(v.string));
      return;
    case Kind.ARRAY: {
      parts.push("[");
      for (let i = 0; i < v.items.length; i++) {
        if (i > 0) parts.push(",");
        write(parts, v.items[i]);
      }
      parts.push("]");
      return;
    }
  }
  parts.push("{");
  for (let i = 0; i < v.keys.length; i++) {
    if (i > 0) parts.push(",");
    parts.push(quote(v.keys[i]));
    parts.push(":");
    write(parts, v.values[i]);
  }
  parts.push("}");
}

function isInteger53(n: f64): bool {
  return isFinite(n) && Math.floor(n) == n && Math.abs(n) <= 9007199254740992.0;
}

/**
 * formatNumber writes n as a JSON number the way JavaScript and Go's
 * encoding/json do: the shortest decimal that reads back as n, in fixed
 * notation when 1e-6 <= |n| < 1e21 and as d.ddde±x otherwise; integers up
 * to 2^53 without a fraction. NaN and the infinities, which JSON cannot
 * hold, are written as null.
 */
export function formatNumber(n: f64): string {
  if (!isFinite(n)) return "null";
  if (isInteger53(n)) return (<i64>n).toString();
  // AssemblyScript's dtoa (Grisu2) gives digits that read back as n but
  // are not always the shortest or closest such (0.1 + 0.2 comes out as
  // 0.30000000000000007). Start from the 17 significant digits correctly
  // rounded (exact where n × 10^k can be computed exactly, see digits17),
  // then try each shorter length, rounding down and up, and keep the first
  // that reads back.
  let neg = n < 0;
  let digits = "";
  let exp = 0; // n = ±digits × 10^exp
  let rem: f64 = 0; // the sign of the exact value minus the digits
  const exact = digits17(abs(n));
  if (exact.length > 0) {
    digits = exact;
    exp = exact17Exp;
    rem = exact17Rem;
  } else {
    const g = n.toString();
    let i = neg ? 1 : 0;
    let seenPoint = false;
    for (; i < g.length; i++) {
      const c = g.charCodeAt(i);
      if (c == 0x2e) {
        seenPoint = true;
      } else if (c == 0x65 || c == 0x45) {
        exp += I32.parseInt(g.substring(g.charCodeAt(i + 1) == 0x2b ? i + 2 : i + 1));
        break;
      } else {
        digits += String.fromCharCode(c);
        if (seenPoint) exp--;
      }
    }
  }
  // Leading zeros ("0.0001") carry no information.
  let lead = 0;
  while (lead < digits.length - 1 && digits.charCodeAt(lead) == 0x30) lead++;
  digits = digits.substring(lead);
  for (let j = 1; j < digits.length; j++) {
    const down = digits.substring(0, j);
    const up = incrementDigits(down);
    const e = exp + digits.length - j;
    // Try first the candidate nearer the exact value: a dropped "5" with
    // nothing after it in the digits is decided by what the 17 digits
    // themselves dropped.
    const next = digits.charCodeAt(j);
    let upFirst = next > 0x35;
    if (next == 0x35) {
      let rest = false;
      for (let r = j + 1; r < digits.length; r++) if (digits.charCodeAt(r) != 0x30) rest = true;
      upFirst = rest || rem >= 0;
    }
    const a = layout(neg, upFirst ? up : down, e);
    if (parseFloat(a) == n) return a;
    const b = layout(neg, upFirst ? down : up, e);
    if (parseFloat(b) == n) return b;
  }
  return layout(neg, digits, exp);
}

// The decimal exponent of the digits digits17 returned last, and the sign
// of what rounding them dropped (the exact value minus the digits).
let exact17Exp: i32 = 0;
let exact17Rem: f64 = 0;

// twoProductError returns the rounding error of a * b (Dekker's exact
// product without a fused multiply-add): a * b == (a * b rounded) + error.
function twoProductError(a: f64, b: f64, p: f64): f64 {
  const ca = 134217729.0 * a;
  const ah = ca - (ca - a);
  const al = a - ah;
  const cb = 134217729.0 * b;
  const bh = cb - (cb - b);
  const bl = b - bh;
  return ah * bh - p + ah * bl + al * bh + al * bl;
}

// digits17 returns the 17 significant digits of a (> 0) correctly rounded,
// with their exponent in exact17Exp, when a × 10^k (k = 16 - the exponent
// of a's leading digit) can be computed exactly: 10^k is a double for
// 0 <= k <= 22, i.e. for 1e-6 <= a < 1e17. "" otherwise.
function digits17(a: f64): string {
  let x = <i32>Math.floor(Math.log10(a));
  for (let attempt = 0; attempt < 3; attempt++) {
    const k = 16 - x;
    if (k < 0 || k > 22) return "";
    let scale: f64 = 1;
    for (let i = 0; i < k; i++) scale *= 10;
    const p = a * scale;
    const err = twoProductError(a, scale, p);
    const m = <i64>p + <i64>Math.round(err);
    if (m >= 100000000000000000) {
      x++;
      continue;
    }
    if (m < 10000000000000000) {
      x--;
      continue;
    }
    exact17Exp = -k;
    exact17Rem = err - Math.round(err);
    return m.toString();
  }
  return "";
}

// incrementDigits adds one to a decimal digit string ("199" → "200", "99" → "100").
function incrementDigits(d: string): string {
  const out = new Array<string>(d.length);
  let carry = true;
  for (let i = d.length - 1; i >= 0; i--) {
    let c = d.charCodeAt(i) - 0x30;
    if (carry) {
      c++;
      carry = c == 10;
      if (carry) c = 0;
    }
    out[i] = String.fromCharCode(0x30 + c);
  }
  return (carry ? "1" : "") + out.join("");
}

// layout writes ±digits × 10^exp in JavaScript's number notation.
function layout(neg: bool, digits: string, exp: i32): string {
  while (digits.length > 1 && digits.charCodeAt(digits.length - 1) == 0x30) {
    digits = digits.substring(0, digits.length - 1);
    exp++;
  }
  const k = digits.length;
  const x = k + exp - 1; // the exponent of the leading digit
  let s: string;
  if (x >= -6 && x < 21) {
    if (exp >= 0) s = digits + "0".repeat(exp);
    else if (k + exp > 0) s = digits.substring(0, k + exp) + "." + digits.substring(k + exp);
    else s = "0." + "0".repeat(-(k + exp)) + digits;
  } else {
    s = digits.substring(0, 1);
    if (k > 1) s += "." + digits.substring(1);
    s += (x >= 0 ? "e+" : "e-") + abs(x).toString();
  }
  return neg ? "-" + s : s;
}

const HEX = "0123456789abcdef";

/** quote() writes s as a JSON string literal, quotes included. */
export function quote(s: string): string {
  let parts: Array<string> | null = null;
  let runStart = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let rep = "";
    if (c == 0x22) rep = '\\"';
    else if (c == 0x5c) rep = "\\\\";
    else if (c < 0x20) {
      if (c == 0x0a) rep = "\\n";
      else if (c == 0x0d) rep = "\\r";
      else if (c == 0x09) rep = "\\t";
      else if (c == 0x08) rep = "\\b";
      else if (c == 0x0c) rep = "\\f";
      else rep = "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < n && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
        i++; // a valid pair stays as it is
        continue;
      }
      rep = "\uFFFD";
    } else {
      continue;
    }
    if (parts == null) parts = new Array<string>();
    parts.push(s.substring(runStart, i));
    parts.push(rep);
    runStart = i + 1;
  }
  if (parts == null) return '"' + s + '"';
  parts.push(s.substring(runStart, n));
  return '"' + parts.join("") + '"';
}
