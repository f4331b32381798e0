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

int main(void) {
	static const wasmcp_tool tools[] = {
	    {"echo", echo}, {"busy", busy}, {"raw", raw}, {"rpcerror", rpcerror}, {"silent", silent},
	};
	return wasmcp_run(description, tools, sizeof tools / sizeof *tools);
}
