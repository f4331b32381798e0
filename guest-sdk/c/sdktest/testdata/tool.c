/*
 * A native test tool for sdk_test.go: every path of wasmcp_run and the
 * answer helpers, driven by request lines on stdin.
 */
#include "wasmcp.h"

#include <stdlib.h>
#include <string.h>

static const char description[] =
    "{\n  \"abiVersion\": 1,\n  \"name\": \"sdktest\",\n  \"version\": \"0.1.0\",\n"
    "  \"tools\": [{\"name\": \"echo\", \"inputSchema\": {\"type\": \"object\"}}]\n}\n";

/* echo answers the text argument as a text block. */
static void echo(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json text;
	size_t n;
	char *s;
	if (!wasmcp_json_get(args, "text", &text) || (s = wasmcp_json_string(text, &n)) == NULL) {
		wasmcp_tool_error(c, "text must be a string");
		return;
	}
	wasmcp_result_text(c, s, n);
	free(s);
}

/* busy reports progress twice and logs, then answers structured content
 * written across lines. */
static void busy(wasmcp_call *c, wasmcp_json args) {
	(void)args;
	wasmcp_progress(c, 1, 2, "half \"way\"");
	wasmcp_progress(c, 2, -1, NULL);
	wasmcp_log(c, "info", "busy", "line1\nline2");
	wasmcp_log(c, "debug", NULL, "no logger");
	const char *out = "{\n  \"n\": 2,\n  \"s\": \"a b\"\n}";
	wasmcp_result_structured(c, out, strlen(out));
	/* Later answers are refused. */
	if (wasmcp_error(c, -1, "second answer") != -1)
		wasmcp_log(c, "error", NULL, "a second answer was written");
}

/* raw answers a raw result built with a buffer. */
static void raw(wasmcp_call *c, wasmcp_json args) {
	wasmcp_buf b = {0};
	wasmcp_buf_cstr(&b, "{\"content\":[],\"args\":");
	wasmcp_buf_raw(&b, args.ptr, args.len);
	wasmcp_buf_cstr(&b, ",\"pi\":");
	wasmcp_buf_double(&b, 3.14159);
	wasmcp_buf_cstr(&b, "}");
	wasmcp_result(c, b.data, b.len);
	wasmcp_buf_free(&b);
}

static void rpcerror(wasmcp_call *c, wasmcp_json args) {
	(void)args;
	wasmcp_error(c, -32602, "bad \"thing\"");
}

static void silent(wasmcp_call *c, wasmcp_json args) {
	(void)c;
	(void)args;
}

/* fetch POSTs a binary body to the url argument through the host and
 * answers what came back. */
static void fetch(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json u;
	char *url = wasmcp_json_get(args, "url", &u) ? wasmcp_json_string(u, NULL) : NULL;
	wasmcp_http_response r;
	static const char bin[] = {0, (char)0xff, 'b', 'i', 'n'};
	if (wasmcp_http("POST", url, "{\"X-A\": [\"1\"]}", bin, sizeof bin, 1500, &r) != 0) {
		wasmcp_buf m = {0};
		wasmcp_buf_cstr(&m, r.reason);
		wasmcp_buf_cstr(&m, ": ");
		wasmcp_buf_cstr(&m, r.message);
		wasmcp_buf_raw(&m, "", 1);
		wasmcp_tool_error(c, m.data);
		wasmcp_buf_free(&m);
	} else {
		wasmcp_json ct, v;
		size_t pos = 0;
		wasmcp_buf m = {0};
		wasmcp_buf_int(&m, r.status);
		wasmcp_buf_cstr(&m, " ");
		if (wasmcp_json_get(r.headers, "Content-Type", &ct) && wasmcp_json_array_next(ct, &pos, &v)) {
			char *s = wasmcp_json_string(v, NULL);
			wasmcp_buf_cstr(&m, s);
			free(s);
		}
		wasmcp_buf_cstr(&m, " ");
		wasmcp_buf_int(&m, (int64_t)r.body_len);
		wasmcp_buf_cstr(&m, " ");
		wasmcp_buf_int(&m, (unsigned char)r.body[1]);
		wasmcp_result_text(c, m.data, m.len);
		wasmcp_buf_free(&m);
	}
	wasmcp_http_response_free(&r);
	free(url);
}

int main(void) {
	static const wasmcp_tool tools[] = {
	    {"echo", echo}, {"busy", busy}, {"raw", raw}, {"rpcerror", rpcerror}, {"silent", silent}, {"fetch", fetch},
	};
	return wasmcp_run(description, tools, sizeof tools / sizeof *tools);
}
