/*
 * wasmcp.h — the C guest SDK for the wasmcp host–guest ABI v1.
 *
 * A tool module written in C reads one JSON-RPC request line from stdin,
 * answers it with one response line on stdout, and exits. This header and
 * wasmcp.c do that part: read and parse the request, answer
 * wasmcp/describe with the description the author wrote, dispatch
 * tools/call to the author's handlers, and write results, errors, progress
 * and log notifications with correct JSON escaping. The JSON reader is
 * small and allocation-free (strings are unescaped into a malloc'd copy on
 * request). See README.md beside this file and abi/README.md in the
 * repository for the contract.
 *
 * Build (wasi-libc, Debian's clang-14 + wasi-libc packages):
 *   clang-14 --target=wasm32-wasi --sysroot=/usr -O2 -I guest-sdk/c \
 *     -o tool.wasm tool.c guest-sdk/c/wasmcp.c
 *
 * The code is plain C99 with <unistd.h>; it also compiles natively, which is
 * how its unit tests run.
 */
#ifndef WASMCP_H
#define WASMCP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this SDK speaks; a description must carry it as
 * "abiVersion". */
#define WASMCP_ABI_VERSION 1

/* ---------------------------------------------------------------------
 * JSON reader
 *
 * A wasmcp_json is a view of one complete JSON value inside a buffer the
 * caller owns (ptr points at its first byte, len covers it exactly). Nothing
 * is copied or allocated; accessors walk the bytes. A view with ptr == NULL
 * is "absent". Views made by wasmcp_json_parse and by the accessors below
 * are valid JSON (wasmcp_json_parse checks the grammar once), so accessors
 * need no further checks; every accessor still stays inside [ptr, ptr+len).
 * ------------------------------------------------------------------- */

typedef enum {
	WASMCP_JSON_ABSENT = 0, /* no value (member not found, ptr == NULL) */
	WASMCP_JSON_NULL,
	WASMCP_JSON_FALSE,
	WASMCP_JSON_TRUE,
	WASMCP_JSON_NUMBER,
	WASMCP_JSON_STRING,
	WASMCP_JSON_ARRAY,
	WASMCP_JSON_OBJECT
} wasmcp_json_type;

typedef struct {
	const char *ptr;
	size_t len;
} wasmcp_json;

/* The deepest nesting of arrays and objects wasmcp_json_parse accepts. */
#define WASMCP_JSON_MAX_DEPTH 512

/* wasmcp_json_parse checks that s[0:n] is exactly one JSON value (RFC 8259,
 * surrounding whitespace allowed) and sets *out to it. Returns 1 on
 * success, 0 if the text is not valid JSON or nests deeper than
 * WASMCP_JSON_MAX_DEPTH. */
int wasmcp_json_parse(const char *s, size_t n, wasmcp_json *out);

/* wasmcp_json_type_of returns the type of v (from its first byte). */
wasmcp_json_type wasmcp_json_type_of(wasmcp_json v);

/* wasmcp_json_get finds the member called name in the object obj (the
 * member name is compared after unescaping, so "\u0074ext" matches "text").
 * With duplicate names the last one wins, as in most JSON libraries.
 * Returns 1 and sets *out when found; 0 (and *out absent) otherwise or when
 * obj is not an object. */
int wasmcp_json_get(wasmcp_json obj, const char *name, wasmcp_json *out);

/* wasmcp_json_object_next iterates over an object's members. Start with
 * *pos = 0; each call sets *key (a string view, quotes included) and *val
 * and returns 1, until there are no more members (returns 0). */
int wasmcp_json_object_next(wasmcp_json obj, size_t *pos, wasmcp_json *key, wasmcp_json *val);

/* wasmcp_json_array_next iterates over an array's elements the same way. */
int wasmcp_json_array_next(wasmcp_json arr, size_t *pos, wasmcp_json *elem);

/* wasmcp_json_array_len returns the number of elements of an array (0 for
 * anything else). */
size_t wasmcp_json_array_len(wasmcp_json arr);

/* wasmcp_json_string unescapes the string v into a new NUL-terminated
 * buffer (free it with free) and stores its byte length (which may be less
 * than strlen if the string contains \u0000) in *len when len is not NULL.
 * \u escapes become UTF-8; a lone surrogate becomes U+FFFD. Returns NULL if
 * v is not a string or memory runs out. */
char *wasmcp_json_string(wasmcp_json v, size_t *len);

/* wasmcp_json_string_equals reports whether the string v, unescaped,
 * equals the NUL-terminated s. Allocates nothing. */
int wasmcp_json_string_equals(wasmcp_json v, const char *s);

/* wasmcp_json_number parses a number. Returns 1 and sets *out on success. */
int wasmcp_json_number(wasmcp_json v, double *out);

/* wasmcp_json_int parses a number that is an integer in int64 range
 * (written with or without fraction/exponent, e.g. 3, 3.0, 3e0). Returns 1
 * and sets *out on success, 0 otherwise. */
int wasmcp_json_int(wasmcp_json v, int64_t *out);

/* wasmcp_json_bool parses true or false. Returns 1 and sets *out (0 or 1)
 * on success. */
int wasmcp_json_bool(wasmcp_json v, int *out);

/* ---------------------------------------------------------------------
 * Output buffer
 *
 * A growable byte buffer for building JSON. Zero-initialize it
 * (wasmcp_buf b = {0};). If memory runs out the buffer remembers it in oom
 * and ignores further appends.
 * ------------------------------------------------------------------- */

typedef struct {
	char *data;
	size_t len, cap;
	int oom;
} wasmcp_buf;

void wasmcp_buf_raw(wasmcp_buf *b, const char *s, size_t n); /* n bytes as they are */
void wasmcp_buf_cstr(wasmcp_buf *b, const char *s);          /* a C string as it is */
void wasmcp_buf_json_string(wasmcp_buf *b, const char *s, size_t n); /* "…", escaped */
void wasmcp_buf_int(wasmcp_buf *b, int64_t v);
void wasmcp_buf_double(wasmcp_buf *b, double v); /* shortest form that reads back; NaN/Inf as null */
void wasmcp_buf_free(wasmcp_buf *b);

/* ---------------------------------------------------------------------
 * Requests and answers
 * ------------------------------------------------------------------- */

/* wasmcp_call is the request being served. Its views point into the
 * request line, which lives until wasmcp_run returns. */
typedef struct {
	wasmcp_json id;             /* the host's id, echoed in the answer */
	wasmcp_json method;         /* a string view */
	wasmcp_json params;         /* absent if the request has none */
	wasmcp_json name;           /* params.name (tools/call: the tool's name) */
	wasmcp_json arguments;      /* params.arguments; absent if not sent */
	wasmcp_json progress_token; /* params._meta.progressToken, or absent */
	int answered;               /* set once a response was written */
} wasmcp_call;

/* A tool handler answers the call with one of the wasmcp_result* /
 * wasmcp_tool_error / wasmcp_error functions. args is params.arguments (an
 * object; an empty object when the client sent none). */
typedef void (*wasmcp_tool_fn)(wasmcp_call *call, wasmcp_json args);

typedef struct {
	const char *name;
	wasmcp_tool_fn fn;
} wasmcp_tool;

/* wasmcp_run serves the one request of this instance: it reads the request
 * line from stdin, answers wasmcp/describe with description (the JSON
 * object of abi/README.md section 5, with "abiVersion": 1), runs the tool
 * named by a tools/call (unknown tool: error -32602), and answers any other
 * method with -32601. Return its result from main. Returns 0 when a
 * response was written, 1 when the request could not be read or parsed (a
 * message goes to stderr; without an id there is nothing to answer). */
int wasmcp_run(const char *description, const wasmcp_tool *tools, size_t ntools);

/* Answers. Each writes the one response line; only the first answer of a
 * call is written (later ones return -1). They return 0 on success. */

/* wasmcp_result answers with a raw JSON result: json must be valid JSON
 * (e.g. built with wasmcp_buf); whitespace between its tokens is dropped,
 * so it may span lines. */
int wasmcp_result(wasmcp_call *call, const char *json, size_t n);

/* wasmcp_result_text answers a CallToolResult with one text block. */
int wasmcp_result_text(wasmcp_call *call, const char *text, size_t n);

/* wasmcp_result_structured answers a CallToolResult whose structuredContent
 * is the JSON object json (valid JSON; whitespace between tokens dropped)
 * and whose one text block is that same JSON (the MCP convention for
 * clients that do not read structuredContent). */
int wasmcp_result_structured(wasmcp_call *call, const char *json, size_t n);

/* wasmcp_tool_error answers a CallToolResult with "isError": true and msg
 * as its text: the way a tool reports that it failed. */
int wasmcp_tool_error(wasmcp_call *call, const char *msg);

/* wasmcp_error answers a JSON-RPC error (e.g. -32602 invalid params). */
int wasmcp_error(wasmcp_call *call, int code, const char *msg);

/* Notifications, written before the answer. */

/* wasmcp_progress sends notifications/progress if the client asked for
 * progress (the request carries a progressToken); total < 0 and message ==
 * NULL are left out. */
void wasmcp_progress(wasmcp_call *call, double progress, double total, const char *message);

/* wasmcp_log sends notifications/message with an MCP log level ("debug",
 * "info", "notice", "warning", "error", "critical", "alert", "emergency"),
 * an optional logger name (NULL for none) and a text message as data. */
void wasmcp_log(wasmcp_call *call, const char *level, const char *logger, const char *message);

/* ---------------------------------------------------------------------
 * Outbound HTTP (ABI 1.1, abi/README.md section 8)
 * ------------------------------------------------------------------- */

/* The host's answer to wasmcp_http. Free it with wasmcp_http_response_free. */
typedef struct {
	int status;         /* the final HTTP status (after redirects); 0 on failure */
	char *body;         /* the response body, decoded, NUL-terminated (may hold NULs) */
	size_t body_len;    /* its length */
	wasmcp_json headers; /* {"Name":["value",…]}, a view into the answer line */
	char *reason;       /* on failure: "policy_refused", "dns", "connect", "timeout",
	                       "too_large", "tls", "protocol", "invalid_request", or
	                       "sdk" (bad arguments, stdin ended); NULL on success */
	char *message;      /* on failure: what happened */
	char *line;         /* the answer line (owns headers) */
} wasmcp_http_response;

/* wasmcp_http makes one outbound HTTP request through the host and waits
 * for its answer. method NULL means GET; headers_json is NULL or a JSON
 * object {"Name":["value"]}; body (body_len bytes, binary safe) may be
 * NULL; timeout_ms <= 0 means the policy's. The module's policy decides
 * what it may reach ([http] in NAME.policy.toml). Returns 0 when the host
 * answered with a response (any status: check out->status), -1 when it
 * did not (out->reason and out->message say why). Call it from a tool
 * handler, before answering. */
int wasmcp_http(const char *method, const char *url, const char *headers_json, const void *body, size_t body_len,
                int64_t timeout_ms, wasmcp_http_response *out);

/* wasmcp_http_response_free releases what wasmcp_http filled in. */
void wasmcp_http_response_free(wasmcp_http_response *r);

/* wasmcp_write_line writes one complete line (a '\n' is appended) to
 * stdout, looping over short writes. Returns 0 on success. */
int wasmcp_write_line(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* WASMCP_H */
