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
	wasmcp_json meta;           /* params._meta (an object), or absent */
	wasmcp_json uri;            /* params.uri (resources/read: a string view), or absent */
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

/* A resource handler answers a resources/read of uri (unescaped,
 * NUL-terminated) with wasmcp_resource_text, wasmcp_resource_blob or
 * wasmcp_result, or an error. vars is an object of the URI template's
 * variables, percent-decoded ({"id":"42"}); {} for a fixed URI. */
typedef void (*wasmcp_resource_fn)(wasmcp_call *call, const char *uri, wasmcp_json vars);

/* A resource or resource template the module serves. uri is a fixed URI
 * ("ref://greeting") or an RFC 6570 level-1 template ("notes://{folder}/{id}",
 * each variable matching one or more characters other than '/', '?' and
 * '#'). Both must also be declared in the description. */
typedef struct {
	const char *uri;
	wasmcp_resource_fn fn;
} wasmcp_resource;

/* A prompt handler answers a prompts/get with wasmcp_prompt_result (or
 * wasmcp_result, or an error). args is params.arguments: an object of
 * strings, {} when the client sent none. Required arguments the
 * description declares are checked before the handler runs. */
typedef void (*wasmcp_prompt_fn)(wasmcp_call *call, wasmcp_json args);

typedef struct {
	const char *name;
	wasmcp_prompt_fn fn;
} wasmcp_prompt;

/* A completion handler answers completion/complete with
 * wasmcp_completion. ref is params.ref ({"type":"ref/prompt","name":…} or
 * {"type":"ref/resource","uri":…}), arg and value the argument's name and
 * the text typed so far (unescaped). Set "completions": true in the
 * description when you give one. */
typedef void (*wasmcp_complete_fn)(wasmcp_call *call, wasmcp_json ref, const char *arg, const char *value);

/* Everything a module serves; zero-initialize and fill in what you have. */
typedef struct {
	const char *description; /* the JSON object of abi/README.md section 5 */
	const wasmcp_tool *tools;
	size_t ntools;
	const wasmcp_resource *resources; /* fixed URIs are matched before templates */
	size_t nresources;
	const wasmcp_prompt *prompts;
	size_t nprompts;
	wasmcp_complete_fn complete; /* NULL: completion/complete gets -32601 */
} wasmcp_server;

/* wasmcp_serve serves the one request of this instance: wasmcp/describe,
 * tools/call, resources/read (unknown URI: -32602 with data {"uri"}),
 * prompts/get (unknown prompt or a missing required argument: -32602) and
 * completion/complete (a handler that does not answer answers no values).
 * A method with nothing registered for it (no resources, no prompts, no
 * completion handler) and any other method get -32601. Returns as
 * wasmcp_run does. */
int wasmcp_serve(const wasmcp_server *server);

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

/* wasmcp_result_text_structured answers a CallToolResult with one text
 * block (text) and structuredContent json (a JSON object; whitespace
 * between tokens dropped), for tools whose text is not the JSON itself. */
int wasmcp_result_text_structured(wasmcp_call *call, const char *text, size_t n, const char *json, size_t jn);

/* wasmcp_resource_text answers a ReadResourceResult with one text content
 * (uri NULL: the requested URI; mime_type NULL: none). */
int wasmcp_resource_text(wasmcp_call *call, const char *uri, const char *mime_type, const char *text, size_t n);

/* wasmcp_resource_blob answers a ReadResourceResult with one binary
 * content (sent as base64). */
int wasmcp_resource_blob(wasmcp_call *call, const char *uri, const char *mime_type, const void *data, size_t n);

/* wasmcp_prompt_result answers a GetPromptResult with one text message of
 * role ("user" or "assistant") and an optional description (NULL: none).
 * For several messages build the result and use wasmcp_result. */
int wasmcp_prompt_result(wasmcp_call *call, const char *description, const char *role, const char *text, size_t n);

/* wasmcp_completion answers a CompleteResult with values (at most the
 * first 100 are sent; total and hasMore say how many there were). */
int wasmcp_completion(wasmcp_call *call, const char *const *values, size_t n);

/* wasmcp_tool_error answers a CallToolResult with "isError": true and msg
 * as its text: the way a tool reports that it failed. */
int wasmcp_tool_error(wasmcp_call *call, const char *msg);

/* wasmcp_error answers a JSON-RPC error (e.g. -32602 invalid params). */
int wasmcp_error(wasmcp_call *call, int code, const char *msg);

/* wasmcp_error_data is wasmcp_error with data, a JSON value (NULL: none). */
int wasmcp_error_data(wasmcp_call *call, int code, const char *msg, const char *data_json, size_t dn);

/* Notifications, written before the answer. */

/* wasmcp_progress sends notifications/progress if the client asked for
 * progress (the request carries a progressToken); total < 0 and message ==
 * NULL are left out. */
void wasmcp_progress(wasmcp_call *call, double progress, double total, const char *message);

/* wasmcp_log sends notifications/message with an MCP log level ("debug",
 * "info", "notice", "warning", "error", "critical", "alert", "emergency"),
 * an optional logger name (NULL for none) and a text message as data. */
void wasmcp_log(wasmcp_call *call, const char *level, const char *logger, const char *message);

/* wasmcp_notify sends any notification: method and params_json (a JSON
 * object, or NULL for {}). For example
 * wasmcp_notify(call, "notifications/tools/list_changed", NULL). */
void wasmcp_notify(wasmcp_call *call, const char *method, const char *params_json);

/* wasmcp_resource_updated sends notifications/resources/updated for uri
 * (the host forwards it only for a URI the module serves). */
void wasmcp_resource_updated(wasmcp_call *call, const char *uri);

/* ---------------------------------------------------------------------
 * Requests to the client (abi/README.md section 4 and 4.1)
 *
 * A tool, prompt or resource handler may ask the client for input: an
 * elicitation form, a sampling completion, its roots. Each request has a
 * key, its JSON-RPC id: under MCP 2026-07-28 the client answers by
 * retrying the whole call, and the host runs the module again from the
 * start and answers each request whose key the client answered. So ask the
 * same questions under the same keys on every run, and send every question
 * you can before waiting for any (wasmcp_request_start, then
 * wasmcp_request_wait). A key chosen by the guest must not be all digits;
 * key NULL takes the SDK's next number (1, 2, …), stable for a guest that
 * asks in a fixed order.
 * ------------------------------------------------------------------- */

/* The JSON-RPC error code of a request the client has not declared the
 * capability for; data is {"requiredCapabilities": {…}}. Answering it with
 * wasmcp_error_answer passes it on to the client, as MCP prescribes. */
#define WASMCP_MISSING_CAPABILITY (-32021)

/* The client's answer to a request. Free it with wasmcp_answer_free. */
typedef struct {
	int ok;             /* 1: result holds the result; 0: an error (code, message, data) */
	wasmcp_json result; /* the result object (a view into line) */
	int code;           /* the error's code (0 when ok) */
	char *message;      /* the error's message, unescaped (NULL when ok) */
	wasmcp_json data;   /* the error's data, or absent */
	char *line;         /* the answer line (owns the views) */
} wasmcp_answer;

/* wasmcp_request_start sends a request (method, params_json a JSON object)
 * under key and returns 0, or -1 when it could not be sent (a bad key,
 * params that are not a JSON object, a write error; a message goes to
 * stderr). The key actually used is written to key_out (at least 24
 * bytes) when key_out is not NULL and key is NULL. */
int wasmcp_request_start(wasmcp_call *call, const char *key, const char *method, const char *params_json,
                         char *key_out);

/* wasmcp_request_wait reads stdin until the answer to the request under
 * key arrives (answers to other requests are kept for their waiters) and
 * fills out. Returns 0 when the client answered with a result, -1
 * otherwise: an error answer (out->code, out->message) or stdin ending
 * first (out->code -32603). */
int wasmcp_request_wait(const char *key, wasmcp_answer *out);

/* wasmcp_answer_free releases what wasmcp_request_wait filled in. */
void wasmcp_answer_free(wasmcp_answer *a);

/* wasmcp_elicit sends elicitation/create with message and requested_schema
 * (a JSON object schema of flat primitive properties) and waits. On 0,
 * out->result is {"action":"accept"|"decline"|"cancel","content":{…}?}. */
int wasmcp_elicit(wasmcp_call *call, const char *key, const char *message, const char *requested_schema,
                  wasmcp_answer *out);

/* wasmcp_sample sends sampling/createMessage with params_json (MCP's
 * CreateMessageRequest params: messages, maxTokens, …) and waits. On 0,
 * out->result is {"role","content","model","stopReason"?}. */
int wasmcp_sample(wasmcp_call *call, const char *key, const char *params_json, wasmcp_answer *out);

/* wasmcp_list_roots sends roots/list and waits. On 0, out->result is
 * {"roots":[{"uri","name"?},…]}. */
int wasmcp_list_roots(wasmcp_call *call, const char *key, wasmcp_answer *out);

/* wasmcp_error_answer answers the call with the client's error a (code,
 * message and data as they came), e.g. for WASMCP_MISSING_CAPABILITY. */
int wasmcp_error_answer(wasmcp_call *call, const wasmcp_answer *a);

/* wasmcp_client_capabilities returns the capabilities object the client
 * declared, from _meta["io.modelcontextprotocol/clientCapabilities"]
 * (MCP 2026-07-28), or an absent view when the request does not carry it
 * (earlier revisions: make the request and handle
 * WASMCP_MISSING_CAPABILITY). */
wasmcp_json wasmcp_client_capabilities(const wasmcp_call *call);

/* wasmcp_state returns the state the call left with wasmcp_set_state in
 * its previous run (_meta["wasmcp/state"]), or an absent view on a first
 * run. */
wasmcp_json wasmcp_state(const wasmcp_call *call);

/* wasmcp_set_state leaves the JSON value json for the call's next run
 * (the wasmcp/state notification; the last one counts). It is signed by
 * the host, not encrypted: no secrets. Returns 0 on success. */
int wasmcp_set_state(wasmcp_call *call, const char *json, size_t n);

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
