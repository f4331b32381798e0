/*
 * Unit tests of the C SDK's JSON reader and writer, run natively (built by
 * sdk_test.go with the host's C compiler). Prints one line per failure and
 * a closing "N passed, N failed" line; exits 1 if any check failed.
 */
#include "wasmcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond)                                                             \
	do {                                                                        \
		if (cond) {                                                             \
			passed++;                                                           \
		} else {                                                                \
			failed++;                                                           \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);              \
		}                                                                       \
	} while (0)

static wasmcp_json parse(const char *s) {
	wasmcp_json v;
	if (!wasmcp_json_parse(s, strlen(s), &v)) {
		printf("FAIL parse: %s\n", s);
		failed++;
	}
	return v;
}

static int valid(const char *s) {
	wasmcp_json v;
	return wasmcp_json_parse(s, strlen(s), &v);
}

static int str_is(wasmcp_json v, const char *want, size_t wantlen) {
	size_t n;
	char *s = wasmcp_json_string(v, &n);
	int ok = s != NULL && n == wantlen && memcmp(s, want, n) == 0 && s[n] == 0;
	if (!ok)
		printf("  got %s (%zu bytes), want %s\n", s ? s : "(null)", s ? n : 0, want);
	free(s);
	return ok;
}

static int view_is(wasmcp_json v, const char *raw) {
	return v.ptr != NULL && v.len == strlen(raw) && memcmp(v.ptr, raw, v.len) == 0;
}

static void test_grammar(void) {
	const char *good[] = {
	    "{}", "[]", "0", "-0", "1.5", "-1.5e+10", "1E-2", "\"\"", "true", "false", "null",
	    " \t\r\n{ \"a\" : [ 1 , 2 , { } , [ ] ] , \"b\" : null } \n",
	    "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"",
	    "[[[[[[[[[[1]]]]]]]]]]", "\"h\xc3\xa9llo\"",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		if (!valid(good[i]))
			printf("  should be valid: %s\n", good[i]);
		CHECK(valid(good[i]));
	}
	const char *bad[] = {
	    "", " ", "{", "}", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{1:2}", "01", "1.", ".5",
	    "-", "1e", "1e+", "+1", "tru", "nul", "falsey", "\"abc", "\"\\x\"", "\"\\u12G4\"", "\"\\u12\"",
	    "\"a\nb\"", "\"\x01\"", "[1] [2]", "{} x", "[1 2]", "{\"a\":1 \"b\":2}", "[}", "{]", "NaN", "'a'",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		if (valid(bad[i]))
			printf("  should be invalid: %s\n", bad[i]);
		CHECK(!valid(bad[i]));
	}
	/* Depth: at the limit is fine, one past is refused, far past does not
	 * crash. */
	for (int extra = -1; extra <= 1; extra++) {
		int d = WASMCP_JSON_MAX_DEPTH + extra;
		char *s = malloc((size_t)d * 2 + 1);
		memset(s, '[', (size_t)d);
		memset(s + d, ']', (size_t)d);
		s[d * 2] = 0;
		CHECK(valid(s) == (extra <= 0));
		free(s);
	}
	char *deep = malloc(100001);
	memset(deep, '{', 100000);
	deep[100000] = 0;
	CHECK(!valid(deep));
	free(deep);
	/* Parsing is bounded by n, not by a NUL. */
	wasmcp_json v;
	CHECK(wasmcp_json_parse("[1]xyz", 3, &v) && v.len == 3);
	CHECK(!wasmcp_json_parse("\"abc\"", 4, &v));
	CHECK(!wasmcp_json_parse(NULL, 0, &v));
}

static void test_access(void) {
	wasmcp_json doc = parse(
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"word_count\","
	    "\"arguments\":{\"text\":\"a \\\"b\\\"\\nc\",\"n\":-42,\"f\":2.5,\"big\":1e3,\"t\":true,\"z\":null,"
	    "\"list\":[1,\"two\",[3],{\"four\":4}],\"\\u0074ab\":\"escaped key\",\"dup\":1,\"dup\":2},"
	    "\"_meta\":{\"progressToken\":\"tok\"}}}");
	wasmcp_json id, params, args, v, meta;
	CHECK(wasmcp_json_type_of(doc) == WASMCP_JSON_OBJECT);
	CHECK(wasmcp_json_get(doc, "id", &id) && view_is(id, "7"));
	CHECK(wasmcp_json_get(doc, "method", &v) && wasmcp_json_string_equals(v, "tools/call"));
	CHECK(!wasmcp_json_string_equals(v, "tools/cal"));
	CHECK(!wasmcp_json_string_equals(v, "tools/calls"));
	CHECK(wasmcp_json_get(doc, "params", &params) && wasmcp_json_type_of(params) == WASMCP_JSON_OBJECT);
	CHECK(!wasmcp_json_get(doc, "missing", &v) && v.ptr == NULL && wasmcp_json_type_of(v) == WASMCP_JSON_ABSENT);
	CHECK(!wasmcp_json_get(id, "x", &v)); /* not an object */
	CHECK(wasmcp_json_get(params, "arguments", &args));
	CHECK(wasmcp_json_get(args, "text", &v) && str_is(v, "a \"b\"\nc", 7));
	int64_t i;
	double d;
	int b;
	CHECK(wasmcp_json_get(args, "n", &v) && wasmcp_json_int(v, &i) && i == -42);
	CHECK(wasmcp_json_get(args, "f", &v) && wasmcp_json_number(v, &d) && d == 2.5);
	CHECK(!wasmcp_json_int(v, &i)); /* 2.5 is not an integer */
	CHECK(wasmcp_json_get(args, "big", &v) && wasmcp_json_int(v, &i) && i == 1000);
	CHECK(wasmcp_json_get(args, "t", &v) && wasmcp_json_bool(v, &b) && b == 1);
	CHECK(!wasmcp_json_number(v, &d));
	CHECK(wasmcp_json_get(args, "z", &v) && wasmcp_json_type_of(v) == WASMCP_JSON_NULL && !wasmcp_json_bool(v, &b));
	CHECK(wasmcp_json_get(args, "tab", &v) && str_is(v, "escaped key", 11));
	CHECK(wasmcp_json_get(args, "dup", &v) && view_is(v, "2"));
	CHECK(wasmcp_json_get(params, "_meta", &meta) && wasmcp_json_get(meta, "progressToken", &v) && view_is(v, "\"tok\""));

	wasmcp_json list, e;
	CHECK(wasmcp_json_get(args, "list", &list) && wasmcp_json_array_len(list) == 4);
	size_t pos = 0;
	CHECK(wasmcp_json_array_next(list, &pos, &e) && view_is(e, "1"));
	CHECK(wasmcp_json_array_next(list, &pos, &e) && str_is(e, "two", 3));
	CHECK(wasmcp_json_array_next(list, &pos, &e) && view_is(e, "[3]"));
	CHECK(wasmcp_json_array_next(list, &pos, &e) && view_is(e, "{\"four\":4}"));
	CHECK(!wasmcp_json_array_next(list, &pos, &e));
	CHECK(wasmcp_json_array_len(parse("[]")) == 0);
	CHECK(wasmcp_json_array_len(parse(" [ ] ")) == 0);
	CHECK(wasmcp_json_array_len(parse("{}")) == 0);

	/* Object iteration with whitespace everywhere. */
	wasmcp_json obj = parse(" { \"a\" : 1 , \"b\" : [ 2 , 3 ] , \"c\" : { } } "), k;
	const char *keys[] = {"a", "b", "c"}, *vals[] = {"1", "[ 2 , 3 ]", "{ }"};
	pos = 0;
	int count = 0;
	while (wasmcp_json_object_next(obj, &pos, &k, &v)) {
		CHECK(count < 3 && wasmcp_json_string_equals(k, keys[count]) && view_is(v, vals[count]));
		count++;
	}
	CHECK(count == 3);
	pos = 0;
	CHECK(!wasmcp_json_object_next(parse("{ }"), &pos, &k, &v));
	pos = 0;
	CHECK(!wasmcp_json_object_next(parse("[1]"), &pos, &k, &v));
}

static void test_strings(void) {
	CHECK(str_is(parse("\"\""), "", 0));
	CHECK(str_is(parse("\"\\u00e9\""), "\xc3\xa9", 2));
	CHECK(str_is(parse("\"\\u20AC\""), "\xe2\x82\xac", 3));
	CHECK(str_is(parse("\"\\uD83D\\uDE00\""), "\xf0\x9f\x98\x80", 4));     /* surrogate pair */
	CHECK(str_is(parse("\"\\uD83Dx\""), "\xef\xbf\xbdx", 4));             /* lone high */
	CHECK(str_is(parse("\"\\uDE00\""), "\xef\xbf\xbd", 3));               /* lone low */
	CHECK(str_is(parse("\"\\uD83D\\u0041\""), "\xef\xbf\xbd" "A", 4));    /* high + non-low */
	CHECK(str_is(parse("\"a\\u0000b\""), "a\0b", 3));                     /* embedded NUL */
	CHECK(str_is(parse("\"\\/\\\\\\b\\f\\n\\r\\t\""), "/\\\b\f\n\r\t", 7));
	CHECK(str_is(parse("\"h\xc3\xa9llo\""), "h\xc3\xa9llo", 6));          /* raw UTF-8 */
	CHECK(wasmcp_json_string(parse("12"), NULL) == NULL);
	CHECK(wasmcp_json_string_equals(parse("\"\\u00e9t\\u00e9\""), "\xc3\xa9t\xc3\xa9"));
	CHECK(!wasmcp_json_string_equals(parse("\"\\u00e9\""), "\xc3"));
	CHECK(!wasmcp_json_string_equals(parse("1"), "1"));
}

static void test_numbers(void) {
	int64_t i;
	double d;
	CHECK(wasmcp_json_int(parse("9223372036854775807"), &i) && i == INT64_MAX);
	CHECK(wasmcp_json_int(parse("-9223372036854775808"), &i) && i == INT64_MIN);
	CHECK(!wasmcp_json_int(parse("9223372036854775808"), &i));
	CHECK(!wasmcp_json_int(parse("-9223372036854775809"), &i));
	CHECK(!wasmcp_json_int(parse("1e300"), &i));
	CHECK(wasmcp_json_int(parse("-0"), &i) && i == 0);
	CHECK(wasmcp_json_int(parse("3.0"), &i) && i == 3);
	CHECK(wasmcp_json_number(parse("-1.25e-2"), &d) && d == -0.0125);
	CHECK(wasmcp_json_number(parse("1e400"), &d) && d > 1e308); /* +Inf, as strtod gives */
	CHECK(!wasmcp_json_number(parse("\"1\""), &d));
	char longnum[200];
	memset(longnum, '1', 150);
	longnum[150] = 0;
	CHECK(wasmcp_json_number(parse(longnum), &d) && d > 1.1e149 && d < 1.2e149);
}

static int buf_is(wasmcp_buf *b, const char *want) {
	int ok = !b->oom && b->len == strlen(want) && memcmp(b->data, want, b->len) == 0;
	if (!ok)
		printf("  got %.*s, want %s\n", (int)b->len, b->data ? b->data : "", want);
	wasmcp_buf_free(b);
	return ok;
}

static void test_writer(void) {
	wasmcp_buf b = {0};
	wasmcp_buf_json_string(&b, "a\"b\\c\nd\re\tf\bg\fh\x01i\x1f", 18);
	CHECK(buf_is(&b, "\"a\\\"b\\\\c\\nd\\re\\tf\\bg\\fh\\u0001i\\u001f\""));
	wasmcp_buf_json_string(&b, "", 0);
	CHECK(buf_is(&b, "\"\""));
	wasmcp_buf_json_string(&b, "a\0b", 3);
	CHECK(buf_is(&b, "\"a\\u0000b\""));
	wasmcp_buf_json_string(&b, "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12);
	CHECK(buf_is(&b, "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""));
	/* Invalid UTF-8 (stray continuation, truncated sequence, overlong,
	 * surrogate) becomes U+FFFD, so the output is always valid JSON. */
	wasmcp_buf_json_string(&b, "a\x80" "b\xc3", 4);
	CHECK(buf_is(&b, "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\""));
	wasmcp_buf_json_string(&b, "\xc0\xaf\xed\xa0\x80", 5);
	CHECK(buf_is(&b, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""));
	/* What the writer escapes, the reader reads back. */
	const char *round = "tab\there \"quoted\" back\\slash \x01 \xc3\xa9";
	wasmcp_buf_json_string(&b, round, strlen(round));
	wasmcp_json v;
	CHECK(wasmcp_json_parse(b.data, b.len, &v) && str_is(v, round, strlen(round)));
	wasmcp_buf_free(&b);

	wasmcp_buf_int(&b, 0);
	wasmcp_buf_raw(&b, ",", 1);
	wasmcp_buf_int(&b, -17);
	wasmcp_buf_raw(&b, ",", 1);
	wasmcp_buf_int(&b, INT64_MIN);
	wasmcp_buf_raw(&b, ",", 1);
	wasmcp_buf_int(&b, INT64_MAX);
	CHECK(buf_is(&b, "0,-17,-9223372036854775808,9223372036854775807"));

	double ds[] = {0, 1, -2, 0.5, 0.1, 1.0 / 3, 1e21, -1e-7, 123456.789};
	for (size_t k = 0; k < sizeof ds / sizeof *ds; k++) {
		wasmcp_buf_double(&b, ds[k]);
		wasmcp_buf_raw(&b, "", 1);
		double back;
		wasmcp_json nv;
		CHECK(!b.oom && wasmcp_json_parse(b.data, b.len - 1, &nv) && wasmcp_json_number(nv, &back) && back == ds[k]);
		wasmcp_buf_free(&b);
	}
	wasmcp_buf_double(&b, 0.1);
	CHECK(buf_is(&b, "0.1"));
	wasmcp_buf_double(&b, 3);
	CHECK(buf_is(&b, "3"));
	double zero = 0;
	wasmcp_buf_double(&b, zero / zero);
	CHECK(buf_is(&b, "null"));
	wasmcp_buf_double(&b, 1 / zero);
	CHECK(buf_is(&b, "null"));

	/* Growth past the first allocation keeps every byte. */
	for (int k = 0; k < 10000; k++)
		wasmcp_buf_raw(&b, "0123456789", 10);
	int same = b.len == 100000;
	for (size_t k = 0; same && k < b.len; k++)
		same = b.data[k] == (char)('0' + k % 10);
	CHECK(same);
	wasmcp_buf_free(&b);
}

int main(void) {
	test_grammar();
	test_access();
	test_strings();
	test_numbers();
	test_writer();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
