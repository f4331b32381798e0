// Unit tests of the SDK's JSON reader and writer and its URI template
// matcher. Built as a WASI command and run by tests/run.mjs (npm test);
// prints each failure and a "N passed, N failed" line, exits 1 on failure.
import { Kind, MAX_DEPTH, Value, formatNumber, parse, parseResult, quote, stringify } from "../assembly/json";
import { matchTemplate } from "../assembly/index";
import { decodeBase64, encodeBase64 } from "../assembly/base64";

let passed = 0;
let failed = 0;

function check(name: string, ok: bool): void {
  if (ok) passed++;
  else {
    failed++;
    console.log("FAIL " + name);
  }
}

function eq(name: string, got: string, want: string): void {
  if (got == want) passed++;
  else {
    failed++;
    console.log("FAIL " + name + ": got " + quote(got) + ", want " + quote(want));
  }
}

// roundTrip parses text and writes it back.
function roundTrip(text: string): string {
  const r = parseResult(text);
  const v = r.value;
  if (v == null) return "ERROR " + r.error;
  return stringify(v);
}

function invalid(text: string): void {
  const r = parseResult(text);
  check("invalid " + quote(text) + " is refused", r.value == null && r.error.length > 0);
}

function parsedString(text: string): string {
  const v = parse(text);
  if (v == null || !v.isString()) return "NOT A STRING";
  return v.string;
}

function testLiterals(): void {
  eq("literals", roundTrip(" [ true , false , null ] "), "[true,false,null]");
  const v = parse("true");
  check("true is a bool", v != null && v.kind == Kind.BOOL && v.boolean);
  check("null", (parse("null") as Value).isNull());
  invalid("");
  invalid("   ");
  invalid("tru");
  invalid("nul");
  invalid("True");
  invalid("true false");
  invalid("undefined");
}

function testStrings(): void {
  eq("escapes", parsedString('"a\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti"'), 'a"b\\c/d\be\ff\ng\rh\ti');
  eq("\\u BMP", parsedString('"\\u0041\\u00e9\\u20AC"'), "Aé€");
  eq("\\u surrogate pair", parsedString('"\\ud83d\\ude00"'), "😀");
  check("pair is two code units", parsedString('"\\uD83D\\uDE00"').length == 2);
  eq("lone high surrogate", parsedString('"a\\ud800b"'), "a\uFFFDb");
  eq("lone low surrogate", parsedString('"\\udc00"'), "\uFFFD");
  eq("high then non-low escape", parsedString('"\\ud800\\u0041"'), "\uFFFDA");
  eq("high at end", parsedString('"\\ud83d"'), "\uFFFD");
  eq("raw non-ASCII", parsedString('"héllo wörld 😀 \u2028"'), "héllo wörld 😀 \u2028");
  eq("\\u0000", parsedString('"a\\u0000b"'), "a\u0000b");
  eq("empty", parsedString('""'), "");
  invalid('"abc');
  invalid('"a\\');
  invalid('"\\x"');
  invalid('"\\u12"');
  invalid('"\\u12g4"');
  invalid('"tab\there"');
  invalid('"new\nline"');
  invalid("'single'");
}

function testNumbers(): void {
  const cases: Array<string> = ["0", "-0", "1", "-1", "1.5", "1e3", "1E-2", "-12.5e+2", "0.1", "123456789", "2.5e-7"];
  const want: Array<f64> = [0, -0.0, 1, -1, 1.5, 1000, 0.01, -1250, 0.1, 123456789, 2.5e-7];
  for (let i = 0; i < cases.length; i++) {
    const v = parse(cases[i]);
    check("number " + cases[i], v != null && v.isNumber() && v.number == want[i]);
  }
  const big = parse("1.7976931348623157e308");
  check("largest double", big != null && big.number == 1.7976931348623157e308);
  const tiny = parse("2.2250738585072014e-308");
  check("smallest normal", tiny != null && tiny.number == 2.2250738585072014e-308);
  const i53 = parse("9007199254740993");
  check("integer beyond 2^53 rounds", i53 != null && i53.number == 9007199254740992.0);
  check("isInteger", (parse("3") as Value).isInteger() && !(parse("3.5") as Value).isInteger() && (parse("3.0") as Value).isInteger());
  invalid("01");
  invalid("1.");
  invalid(".5");
  invalid("-");
  invalid("1e");
  invalid("1e+");
  invalid("+1");
  invalid("NaN");
  invalid("Infinity");
  invalid("0x10");
  invalid("1 2");
}

function testWriterNumbers(): void {
  eq("6", formatNumber(6), "6");
  eq("-3", formatNumber(-3), "-3");
  eq("2.5", formatNumber(2.5), "2.5");
  eq("-0.25", formatNumber(-0.25), "-0.25");
  eq("2^53", formatNumber(9007199254740992.0), "9007199254740992");
  eq("0.1+0.2", formatNumber(0.1 + 0.2), "0.30000000000000004");
  eq("1e21", formatNumber(1e21), "1e+21");
  eq("1e-7", formatNumber(1e-7), "1e-7");
  eq("0.000001", formatNumber(0.000001), "0.000001");
  eq("1.5e-7", formatNumber(-1.5e-7), "-1.5e-7");
  eq("123.456", formatNumber(123.456), "123.456");
  eq("2^60", formatNumber(1152921504606846976.0), "1152921504606847000");
  eq("5e-324", formatNumber(5e-324), "5e-324");
  eq("max", formatNumber(1.7976931348623157e308), "1.7976931348623157e+308");
  eq("NaN", formatNumber(NaN), "null");
  eq("Infinity", formatNumber(Infinity), "null");
  eq("-Infinity", formatNumber(-Infinity), "null");
  const samples: Array<f64> = [0.1 + 0.2, 1e21, 1e-7, 123456.789, 1.7976931348623157e308, 5e-324, 1e300, 2.0 ** 60, -1e22, 0.000001];
  for (let i = 0; i < samples.length; i++) {
    const s = formatNumber(samples[i]);
    const back = parse(s);
    check("number " + s + " is JSON and reads back", back != null && back.isNumber() && back.number == samples[i]);
  }
}

function testStructures(): void {
  eq("nested", roundTrip(' { "a" : [ 1 , { "b" : null } , [ ] , { } ] , "c" : "d" } '), '{"a":[1,{"b":null},[],{}],"c":"d"}');
  eq("member order kept", roundTrip('{"z":1,"a":2,"m":3}'), '{"z":1,"a":2,"m":3}');
  const dup = parse('{"a":1,"a":2}') as Value;
  check("repeated member: last wins", dup.getNumber("a") == 2 && dup.length == 1);
  const o = parse('{"s":"x","n":4,"b":true,"arr":[1,2,3]}') as Value;
  eq("getString", o.getString("s"), "x");
  check("getNumber", o.getNumber("n") == 4);
  check("getBool", o.getBool("b"));
  check("defaults", o.getString("missing", "dflt") == "dflt" && o.getNumber("s", -1) == -1);
  check("array access", (o.get("arr") as Value).length == 3 && ((o.get("arr") as Value).at(2) as Value).number == 3);
  check("at out of range", (o.get("arr") as Value).at(3) == null);
  check("equals ignores member order", (parse('{"a":1,"b":[true]}') as Value).equals(parse('{"b":[true],"a":1}') as Value));
  check("equals sees differences", !(parse('{"a":1}') as Value).equals(parse('{"a":2}') as Value));
  check("clone is deep", (o.clone() as Value).equals(o));
  invalid("[1,]");
  invalid('{"a":1,}');
  invalid('{"a" 1}');
  invalid("{a:1}");
  invalid("[1 2]");
  invalid("[");
  invalid('{"a":');
  invalid("}");
  // Depth: MAX_DEPTH nested arrays parse, one more does not.
  let ok = "";
  for (let i = 0; i < MAX_DEPTH; i++) ok += "[";
  for (let i = 0; i < MAX_DEPTH; i++) ok += "]";
  check("depth " + MAX_DEPTH.toString() + " parses", parse(ok) != null);
  invalid("[" + ok + "]");
}

function testWriterStrings(): void {
  eq("quote plain", quote("abc"), '"abc"');
  eq("quote escapes", quote('a"b\\c\nd\re\tf\bg\fh'), '"a\\"b\\\\c\\nd\\re\\tf\\bg\\fh"');
  eq("quote control", quote("\u0001\u001f"), '"\\u0001\\u001f"');
  eq("quote non-ASCII kept", quote("é😀\u2028"), '"é😀\u2028"');
  eq("quote lone surrogates", quote("a\uD800b\uDC00"), '"a\uFFFDb\uFFFD"');
  const built = Value.object()
    .setString("text", 'say "hi"\n')
    .setNumber("n", 2.5)
    .setBool("ok", true)
    .set("list", Value.array().push(Value.num(1)).push(Value.null()).push(Value.strings(["x", "y"])));
  eq("built object", stringify(built), '{"text":"say \\"hi\\"\\n","n":2.5,"ok":true,"list":[1,null,["x","y"]]}');
  eq("set replaces", stringify(Value.object().setNumber("a", 1).setNumber("a", 2)), '{"a":2}');
  const text = 'mixed "quotes" \\ \u0000 é 😀 \t end';
  eq("string round trip", parsedString(quote(text)), text);
}

function testTemplates(): void {
  const v = matchTemplate("notes://{folder}/{id}", "notes://work/42");
  check("template matches", v != null && v.get("folder") == "work" && v.get("id") == "42");
  const d = matchTemplate("file:///{name}", "file:///a%20b%C3%A9");
  check("variables are percent-decoded", d != null && d.get("name") == "a bé");
  check("a variable does not span '/'", matchTemplate("notes://{id}", "notes://a/b") == null);
  check("a variable is not empty", matchTemplate("notes://{id}", "notes://") == null);
  check("literal mismatch", matchTemplate("notes://{id}", "other://x") == null);
  const b = matchTemplate("x://{a}.{b}", "x://1.2.3");
  check("backtracking", b != null && b.get("a") == "1.2" && b.get("b") == "3");
  check("fixed text", matchTemplate("x://fixed", "x://fixed") != null && matchTemplate("x://fixed", "x://fixed2") == null);
}

// printNumbers prints "num BITS TEXT" lines for doubles from a fixed
// pseudo-random sequence of bit patterns (and of small decimals), which
// the Go test compares with encoding/json's text for the same doubles.
function printNumbers(): void {
  let x: u64 = 0x9e3779b97f4a7c15;
  for (let i = 0; i < 3000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    let bits = x;
    if (i % 3 == 1) bits = reinterpret<u64>(<f64>(x % 100000) / 1000.0); // like 12.345
    if (i % 3 == 2) bits = reinterpret<u64>(<f64>(x % 1000) * 0.1 + <f64>(x % 7) * 0.01);
    const n = reinterpret<f64>(bits);
    if (!isFinite(n)) continue;
    console.log("num " + bits.toString(16) + " " + formatNumber(n));
  }
}

printNumbers();
function testBase64(): void {
  const cases: Array<string> = ["", "f", "fo", "foo", "foob", "fooba", "foobar"];
  const want: Array<string> = ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"];
  for (let i = 0; i < cases.length; i++) {
    const bytes = Uint8Array.wrap(String.UTF8.encode(cases[i]));
    eq("base64 " + cases[i], encodeBase64(bytes), want[i]);
    const back = decodeBase64(want[i]);
    check("unbase64 " + want[i], back != null && String.UTF8.decode(back.buffer) == cases[i]);
  }
  const bin = new Uint8Array(256);
  for (let i = 0; i < 256; i++) bin[i] = <u8>i;
  const round = decodeBase64(encodeBase64(bin));
  let same = round != null && round.length == 256;
  for (let i = 0; same && i < 256; i++) same = (round as Uint8Array)[i] == i;
  check("base64 round trip of every byte", same);
  check("unpadded", decodeBase64("Zm8") != null && (decodeBase64("Zm8") as Uint8Array).length == 2);
  check("bad character", decodeBase64("Zm9v!") == null && decodeBase64("Zm 9v") == null);
}

testBase64();
testLiterals();
testStrings();
testNumbers();
testWriterNumbers();
testStructures();
testWriterStrings();
testTemplates();
console.log(passed.toString() + " passed, " + failed.toString() + " failed");
if (failed > 0) process.exit(1);
