/*
 * wasmcp.c — the C guest SDK for the wasmcp host–guest ABI v1. See
 * wasmcp.h for the API and README.md for a walk-through.
 */
#include "wasmcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ===================================================================== */
/* JSON reader                                                            */
/* ===================================================================== */

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const char *s, size_t n, size_t i) {
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* scan_string validates the string starting at s[*i] == '"' and moves *i
 * past its closing quote. */
static int scan_string(const char *s, size_t n, size_t *i) {
	size_t j = *i + 1;
	while (j < n) {
		unsigned char c = (unsigned char)s[j];
		if (c == '"') {
			*i = j + 1;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			if (++j >= n)
				return 0;
			switch (s[j]) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				break;
			case 'u':
				if (j + 4 >= n)
					return 0;
				for (int k = 1; k <= 4; k++)
					if (hexval(s[j + k]) < 0)
						return 0;
				j += 4;
				break;
			default:
				return 0;
			}
		}
		j++;
	}
	return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* scan_number validates the number at s[*i] and moves *i past it. */
static int scan_number(const char *s, size_t n, size_t *i) {
	size_t j = *i;
	if (j < n && s[j] == '-')
		j++;
	if (j >= n)
		return 0;
	if (s[j] == '0') {
		j++;
	} else if (s[j] >= '1' && s[j] <= '9') {
		while (j < n && is_digit(s[j]))
			j++;
	} else {
		return 0;
	}
	if (j < n && s[j] == '.') {
		j++;
		if (j >= n || !is_digit(s[j]))
			return 0;
		while (j < n && is_digit(s[j]))
			j++;
	}
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		j++;
		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j >= n || !is_digit(s[j]))
			return 0;
		while (j < n && is_digit(s[j]))
			j++;
	}
	*i = j;
	return 1;
}

static int scan_literal(const char *s, size_t n, size_t *i, const char *lit, size_t len) {
	if (n - *i < len || memcmp(s + *i, lit, len) != 0)
		return 0;
	*i += len;
	return 1;
}

int wasmcp_json_parse(const char *s, size_t n, wasmcp_json *out) {
	char stack[WASMCP_JSON_MAX_DEPTH];
	int depth = 0;
	size_t i = skip_ws(s, n, 0), start = i, end;
	if (out) {
		out->ptr = NULL;
		out->len = 0;
	}
	if (s == NULL)
		return 0;
value:
	i = skip_ws(s, n, i);
	if (i >= n)
		return 0;
	switch (s[i]) {
	case '{':
		if (depth == WASMCP_JSON_MAX_DEPTH)
			return 0;
		stack[depth++] = '{';
		i = skip_ws(s, n, i + 1);
		if (i < n && s[i] == '}') {
			i++;
			depth--;
			goto after;
		}
		goto key;
	case '[':
		if (depth == WASMCP_JSON_MAX_DEPTH)
			return 0;
		stack[depth++] = '[';
		i = skip_ws(s, n, i + 1);
		if (i < n && s[i] == ']') {
			i++;
			depth--;
			goto after;
		}
		goto value;
	case '"':
		if (!scan_string(s, n, &i))
			return 0;
		goto after;
	case 't':
		if (!scan_literal(s, n, &i, "true", 4))
			return 0;
		goto after;
	case 'f':
		if (!scan_literal(s, n, &i, "false", 5))
			return 0;
		goto after;
	case 'n':
		if (!scan_literal(s, n, &i, "null", 4))
			return 0;
		goto after;
	default:
		if (!scan_number(s, n, &i))
			return 0;
		goto after;
	}
key:
	i = skip_ws(s, n, i);
	if (i >= n || s[i] != '"' || !scan_string(s, n, &i))
		return 0;
	i = skip_ws(s, n, i);
	if (i >= n || s[i] != ':')
		return 0;
	i++;
	goto value;
after:
	if (depth > 0) {
		i = skip_ws(s, n, i);
		if (i >= n)
			return 0;
		if (s[i] == ',') {
			i++;
			if (stack[depth - 1] == '{')
				goto key;
			goto value;
		}
		if (s[i] == (stack[depth - 1] == '{' ? '}' : ']')) {
			i++;
			depth--;
			goto after;
		}
		return 0;
	}
	end = i;
	if (skip_ws(s, n, i) != n)
		return 0;
	if (out) {
		out->ptr = s + start;
		out->len = end - start;
	}
	return 1;
}

wasmcp_json_type wasmcp_json_type_of(wasmcp_json v) {
	if (v.ptr == NULL || v.len == 0)
		return WASMCP_JSON_ABSENT;
	switch (v.ptr[0]) {
	case '{': return WASMCP_JSON_OBJECT;
	case '[': return WASMCP_JSON_ARRAY;
	case '"': return WASMCP_JSON_STRING;
	case 't': return WASMCP_JSON_TRUE;
	case 'f': return WASMCP_JSON_FALSE;
	case 'n': return WASMCP_JSON_NULL;
	default: return WASMCP_JSON_NUMBER;
	}
}

/* skip_value moves past the (already validated) value at s[i]; it returns
 * n if the text ends first. */
static size_t skip_value(const char *s, size_t n, size_t i) {
	if (i >= n)
		return n;
	char c = s[i];
	if (c == '"') {
		for (i++; i < n; i++) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				return i + 1;
		}
		return n;
	}
	if (c == '{' || c == '[') {
		size_t depth = 0;
		for (; i < n; i++) {
			char d = s[i];
			if (d == '"') {
				for (i++; i < n && s[i] != '"'; i++)
					if (s[i] == '\\')
						i++;
			} else if (d == '{' || d == '[') {
				depth++;
			} else if (d == '}' || d == ']') {
				if (--depth == 0)
					return i + 1;
			}
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_ws(s[i]))
		i++;
	return i;
}

/* container_next is the shared walk of object_next and array_next. */
static int container_next(wasmcp_json v, char open, size_t *pos, wasmcp_json *key, wasmcp_json *val) {
	const char *s = v.ptr;
	size_t n = v.len, i = *pos;
	if (s == NULL || n < 2 || s[0] != open)
		return 0;
	i = skip_ws(s, n, i == 0 ? 1 : i);
	if (i >= n || s[i] == '}' || s[i] == ']')
		return 0;
	if (s[i] == ',')
		i = skip_ws(s, n, i + 1);
	if (key) {
		size_t k = skip_value(s, n, i);
		key->ptr = s + i;
		key->len = k - i;
		i = skip_ws(s, n, k);
		if (i >= n || s[i] != ':')
			return 0;
		i = skip_ws(s, n, i + 1);
	}
	size_t e = skip_value(s, n, i);
	if (e <= i)
		return 0;
	val->ptr = s + i;
	val->len = e - i;
	*pos = e;
	return 1;
}

int wasmcp_json_object_next(wasmcp_json obj, size_t *pos, wasmcp_json *key, wasmcp_json *val) {
	wasmcp_json k;
	return container_next(obj, '{', pos, key ? key : &k, val);
}

int wasmcp_json_array_next(wasmcp_json arr, size_t *pos, wasmcp_json *elem) {
	return container_next(arr, '[', pos, NULL, elem);
}

size_t wasmcp_json_array_len(wasmcp_json arr) {
	size_t pos = 0, count = 0;
	wasmcp_json e;
	while (wasmcp_json_array_next(arr, &pos, &e))
		count++;
	return count;
}

/* utf8_put encodes cp at out and returns the byte count. */
static size_t utf8_put(char *out, uint32_t cp) {
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static uint32_t hex4(const char *p) {
	return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

/* unescape_one decodes the character at s[*i] (the string's inside, end
 * excluded) into out and returns its byte count, moving *i past it. */
static size_t unescape_one(const char *s, size_t end, size_t *i, char *out) {
	char c = s[*i];
	if (c != '\\' || *i + 1 >= end) {
		out[0] = c;
		(*i)++;
		return 1;
	}
	char e = s[*i + 1];
	*i += 2;
	switch (e) {
	case 'b': out[0] = '\b'; return 1;
	case 'f': out[0] = '\f'; return 1;
	case 'n': out[0] = '\n'; return 1;
	case 'r': out[0] = '\r'; return 1;
	case 't': out[0] = '\t'; return 1;
	case 'u': break;
	default: out[0] = e; return 1; /* " \ / */
	}
	if (*i + 4 > end)
		return utf8_put(out, 0xFFFD);
	uint32_t cp = hex4(s + *i);
	*i += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (*i + 6 <= end && s[*i] == '\\' && s[*i + 1] == 'u') {
			uint32_t lo = hex4(s + *i + 2);
			if (lo >= 0xDC00 && lo <= 0xDFFF) {
				*i += 6;
				return utf8_put(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
			}
		}
		return utf8_put(out, 0xFFFD);
	}
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return utf8_put(out, 0xFFFD);
	return utf8_put(out, cp);
}

char *wasmcp_json_string(wasmcp_json v, size_t *len) {
	if (wasmcp_json_type_of(v) != WASMCP_JSON_STRING || v.len < 2)
		return NULL;
	size_t end = v.len - 1, i = 1, o = 0;
	/* Unescaping never lengthens: \uXXXX (6 bytes) is at most 3 UTF-8
	 * bytes, a surrogate pair (12) is 4. */
	char *out = malloc(v.len);
	if (out == NULL)
		return NULL;
	while (i < end) {
		/* Copy the run up to the next escape whole: most strings
		 * have none. */
		const char *bs = memchr(v.ptr + i, '\\', end - i);
		size_t run = bs ? (size_t)(bs - (v.ptr + i)) : end - i;
		memcpy(out + o, v.ptr + i, run);
		o += run;
		i += run;
		if (i < end)
			o += unescape_one(v.ptr, end, &i, out + o);
	}
	out[o] = 0;
	if (len)
		*len = o;
	return out;
}

int wasmcp_json_string_equals(wasmcp_json v, const char *s) {
	if (wasmcp_json_type_of(v) != WASMCP_JSON_STRING || v.len < 2)
		return 0;
	size_t end = v.len - 1, i = 1, o = 0, want = strlen(s);
	char tmp[4];
	while (i < end) {
		if (v.ptr[i] != '\\') {
			if (o >= want || v.ptr[i] != s[o])
				return 0;
			i++;
			o++;
			continue;
		}
		size_t k = unescape_one(v.ptr, end, &i, tmp);
		if (o + k > want || memcmp(tmp, s + o, k) != 0)
			return 0;
		o += k;
	}
	return o == want;
}

/* get_members looks up count names in obj in one walk of its members:
 * outs[k] is the value of names[k] (the last one if a name repeats, as
 * wasmcp_json_get), or absent. The host's request carries a handful of
 * members, and one walk skips each value once rather than once a name. */
static void get_members(wasmcp_json obj, const char *const *names, wasmcp_json *outs, size_t count) {
	size_t pos = 0;
	wasmcp_json k, v;
	for (size_t j = 0; j < count; j++) {
		outs[j].ptr = NULL;
		outs[j].len = 0;
	}
	while (wasmcp_json_object_next(obj, &pos, &k, &v)) {
		for (size_t j = 0; j < count; j++) {
			if (wasmcp_json_string_equals(k, names[j])) {
				outs[j] = v;
				break;
			}
		}
	}
}

int wasmcp_json_get(wasmcp_json obj, const char *name, wasmcp_json *out) {
	size_t pos = 0;
	wasmcp_json k, v;
	int found = 0;
	if (out) {
		out->ptr = NULL;
		out->len = 0;
	}
	while (wasmcp_json_object_next(obj, &pos, &k, &v)) {
		if (wasmcp_json_string_equals(k, name)) {
			found = 1;
			if (out)
				*out = v;
		}
	}
	return found;
}

int wasmcp_json_number(wasmcp_json v, double *out) {
	if (wasmcp_json_type_of(v) != WASMCP_JSON_NUMBER)
		return 0;
	size_t i = 0;
	if (!scan_number(v.ptr, v.len, &i) || i != v.len)
		return 0;
	char small[64];
	char *buf = v.len < sizeof small ? small : malloc(v.len + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, v.ptr, v.len);
	buf[v.len] = 0;
	double d = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	*out = d;
	return 1;
}

int wasmcp_json_int(wasmcp_json v, int64_t *out) {
	if (wasmcp_json_type_of(v) != WASMCP_JSON_NUMBER)
		return 0;
	const char *p = v.ptr;
	size_t n = v.len, i = 0;
	int neg = 0;
	if (p[0] == '-') {
		neg = 1;
		i = 1;
	}
	/* Plain integers exactly, without going through a double. */
	uint64_t acc = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t j = i;
	while (j < n && is_digit(p[j])) {
		uint64_t d = (uint64_t)(p[j] - '0');
		if (acc > (limit - d) / 10)
			break; /* overflow */
		acc = acc * 10 + d;
		j++;
	}
	if (j == n && j > i) {
		*out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
		return 1;
	}
	if (memchr(p, '.', n) == NULL && memchr(p, 'e', n) == NULL && memchr(p, 'E', n) == NULL)
		return 0; /* an integer out of range (a double would round it in) */
	double d;
	if (!wasmcp_json_number(v, &d))
		return 0;
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
		return 0;
	int64_t r = (int64_t)d;
	if ((double)r != d)
		return 0;
	*out = r;
	return 1;
}

int wasmcp_json_bool(wasmcp_json v, int *out) {
	switch (wasmcp_json_type_of(v)) {
	case WASMCP_JSON_TRUE: *out = 1; return 1;
	case WASMCP_JSON_FALSE: *out = 0; return 1;
	default: return 0;
	}
}

/* ===================================================================== */
/* Output buffer                                                          */
/* ===================================================================== */

static int buf_grow(wasmcp_buf *b, size_t extra) {
	if (b->oom)
		return 0;
	if (b->cap - b->len >= extra)
		return 1;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return 0;
		}
		cap *= 2;
	}
	char *d = realloc(b->data, cap);
	if (d == NULL) {
		b->oom = 1;
		return 0;
	}
	b->data = d;
	b->cap = cap;
	return 1;
}

void wasmcp_buf_raw(wasmcp_buf *b, const char *s, size_t n) {
	if (n == 0 || !buf_grow(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void wasmcp_buf_cstr(wasmcp_buf *b, const char *s) { wasmcp_buf_raw(b, s, strlen(s)); }

/* utf8_valid returns the length of the valid UTF-8 sequence at s[0:n], or 0. */
static size_t utf8_valid(const unsigned char *s, size_t n) {
	unsigned char c = s[0];
	if (c >= 0xC2 && c <= 0xDF)
		return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F)) /* overlong, surrogate */
			return 0;
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
			return 0;
		if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F)) /* overlong, > U+10FFFF */
			return 0;
		return 4;
	}
	return 0;
}

void wasmcp_buf_json_string(wasmcp_buf *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	/* Worst case 6 bytes per input byte, plus quotes. */
	if (!buf_grow(b, n * 6 + 2))
		return;
	char *o = b->data + b->len;
	*o++ = '"';
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = utf8_valid(u + i, n - i);
			if (k == 0) { /* invalid UTF-8: U+FFFD */
				*o++ = (char)0xEF;
				*o++ = (char)0xBF;
				*o++ = (char)0xBD;
				i++;
			} else {
				memcpy(o, u + i, k);
				o += k;
				i += k;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			*o++ = 'u';
			*o++ = '0';
			*o++ = '0';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
		i++;
	}
	*o++ = '"';
	b->len = (size_t)(o - b->data);
}

void wasmcp_buf_int(wasmcp_buf *b, int64_t v) {
	char tmp[24];
	int i = sizeof tmp;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	wasmcp_buf_raw(b, tmp + i, sizeof tmp - (size_t)i);
}

void wasmcp_buf_double(wasmcp_buf *b, double v) {
	if (v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
		wasmcp_buf_raw(b, "null", 4);
		return;
	}
	if (v >= -9007199254740992.0 && v <= 9007199254740992.0 && (double)(int64_t)v == v && !(v == 0 && 1 / v < 0)) {
		wasmcp_buf_int(b, (int64_t)v);
		return;
	}
	char tmp[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (prec == 17 || strtod(tmp, NULL) == v)
			break;
	}
	wasmcp_buf_cstr(b, tmp);
}

/* buf_json_compact appends the valid JSON s[0:n] without the whitespace
 * between tokens, so a value written across lines fits on one line. */
static void buf_json_compact(wasmcp_buf *b, const char *s, size_t n) {
	if (!buf_grow(b, n))
		return;
	char *o = b->data + b->len;
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\' && i + 1 < n) {
				*o++ = c;
				c = s[++i];
			} else if (c == '"') {
				in_str = 0;
			}
		} else if (is_ws(c)) {
			continue;
		} else if (c == '"') {
			in_str = 1;
		}
		*o++ = c;
	}
	b->len = (size_t)(o - b->data);
}

void wasmcp_buf_free(wasmcp_buf *b) {
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

/* ===================================================================== */
/* Requests and answers                                                   */
/* ===================================================================== */

static int write_all(const char *s, size_t n) {
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int wasmcp_write_line(const char *s, size_t n) {
	wasmcp_buf b = {0};
	wasmcp_buf_raw(&b, s, n);
	wasmcp_buf_raw(&b, "\n", 1);
	int rc = b.oom ? -1 : write_all(b.data, b.len);
	wasmcp_buf_free(&b);
	return rc;
}

/* finish ends a line held in b, writes it and frees b. */
static int finish(wasmcp_buf *b) {
	wasmcp_buf_raw(b, "\n", 1);
	int rc = b->oom ? -1 : write_all(b->data, b->len);
	if (b->oom)
		fprintf(stderr, "error: wasmcp: out of memory building a message\n");
	wasmcp_buf_free(b);
	return rc;
}

static int answer_begin(wasmcp_call *c, wasmcp_buf *b, const char *kind) {
	if (c->answered)
		return 0;
	c->answered = 1;
	wasmcp_buf_cstr(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	wasmcp_buf_raw(b, c->id.ptr, c->id.len);
	wasmcp_buf_cstr(b, kind);
	return 1;
}

int wasmcp_result(wasmcp_call *c, const char *json, size_t n) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"result\":"))
		return -1;
	buf_json_compact(&b, json, n);
	wasmcp_buf_raw(&b, "}", 1);
	return finish(&b);
}

int wasmcp_result_text(wasmcp_call *c, const char *text, size_t n) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":"))
		return -1;
	wasmcp_buf_json_string(&b, text, n);
	wasmcp_buf_cstr(&b, "}]}}");
	return finish(&b);
}

int wasmcp_result_structured(wasmcp_call *c, const char *json, size_t n) {
	wasmcp_buf b = {0}, j = {0};
	if (c->answered)
		return -1;
	buf_json_compact(&j, json, n);
	answer_begin(c, &b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	wasmcp_buf_json_string(&b, j.data ? j.data : "", j.len);
	wasmcp_buf_cstr(&b, "}],\"structuredContent\":");
	wasmcp_buf_raw(&b, j.data, j.len);
	wasmcp_buf_cstr(&b, "}}");
	b.oom |= j.oom;
	wasmcp_buf_free(&j);
	return finish(&b);
}

int wasmcp_tool_error(wasmcp_call *c, const char *msg) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":"))
		return -1;
	wasmcp_buf_json_string(&b, msg, strlen(msg));
	wasmcp_buf_cstr(&b, "}],\"isError\":true}}");
	return finish(&b);
}

int wasmcp_error(wasmcp_call *c, int code, const char *msg) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"error\":{\"code\":"))
		return -1;
	wasmcp_buf_int(&b, code);
	wasmcp_buf_cstr(&b, ",\"message\":");
	wasmcp_buf_json_string(&b, msg, strlen(msg));
	wasmcp_buf_cstr(&b, "}}");
	return finish(&b);
}

int wasmcp_error_data(wasmcp_call *c, int code, const char *msg, const char *data_json, size_t dn) {
	wasmcp_json d;
	if (data_json == NULL)
		return wasmcp_error(c, code, msg);
	if (!wasmcp_json_parse(data_json, dn, &d))
		return wasmcp_error(c, -32603, "wasmcp_error_data: data is not valid JSON");
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"error\":{\"code\":"))
		return -1;
	wasmcp_buf_int(&b, code);
	wasmcp_buf_cstr(&b, ",\"message\":");
	wasmcp_buf_json_string(&b, msg, strlen(msg));
	wasmcp_buf_cstr(&b, ",\"data\":");
	buf_json_compact(&b, d.ptr, d.len);
	wasmcp_buf_cstr(&b, "}}");
	return finish(&b);
}

int wasmcp_result_text_structured(wasmcp_call *c, const char *text, size_t n, const char *json, size_t jn) {
	wasmcp_json j;
	if (c->answered)
		return -1;
	if (!wasmcp_json_parse(json, jn, &j) || wasmcp_json_type_of(j) != WASMCP_JSON_OBJECT)
		return wasmcp_tool_error(c, "the tool's structured content is not a JSON object");
	wasmcp_buf b = {0};
	answer_begin(c, &b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	wasmcp_buf_json_string(&b, text, n);
	wasmcp_buf_cstr(&b, "}],\"structuredContent\":");
	buf_json_compact(&b, j.ptr, j.len);
	wasmcp_buf_cstr(&b, "}}");
	return finish(&b);
}

static void buf_base64(wasmcp_buf *b, const unsigned char *s, size_t n);

/* resource_begin starts a ReadResourceResult with one content up to the
 * member holding its data. */
static int resource_begin(wasmcp_call *c, wasmcp_buf *b, const char *uri, const char *mime_type) {
	if (!answer_begin(c, b, ",\"result\":{\"contents\":[{\"uri\":"))
		return 0;
	if (uri)
		wasmcp_buf_json_string(b, uri, strlen(uri));
	else if (wasmcp_json_type_of(c->uri) == WASMCP_JSON_STRING)
		wasmcp_buf_raw(b, c->uri.ptr, c->uri.len);
	else
		wasmcp_buf_cstr(b, "\"\"");
	if (mime_type) {
		wasmcp_buf_cstr(b, ",\"mimeType\":");
		wasmcp_buf_json_string(b, mime_type, strlen(mime_type));
	}
	return 1;
}

int wasmcp_resource_text(wasmcp_call *c, const char *uri, const char *mime_type, const char *text, size_t n) {
	wasmcp_buf b = {0};
	if (!resource_begin(c, &b, uri, mime_type))
		return -1;
	wasmcp_buf_cstr(&b, ",\"text\":");
	wasmcp_buf_json_string(&b, text, n);
	wasmcp_buf_cstr(&b, "}]}}");
	return finish(&b);
}

int wasmcp_resource_blob(wasmcp_call *c, const char *uri, const char *mime_type, const void *data, size_t n) {
	wasmcp_buf b = {0};
	if (!resource_begin(c, &b, uri, mime_type))
		return -1;
	wasmcp_buf_cstr(&b, ",\"blob\":\"");
	buf_base64(&b, data, n);
	wasmcp_buf_cstr(&b, "\"}]}}");
	return finish(&b);
}

int wasmcp_prompt_result(wasmcp_call *c, const char *description, const char *role, const char *text, size_t n) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"result\":{"))
		return -1;
	if (description) {
		wasmcp_buf_cstr(&b, "\"description\":");
		wasmcp_buf_json_string(&b, description, strlen(description));
		wasmcp_buf_cstr(&b, ",");
	}
	wasmcp_buf_cstr(&b, "\"messages\":[{\"role\":");
	wasmcp_buf_json_string(&b, role, strlen(role));
	wasmcp_buf_cstr(&b, ",\"content\":{\"type\":\"text\",\"text\":");
	wasmcp_buf_json_string(&b, text, n);
	wasmcp_buf_cstr(&b, "}}]}}");
	return finish(&b);
}

/* MCP's cap on the values of one completion answer. */
#define MAX_COMPLETION_VALUES 100

int wasmcp_completion(wasmcp_call *c, const char *const *values, size_t n) {
	wasmcp_buf b = {0};
	if (!answer_begin(c, &b, ",\"result\":{\"completion\":{\"values\":["))
		return -1;
	for (size_t i = 0; i < n && i < MAX_COMPLETION_VALUES; i++) {
		if (i)
			wasmcp_buf_raw(&b, ",", 1);
		wasmcp_buf_json_string(&b, values[i], strlen(values[i]));
	}
	wasmcp_buf_cstr(&b, "],\"total\":");
	wasmcp_buf_int(&b, (int64_t)n);
	wasmcp_buf_cstr(&b, n > MAX_COMPLETION_VALUES ? ",\"hasMore\":true}}}" : ",\"hasMore\":false}}}");
	return finish(&b);
}

void wasmcp_notify(wasmcp_call *c, const char *method, const char *params_json) {
	wasmcp_json p;
	if (c->answered)
		return;
	if (params_json && (!wasmcp_json_parse(params_json, strlen(params_json), &p) ||
	                    wasmcp_json_type_of(p) != WASMCP_JSON_OBJECT)) {
		fprintf(stderr, "error: wasmcp_notify %s: params are not a JSON object\n", method);
		return;
	}
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"method\":");
	wasmcp_buf_json_string(&b, method, strlen(method));
	wasmcp_buf_cstr(&b, ",\"params\":");
	if (params_json)
		buf_json_compact(&b, p.ptr, p.len);
	else
		wasmcp_buf_cstr(&b, "{}");
	wasmcp_buf_cstr(&b, "}");
	finish(&b);
}

void wasmcp_resource_updated(wasmcp_call *c, const char *uri) {
	if (c->answered)
		return;
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":");
	wasmcp_buf_json_string(&b, uri, strlen(uri));
	wasmcp_buf_cstr(&b, "}}");
	finish(&b);
}

wasmcp_json wasmcp_client_capabilities(const wasmcp_call *c) {
	wasmcp_json v;
	if (!wasmcp_json_get(c->meta, "io.modelcontextprotocol/clientCapabilities", &v) ||
	    wasmcp_json_type_of(v) != WASMCP_JSON_OBJECT)
		v.ptr = NULL, v.len = 0;
	return v;
}

wasmcp_json wasmcp_state(const wasmcp_call *c) {
	wasmcp_json v;
	if (!wasmcp_json_get(c->meta, "wasmcp/state", &v) || wasmcp_json_type_of(v) == WASMCP_JSON_NULL)
		v.ptr = NULL, v.len = 0;
	return v;
}

int wasmcp_set_state(wasmcp_call *c, const char *json, size_t n) {
	wasmcp_json v;
	if (c->answered)
		return -1;
	if (!wasmcp_json_parse(json, n, &v)) {
		fprintf(stderr, "error: wasmcp_set_state: the state is not valid JSON\n");
		return -1;
	}
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"wasmcp/state\",\"params\":{\"state\":");
	buf_json_compact(&b, v.ptr, v.len);
	wasmcp_buf_cstr(&b, "}}");
	return finish(&b);
}

void wasmcp_progress(wasmcp_call *c, double progress, double total, const char *message) {
	if (c->progress_token.ptr == NULL || c->answered)
		return;
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":");
	wasmcp_buf_raw(&b, c->progress_token.ptr, c->progress_token.len);
	wasmcp_buf_cstr(&b, ",\"progress\":");
	wasmcp_buf_double(&b, progress);
	if (total >= 0) {
		wasmcp_buf_cstr(&b, ",\"total\":");
		wasmcp_buf_double(&b, total);
	}
	if (message) {
		wasmcp_buf_cstr(&b, ",\"message\":");
		wasmcp_buf_json_string(&b, message, strlen(message));
	}
	wasmcp_buf_cstr(&b, "}}");
	finish(&b);
}

void wasmcp_log(wasmcp_call *c, const char *level, const char *logger, const char *message) {
	if (c->answered)
		return;
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":");
	wasmcp_buf_json_string(&b, level, strlen(level));
	if (logger) {
		wasmcp_buf_cstr(&b, ",\"logger\":");
		wasmcp_buf_json_string(&b, logger, strlen(logger));
	}
	wasmcp_buf_cstr(&b, ",\"data\":");
	wasmcp_buf_json_string(&b, message, strlen(message));
	wasmcp_buf_cstr(&b, "}}");
	finish(&b);
}

/* Stdin is read through one buffer: bytes read past a line stay for the
 * next read_line (the answers to wasmcp/http requests come after the
 * request line). */
static char *in_buf;
static size_t in_len, in_cap;
static int in_eof;

/* read_line returns the next line of stdin without its newline, in a
 * malloc'd NUL-terminated buffer (the last line may end at EOF without a
 * newline; at EOF with nothing left it is empty). NULL on a read error or
 * when memory runs out. */
static char *read_line(size_t *len) {
	size_t scanned = 0;
	for (;;) {
		char *nl = in_len > scanned ? memchr(in_buf + scanned, '\n', in_len - scanned) : NULL;
		scanned = in_len;
		if (nl != NULL || in_eof) {
			size_t n = nl ? (size_t)(nl - in_buf) : in_len;
			char *line = malloc(n + 1);
			if (line == NULL)
				return NULL;
			if (n)
				memcpy(line, in_buf, n);
			line[n] = 0;
			size_t used = nl ? n + 1 : n;
			memmove(in_buf, in_buf + used, in_len - used);
			in_len -= used;
			*len = n;
			return line;
		}
		if (in_len == in_cap) {
			size_t nc = in_cap ? in_cap * 2 : 4096;
			char *nb = in_cap > SIZE_MAX / 2 ? NULL : realloc(in_buf, nc);
			if (nb == NULL)
				return NULL;
			in_buf = nb;
			in_cap = nc;
		}
		ssize_t r = read(0, in_buf + in_len, in_cap - in_len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (r == 0)
			in_eof = 1;
		in_len += (size_t)r;
	}
}

/* ---------------------------------------------------------------------
 * Answers to the guest's requests
 * ------------------------------------------------------------------- */

/* Answers read while waiting for another one wait here for their own
 * waiter. The host allows 16 requests outstanding; more room than that
 * only matters for a host that breaks the ABI. */
#define STASH_MAX 32

static struct {
	char *key;  /* the id's normal form (id_key) */
	char *line; /* the whole answer line */
	size_t len;
} stash[STASH_MAX];

/* id_key writes the normal form of a JSON-RPC id view into b, NUL
 * terminated: "s:" and the unescaped string, or "n:" and the integer. */
static void id_key(wasmcp_buf *b, wasmcp_json id) {
	int64_t n;
	if (wasmcp_json_type_of(id) == WASMCP_JSON_STRING) {
		size_t len;
		char *s = wasmcp_json_string(id, &len);
		wasmcp_buf_cstr(b, "s:");
		if (s)
			wasmcp_buf_raw(b, s, len);
		free(s);
	} else if (wasmcp_json_int(id, &n)) {
		wasmcp_buf_cstr(b, "n:");
		wasmcp_buf_int(b, n);
	} else {
		wasmcp_buf_cstr(b, "?:");
		wasmcp_buf_raw(b, id.ptr, id.len);
	}
	wasmcp_buf_raw(b, "", 1);
}

/* key_of writes the normal form of a request key: all digits is an
 * integer id, anything else a string id. */
static void key_of(wasmcp_buf *b, const char *key) {
	size_t i = 0;
	while (key[i] >= '0' && key[i] <= '9')
		i++;
	wasmcp_buf_cstr(b, i > 0 && key[i] == 0 ? "n:" : "s:");
	if (i > 0 && key[i] == 0)
		while (key[0] == '0' && key[1] != 0)
			key++;
	wasmcp_buf_cstr(b, key);
	wasmcp_buf_raw(b, "", 1);
}

/* await_answer reads stdin until the answer whose id has the normal form
 * key arrives, and returns its line (malloc'd) and parsed view. NULL when
 * stdin ends (or fails) first. Lines that are not answers are ignored. */
static char *await_answer(const char *key, size_t *len, wasmcp_json *msg) {
	for (int i = 0; i < STASH_MAX; i++) {
		if (stash[i].key && strcmp(stash[i].key, key) == 0) {
			char *line = stash[i].line;
			*len = stash[i].len;
			free(stash[i].key);
			stash[i].key = NULL;
			stash[i].line = NULL;
			wasmcp_json_parse(line, *len, msg);
			return line;
		}
	}
	for (;;) {
		size_t n;
		char *line = read_line(&n);
		if (line == NULL || (n == 0 && in_eof && in_len == 0)) {
			free(line);
			return NULL;
		}
		wasmcp_json m, mid, method, result, err;
		if (!wasmcp_json_parse(line, n, &m) || wasmcp_json_type_of(m) != WASMCP_JSON_OBJECT ||
		    !wasmcp_json_get(m, "id", &mid) || wasmcp_json_get(m, "method", &method) ||
		    (!wasmcp_json_get(m, "result", &result) && !wasmcp_json_get(m, "error", &err))) {
			if (n > 0)
				fprintf(stderr, "wasmcp: ignoring a line on stdin that is not an answer\n");
			free(line);
			continue;
		}
		wasmcp_buf k = {0};
		id_key(&k, mid);
		if (!k.oom && strcmp(k.data, key) == 0) {
			wasmcp_buf_free(&k);
			*len = n;
			*msg = m;
			return line;
		}
		int kept = 0;
		for (int i = 0; i < STASH_MAX && !kept && !k.oom; i++) {
			if (stash[i].key == NULL) {
				stash[i].key = k.data;
				stash[i].line = line;
				stash[i].len = n;
				kept = 1;
			}
		}
		if (!kept) {
			fprintf(stderr, "wasmcp: dropping an answer nobody waits for (more than %d outstanding)\n", STASH_MAX);
			wasmcp_buf_free(&k);
			free(line);
		}
	}
}

static int64_t request_seq;

int wasmcp_request_start(wasmcp_call *c, const char *key, const char *method, const char *params_json,
                         char *key_out) {
	wasmcp_json p;
	char num[24];
	if (c->answered) {
		fprintf(stderr, "error: wasmcp: %s after the call was answered\n", method);
		return -1;
	}
	if (key != NULL) {
		size_t i = 0;
		while (key[i] >= '0' && key[i] <= '9')
			i++;
		if (key[0] == 0 || key[i] == 0) {
			fprintf(stderr, "error: wasmcp: request key \"%s\" must be non-empty and not all digits\n", key);
			return -1;
		}
	}
	if (params_json == NULL || !wasmcp_json_parse(params_json, strlen(params_json), &p) ||
	    wasmcp_json_type_of(p) != WASMCP_JSON_OBJECT) {
		fprintf(stderr, "error: wasmcp: %s params are not a JSON object\n", method);
		return -1;
	}
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (key) {
		wasmcp_buf_json_string(&b, key, strlen(key));
	} else {
		snprintf(num, sizeof num, "%lld", (long long)++request_seq);
		wasmcp_buf_cstr(&b, num);
		if (key_out)
			memcpy(key_out, num, strlen(num) + 1);
	}
	wasmcp_buf_cstr(&b, ",\"method\":");
	wasmcp_buf_json_string(&b, method, strlen(method));
	wasmcp_buf_cstr(&b, ",\"params\":");
	buf_json_compact(&b, p.ptr, p.len);
	wasmcp_buf_cstr(&b, "}");
	return finish(&b);
}

static char *dup_cstr(const char *s);

int wasmcp_request_wait(const char *key, wasmcp_answer *out) {
	memset(out, 0, sizeof *out);
	wasmcp_buf k = {0};
	key_of(&k, key);
	size_t n;
	wasmcp_json msg, err, code, message;
	char *line = k.oom ? NULL : await_answer(k.data, &n, &msg);
	wasmcp_buf_free(&k);
	if (line == NULL) {
		out->code = -32603;
		out->message = dup_cstr("stdin closed before the answer arrived");
		return -1;
	}
	out->line = line;
	if (wasmcp_json_get(msg, "error", &err)) {
		int64_t cd = 0;
		if (wasmcp_json_get(err, "code", &code))
			wasmcp_json_int(code, &cd);
		out->code = (int)cd;
		if (wasmcp_json_get(err, "message", &message))
			out->message = wasmcp_json_string(message, NULL);
		if (out->message == NULL)
			out->message = dup_cstr("");
		wasmcp_json_get(err, "data", &out->data);
		return -1;
	}
	wasmcp_json_get(msg, "result", &out->result);
	if (wasmcp_json_type_of(out->result) != WASMCP_JSON_OBJECT) {
		out->code = -32603;
		out->message = dup_cstr("the answer's result is not an object");
		return -1;
	}
	out->ok = 1;
	return 0;
}

void wasmcp_answer_free(wasmcp_answer *a) {
	free(a->message);
	free(a->line);
	memset(a, 0, sizeof *a);
}

/* ask starts a request and waits for it. */
static int ask(wasmcp_call *c, const char *key, const char *method, const char *params, wasmcp_answer *out) {
	char num[24];
	memset(out, 0, sizeof *out);
	if (wasmcp_request_start(c, key, method, params, num) != 0) {
		out->code = -32603;
		out->message = dup_cstr("the request could not be sent");
		return -1;
	}
	return wasmcp_request_wait(key ? key : num, out);
}

int wasmcp_elicit(wasmcp_call *c, const char *key, const char *message, const char *requested_schema,
                  wasmcp_answer *out) {
	wasmcp_json sch;
	if (requested_schema == NULL || !wasmcp_json_parse(requested_schema, strlen(requested_schema), &sch) ||
	    wasmcp_json_type_of(sch) != WASMCP_JSON_OBJECT) {
		memset(out, 0, sizeof *out);
		out->code = -32603;
		out->message = dup_cstr("wasmcp_elicit: requested_schema is not a JSON object");
		return -1;
	}
	wasmcp_buf p = {0};
	wasmcp_buf_cstr(&p, "{\"message\":");
	wasmcp_buf_json_string(&p, message, strlen(message));
	wasmcp_buf_cstr(&p, ",\"requestedSchema\":");
	wasmcp_buf_raw(&p, sch.ptr, sch.len);
	wasmcp_buf_raw(&p, "}", 2); /* with the NUL */
	int rc;
	if (p.oom) {
		memset(out, 0, sizeof *out);
		out->code = -32603;
		out->message = dup_cstr("out of memory");
		rc = -1;
	} else {
		rc = ask(c, key, "elicitation/create", p.data, out);
	}
	wasmcp_buf_free(&p);
	return rc;
}

int wasmcp_sample(wasmcp_call *c, const char *key, const char *params_json, wasmcp_answer *out) {
	return ask(c, key, "sampling/createMessage", params_json, out);
}

int wasmcp_list_roots(wasmcp_call *c, const char *key, wasmcp_answer *out) {
	return ask(c, key, "roots/list", "{}", out);
}

int wasmcp_error_answer(wasmcp_call *c, const wasmcp_answer *a) {
	const char *msg = a->message ? a->message : "";
	if (a->data.ptr)
		return wasmcp_error_data(c, a->code, msg, a->data.ptr, a->data.len);
	return wasmcp_error(c, a->code, msg);
}

/* ---------------------------------------------------------------------
 * Outbound HTTP (ABI 1.1)
 * ------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void buf_base64(wasmcp_buf *b, const unsigned char *s, size_t n) {
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		q[0] = b64[v >> 18 & 63];
		q[1] = b64[v >> 12 & 63];
		q[2] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		wasmcp_buf_raw(b, q, 4);
	}
}

/* unbase64 decodes standard padded base64 in place; returns the length,
 * or (size_t)-1 on a bad character. */
static size_t unbase64(char *s, size_t n) {
	size_t o = 0;
	uint32_t v = 0;
	int bits = 0;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *p = memchr(b64, s[i], 64);
		if (p == NULL || s[i] == 0)
			return (size_t)-1;
		v = v << 6 | (uint32_t)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			s[o++] = (char)(v >> bits & 0xff);
		}
	}
	return o;
}

static char *dup_cstr(const char *s) {
	size_t n = strlen(s);
	char *d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static int http_fail(wasmcp_http_response *out, const char *reason, const char *msg) {
	out->reason = dup_cstr(reason);
	out->message = dup_cstr(msg);
	return -1;
}

int wasmcp_http(const char *method, const char *url, const char *headers_json, const void *body, size_t body_len,
                int64_t timeout_ms, wasmcp_http_response *out) {
	static int64_t seq;
	memset(out, 0, sizeof *out);
	if (url == NULL)
		return http_fail(out, "sdk", "wasmcp_http: url is NULL");
	wasmcp_json hj;
	if (headers_json && (!wasmcp_json_parse(headers_json, strlen(headers_json), &hj) ||
	                     wasmcp_json_type_of(hj) != WASMCP_JSON_OBJECT))
		return http_fail(out, "sdk", "wasmcp_http: headers_json is not a JSON object");
	char id[40];
	snprintf(id, sizeof id, "wasmcp-http-%lld", (long long)++seq);
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"jsonrpc\":\"2.0\",\"id\":\"");
	wasmcp_buf_cstr(&b, id);
	wasmcp_buf_cstr(&b, "\",\"method\":\"wasmcp/http\",\"params\":{\"method\":");
	const char *m = method ? method : "GET";
	wasmcp_buf_json_string(&b, m, strlen(m));
	wasmcp_buf_cstr(&b, ",\"url\":");
	wasmcp_buf_json_string(&b, url, strlen(url));
	if (headers_json) {
		wasmcp_buf_cstr(&b, ",\"headers\":");
		buf_json_compact(&b, hj.ptr, hj.len);
	}
	if (body && body_len) {
		wasmcp_buf_cstr(&b, ",\"bodyBase64\":\"");
		buf_base64(&b, body, body_len);
		wasmcp_buf_cstr(&b, "\"");
	}
	if (timeout_ms > 0) {
		wasmcp_buf_cstr(&b, ",\"timeoutMs\":");
		wasmcp_buf_int(&b, timeout_ms);
	}
	wasmcp_buf_cstr(&b, "}}");
	if (b.oom || wasmcp_write_line(b.data, b.len) != 0) {
		wasmcp_buf_free(&b);
		return http_fail(out, "sdk", "wasmcp_http: could not write the request");
	}
	wasmcp_buf_free(&b);
	{
		size_t n;
		wasmcp_json msg, result, err;
		wasmcp_buf k = {0};
		wasmcp_buf_cstr(&k, "s:");
		wasmcp_buf_cstr(&k, id);
		wasmcp_buf_raw(&k, "", 1);
		char *line = k.oom ? NULL : await_answer(k.data, &n, &msg);
		wasmcp_buf_free(&k);
		if (line == NULL)
			return http_fail(out, "sdk", "wasmcp_http: stdin ended before the host answered");
		out->line = line;
		if (wasmcp_json_get(msg, "error", &err)) {
			wasmcp_json jm, data, reason;
			char *em = NULL, *r = NULL;
			if (wasmcp_json_get(err, "message", &jm))
				em = wasmcp_json_string(jm, NULL);
			if (wasmcp_json_get(err, "data", &data) && wasmcp_json_get(data, "reason", &reason))
				r = wasmcp_json_string(reason, NULL);
			out->reason = r ? r : dup_cstr("unknown");
			out->message = em ? em : dup_cstr("");
			return -1;
		}
		if (!wasmcp_json_get(msg, "result", &result))
			return http_fail(out, "sdk", "wasmcp_http: the host's answer has neither result nor error");
		wasmcp_json st, jb;
		int64_t status = 0;
		if (wasmcp_json_get(result, "status", &st))
			wasmcp_json_int(st, &status);
		out->status = (int)status;
		wasmcp_json_get(result, "headers", &out->headers);
		if (wasmcp_json_get(result, "bodyBase64", &jb)) {
			size_t bl;
			out->body = wasmcp_json_string(jb, &bl);
			if (out->body) {
				out->body_len = unbase64(out->body, bl);
				if (out->body_len == (size_t)-1) {
					out->body_len = 0;
					return http_fail(out, "sdk", "wasmcp_http: the host's body is not base64");
				}
				out->body[out->body_len] = 0;
			}
		} else if (wasmcp_json_get(result, "body", &jb)) {
			out->body = wasmcp_json_string(jb, &out->body_len);
		}
		if (out->body == NULL) {
			out->body = dup_cstr("");
			out->body_len = 0;
		}
		return 0;
	}
}

void wasmcp_http_response_free(wasmcp_http_response *r) {
	free(r->body);
	free(r->reason);
	free(r->message);
	free(r->line);
	memset(r, 0, sizeof *r);
}

/* error_with_name answers code with prefix followed by the unescaped
 * string view v. */
static void error_with_name(wasmcp_call *c, int code, const char *prefix, wasmcp_json v) {
	char *name = wasmcp_json_string(v, NULL);
	wasmcp_buf m = {0};
	wasmcp_buf_cstr(&m, prefix);
	wasmcp_buf_cstr(&m, name ? name : "?");
	wasmcp_buf_raw(&m, "", 1);
	wasmcp_error(c, code, m.oom ? prefix : m.data);
	wasmcp_buf_free(&m);
	free(name);
}

/* ---------------------------------------------------------------------
 * Resources, prompts, completions
 * ------------------------------------------------------------------- */

static int uri_var_char(char c) { return c != 0 && c != '/' && c != '?' && c != '#'; }

/* put_var appends "name":"value" (value percent-decoded) to the object
 * being built in vars. */
static void put_var(wasmcp_buf *vars, const char *name, size_t nn, const char *v, size_t vn) {
	wasmcp_buf dec = {0};
	for (size_t i = 0; i < vn; i++) {
		int h, l;
		if (v[i] == '%' && i + 2 < vn && (h = hexval(v[i + 1])) >= 0 &&
		    (l = hexval(v[i + 2])) >= 0) {
			char ch = (char)(h << 4 | l);
			wasmcp_buf_raw(&dec, &ch, 1);
			i += 2;
		} else {
			wasmcp_buf_raw(&dec, v + i, 1);
		}
	}
	if (vars->len > 1)
		wasmcp_buf_raw(vars, ",", 1);
	wasmcp_buf_json_string(vars, name, nn);
	wasmcp_buf_raw(vars, ":", 1);
	wasmcp_buf_json_string(vars, dec.data ? dec.data : "", dec.len);
	vars->oom |= dec.oom;
	wasmcp_buf_free(&dec);
}

/* tmpl_match matches uri against the level-1 template t, appending the
 * variables to vars; it backtracks over the length of each variable. */
static int tmpl_match(const char *t, const char *u, wasmcp_buf *vars) {
	while (*t && *t != '{') {
		if (*t != *u)
			return 0;
		t++;
		u++;
	}
	if (*t == 0)
		return *u == 0;
	const char *close = strchr(t, '}');
	if (close == NULL)
		return 0;
	size_t max = 0;
	while (uri_var_char(u[max]))
		max++;
	for (size_t n = max; n >= 1; n--) {
		size_t keep = vars->len;
		put_var(vars, t + 1, (size_t)(close - t - 1), u, n);
		if (tmpl_match(close + 1, u + n, vars))
			return 1;
		vars->len = keep;
	}
	return 0;
}

static void read_resource(wasmcp_call *c, const wasmcp_server *srv) {
	char *uri = wasmcp_json_type_of(c->uri) == WASMCP_JSON_STRING ? wasmcp_json_string(c->uri, NULL) : NULL;
	if (uri == NULL) {
		wasmcp_error(c, -32602, "params.uri must be a string");
		return;
	}
	const wasmcp_resource *r = NULL;
	wasmcp_buf vars = {0};
	wasmcp_buf_raw(&vars, "{", 1);
	for (size_t i = 0; i < srv->nresources && r == NULL; i++)
		if (strchr(srv->resources[i].uri, '{') == NULL && strcmp(srv->resources[i].uri, uri) == 0)
			r = &srv->resources[i];
	for (size_t i = 0; i < srv->nresources && r == NULL; i++)
		if (strchr(srv->resources[i].uri, '{') != NULL && tmpl_match(srv->resources[i].uri, uri, &vars))
			r = &srv->resources[i];
	wasmcp_buf_raw(&vars, "}", 1);
	if (r == NULL) {
		wasmcp_buf m = {0}, d = {0};
		wasmcp_buf_cstr(&m, "resource not found: ");
		wasmcp_buf_cstr(&m, uri);
		wasmcp_buf_raw(&m, "", 1);
		wasmcp_buf_cstr(&d, "{\"uri\":");
		wasmcp_buf_raw(&d, c->uri.ptr, c->uri.len);
		wasmcp_buf_cstr(&d, "}");
		if (m.oom || d.oom)
			wasmcp_error(c, -32603, "out of memory");
		else
			wasmcp_error_data(c, -32602, m.data, d.data, d.len);
		wasmcp_buf_free(&m);
		wasmcp_buf_free(&d);
	} else if (vars.oom) {
		wasmcp_error(c, -32603, "out of memory");
	} else {
		wasmcp_json v = {vars.data, vars.len};
		r->fn(c, uri, v);
		if (!c->answered)
			error_with_name(c, -32603, "the resource handler returned without answering: ", c->uri);
	}
	wasmcp_buf_free(&vars);
	free(uri);
}

/* missing_prompt_argument returns the first argument the description
 * declares required for the prompt that args lacks (a view of its name),
 * or an absent view. */
static wasmcp_json missing_prompt_argument(const char *description, wasmcp_json name, wasmcp_json args) {
	wasmcp_json d, prompts, p, pn, pargs, a, an, req, v, none = {NULL, 0};
	size_t pos = 0, apos = 0;
	int required;
	if (!wasmcp_json_parse(description, strlen(description), &d) || !wasmcp_json_get(d, "prompts", &prompts))
		return none;
	while (wasmcp_json_array_next(prompts, &pos, &p)) {
		if (!wasmcp_json_get(p, "name", &pn) || wasmcp_json_type_of(pn) != WASMCP_JSON_STRING)
			continue;
		char *want = wasmcp_json_string(pn, NULL);
		int same = want && wasmcp_json_string_equals(name, want);
		free(want);
		if (!same || !wasmcp_json_get(p, "arguments", &pargs))
			continue;
		while (wasmcp_json_array_next(pargs, &apos, &a)) {
			if (!wasmcp_json_get(a, "required", &req) || !wasmcp_json_bool(req, &required) || !required ||
			    !wasmcp_json_get(a, "name", &an))
				continue;
			char *argname = wasmcp_json_string(an, NULL);
			int present = argname && wasmcp_json_get(args, argname, &v) &&
			              wasmcp_json_type_of(v) == WASMCP_JSON_STRING && v.len > 2;
			free(argname);
			if (!present)
				return an;
		}
		return none;
	}
	return none;
}

static void get_prompt(wasmcp_call *c, const wasmcp_server *srv) {
	const wasmcp_prompt *p = NULL;
	wasmcp_json_type at = wasmcp_json_type_of(c->arguments);
	if (wasmcp_json_type_of(c->name) != WASMCP_JSON_STRING) {
		wasmcp_error(c, -32602, "params.name must be a string");
		return;
	}
	if (at != WASMCP_JSON_ABSENT && at != WASMCP_JSON_OBJECT && at != WASMCP_JSON_NULL) {
		wasmcp_error(c, -32602, "params.arguments must be an object");
		return;
	}
	wasmcp_json args = c->arguments, k, v;
	if (at != WASMCP_JSON_OBJECT) {
		args.ptr = "{}";
		args.len = 2;
	}
	size_t pos = 0;
	while (wasmcp_json_object_next(args, &pos, &k, &v)) {
		if (wasmcp_json_type_of(v) != WASMCP_JSON_STRING) {
			wasmcp_error(c, -32602, "prompt arguments must be strings");
			return;
		}
	}
	for (size_t i = 0; i < srv->nprompts && p == NULL; i++)
		if (wasmcp_json_string_equals(c->name, srv->prompts[i].name))
			p = &srv->prompts[i];
	if (p == NULL) {
		error_with_name(c, -32602, "unknown prompt: ", c->name);
		return;
	}
	wasmcp_json missing = missing_prompt_argument(srv->description, c->name, args);
	if (missing.ptr != NULL) {
		error_with_name(c, -32602, "missing required prompt argument: ", missing);
		return;
	}
	p->fn(c, args);
	if (!c->answered)
		error_with_name(c, -32603, "the prompt handler returned without answering: ", c->name);
}

static void complete(wasmcp_call *c, const wasmcp_server *srv) {
	wasmcp_json ref, arg, an, av;
	if (!wasmcp_json_get(c->params, "ref", &ref) || wasmcp_json_type_of(ref) != WASMCP_JSON_OBJECT ||
	    !wasmcp_json_get(c->params, "argument", &arg) || !wasmcp_json_get(arg, "name", &an) ||
	    wasmcp_json_type_of(an) != WASMCP_JSON_STRING) {
		wasmcp_error(c, -32602, "completion/complete needs params.ref and params.argument.name");
		return;
	}
	char *name = wasmcp_json_string(an, NULL);
	char *value = wasmcp_json_get(arg, "value", &av) ? wasmcp_json_string(av, NULL) : NULL;
	if (name == NULL) {
		wasmcp_error(c, -32603, "out of memory");
	} else {
		srv->complete(c, ref, name, value ? value : "");
		if (!c->answered)
			wasmcp_completion(c, NULL, 0);
	}
	free(name);
	free(value);
}

static void call_tool(wasmcp_call *c, const wasmcp_server *srv) {
	const wasmcp_tool *t = NULL;
	wasmcp_json_type at = wasmcp_json_type_of(c->arguments);
	if (wasmcp_json_type_of(c->name) != WASMCP_JSON_STRING) {
		wasmcp_error(c, -32602, "params.name must be a string");
		return;
	}
	if (at != WASMCP_JSON_ABSENT && at != WASMCP_JSON_OBJECT && at != WASMCP_JSON_NULL) {
		wasmcp_error(c, -32602, "params.arguments must be an object");
		return;
	}
	for (size_t i = 0; i < srv->ntools && t == NULL; i++)
		if (wasmcp_json_string_equals(c->name, srv->tools[i].name))
			t = &srv->tools[i];
	if (t == NULL) {
		error_with_name(c, -32602, "Unknown tool: ", c->name);
		return;
	}
	wasmcp_json args = c->arguments;
	if (at != WASMCP_JSON_OBJECT) {
		args.ptr = "{}";
		args.len = 2;
	}
	t->fn(c, args);
	if (!c->answered)
		error_with_name(c, -32603, "the tool returned without answering: ", c->name);
}

int wasmcp_serve(const wasmcp_server *srv) {
	size_t n;
	char *line = read_line(&n);
	if (line == NULL) {
		fprintf(stderr, "error: wasmcp: could not read the request from stdin\n");
		return 1;
	}
	wasmcp_json req, jsonrpc;
	wasmcp_call c;
	memset(&c, 0, sizeof c);
	if (!wasmcp_json_parse(line, n, &req) || wasmcp_json_type_of(req) != WASMCP_JSON_OBJECT) {
		fprintf(stderr, "error: wasmcp: the request line is not a JSON object\n");
		free(line);
		return 1;
	}
	{
		static const char *const names[] = {"id", "method", "params", "jsonrpc"};
		wasmcp_json v[4];
		get_members(req, names, v, 4);
		c.id = v[0], c.method = v[1], c.params = v[2], jsonrpc = v[3];
	}
	wasmcp_json_type id_type = wasmcp_json_type_of(c.id);
	if ((id_type != WASMCP_JSON_NUMBER && id_type != WASMCP_JSON_STRING) ||
	    wasmcp_json_type_of(c.method) != WASMCP_JSON_STRING || !wasmcp_json_string_equals(jsonrpc, "2.0")) {
		fprintf(stderr, "error: wasmcp: the request line is not a JSON-RPC 2.0 request\n");
		free(line);
		return 1;
	}
	if (wasmcp_json_type_of(c.params) == WASMCP_JSON_OBJECT) {
		static const char *const names[] = {"name", "arguments", "uri", "_meta"};
		wasmcp_json v[4];
		get_members(c.params, names, v, 4);
		c.name = v[0], c.arguments = v[1], c.uri = v[2], c.meta = v[3];
		if (wasmcp_json_type_of(c.meta) == WASMCP_JSON_OBJECT) {
			wasmcp_json_get(c.meta, "progressToken", &c.progress_token);
			if (wasmcp_json_type_of(c.progress_token) == WASMCP_JSON_NULL)
				c.progress_token.ptr = NULL, c.progress_token.len = 0;
		} else {
			c.meta.ptr = NULL, c.meta.len = 0;
		}
	}
	if (wasmcp_json_string_equals(c.method, "wasmcp/describe")) {
		size_t dn = strlen(srv->description);
		wasmcp_json d;
		if (!wasmcp_json_parse(srv->description, dn, &d) || wasmcp_json_type_of(d) != WASMCP_JSON_OBJECT)
			wasmcp_error(&c, -32603, "the module's description is not a JSON object");
		else
			wasmcp_result(&c, d.ptr, d.len);
	} else if (wasmcp_json_string_equals(c.method, "tools/call")) {
		call_tool(&c, srv);
	} else if (srv->nresources > 0 && wasmcp_json_string_equals(c.method, "resources/read")) {
		read_resource(&c, srv);
	} else if (srv->nprompts > 0 && wasmcp_json_string_equals(c.method, "prompts/get")) {
		get_prompt(&c, srv);
	} else if (srv->complete != NULL && wasmcp_json_string_equals(c.method, "completion/complete")) {
		complete(&c, srv);
	} else {
		error_with_name(&c, -32601, "Method not found: ", c.method);
	}
	free(line);
	return 0;
}

int wasmcp_run(const char *description, const wasmcp_tool *tools, size_t ntools) {
	wasmcp_server s;
	memset(&s, 0, sizeof s);
	s.description = description;
	s.tools = tools;
	s.ntools = ntools;
	return wasmcp_serve(&s);
}
