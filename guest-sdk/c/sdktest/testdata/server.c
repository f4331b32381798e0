/*
 * A native test module for sdk_test.go: wasmcp_serve with resources,
 * templates, prompts, completions, requests to the client, state and
 * notifications, driven by request lines (and answers) on stdin.
 */
#include "wasmcp.h"

#include <stdlib.h>
#include <string.h>

static const char description[] =
    "{\"abiVersion\":1,\"name\":\"servertest\",\"version\":\"0.1.0\",\"completions\":true,"
    "\"tools\":[{\"name\":\"two\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"resources\":[{\"uri\":\"t://fixed\",\"name\":\"fixed\"}],"
    "\"resourceTemplates\":[{\"uriTemplate\":\"t://{a}.{b}\",\"name\":\"dotted\"}],"
    "\"prompts\":[{\"name\":\"p\",\"arguments\":[{\"name\":\"x\",\"required\":true},{\"name\":\"y\"}]}]}";

/* two asks two questions before waiting for either, reads the answers in
 * the other order, then lists roots under the SDK's numbering and samples. */
static void two(wasmcp_call *c, wasmcp_json args) {
	(void)args;
	wasmcp_answer a, b, r;
	wasmcp_json st = wasmcp_state(c);
	wasmcp_set_state(c, "{\"round\": 1}", 12);
	wasmcp_notify(c, "notifications/tools/list_changed", NULL);
	wasmcp_resource_updated(c, "t://fixed");
	if (wasmcp_request_start(c, "first", "elicitation/create", "{\"message\":\"1\",\"requestedSchema\":{\"type\":\"object\"}}", NULL) != 0 ||
	    wasmcp_request_start(c, "second", "elicitation/create", "{\"message\":\"2\",\"requestedSchema\":{\"type\":\"object\"}}", NULL) != 0 ||
	    wasmcp_request_start(c, "123", "roots/list", "{}", NULL) != -1 || /* an all-digit key is refused */
	    wasmcp_request_start(c, "bad", "roots/list", "[1]", NULL) != -1) {  /* params must be an object */
		wasmcp_tool_error(c, "start");
		return;
	}
	int rb = wasmcp_request_wait("second", &b);
	int ra = wasmcp_request_wait("first", &a);
	if (wasmcp_list_roots(c, NULL, &r) != 0) {
		wasmcp_error_answer(c, &r);
		wasmcp_answer_free(&a);
		wasmcp_answer_free(&b);
		wasmcp_answer_free(&r);
		return;
	}
	wasmcp_answer s;
	int rs = wasmcp_sample(c, "s", "{\"messages\":[],\"maxTokens\":5}", &s);
	wasmcp_buf out = {0};
	wasmcp_buf_cstr(&out, "{\"a\":");
	wasmcp_buf_raw(&out, ra == 0 ? a.result.ptr : "null", ra == 0 ? a.result.len : 4);
	wasmcp_buf_cstr(&out, ",\"b\":");
	wasmcp_buf_int(&out, rb == 0 ? 0 : b.code);
	wasmcp_buf_cstr(&out, ",\"bmsg\":");
	wasmcp_buf_json_string(&out, b.message ? b.message : "", b.message ? strlen(b.message) : 0);
	wasmcp_buf_cstr(&out, ",\"roots\":");
	wasmcp_buf_raw(&out, r.result.ptr, r.result.len);
	wasmcp_buf_cstr(&out, ",\"sample\":");
	wasmcp_buf_int(&out, rs == 0 ? 0 : s.code);
	wasmcp_buf_cstr(&out, ",\"state\":");
	wasmcp_buf_raw(&out, st.ptr ? st.ptr : "null", st.ptr ? st.len : 4);
	wasmcp_buf_cstr(&out, "}");
	wasmcp_result_structured(c, out.data, out.len);
	wasmcp_buf_free(&out);
	wasmcp_answer_free(&a);
	wasmcp_answer_free(&b);
	wasmcp_answer_free(&r);
	wasmcp_answer_free(&s);
}

static void fixed(wasmcp_call *c, const char *uri, wasmcp_json vars) {
	(void)uri;
	(void)vars;
	wasmcp_resource_text(c, NULL, "text/plain", "fixed \"text\"", 12);
}

static void dotted(wasmcp_call *c, const char *uri, wasmcp_json vars) {
	if (strcmp(uri, "t://none.x") == 0) {
		wasmcp_error_data(c, -32602, "resource not found", "{\"uri\":\"t://none.x\"}", 20);
		return;
	}
	wasmcp_resource_blob(c, uri, "application/json", vars.ptr, vars.len);
}

static void prompt(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json x;
	char *s = wasmcp_json_get(args, "x", &x) ? wasmcp_json_string(x, NULL) : NULL;
	wasmcp_prompt_result(c, "a \"prompt\"", "assistant", s ? s : "", s ? strlen(s) : 0);
	free(s);
}

static void complete(wasmcp_call *c, wasmcp_json ref, const char *arg, const char *value) {
	(void)ref;
	if (strcmp(arg, "many") == 0) {
		static const char *many[150];
		for (int i = 0; i < 150; i++)
			many[i] = "v";
		wasmcp_completion(c, many, 150);
		return;
	}
	if (strcmp(arg, "none") == 0)
		return; /* no answer: no values */
	const char *vals[] = {arg, value};
	wasmcp_completion(c, vals, 2);
}

int main(void) {
	static const wasmcp_tool tools[] = {{"two", two}};
	static const wasmcp_resource resources[] = {{"t://{a}.{b}", dotted}, {"t://fixed", fixed}};
	static const wasmcp_prompt prompts[] = {{"p", prompt}};
	wasmcp_server s = {description, tools, 1, resources, 2, prompts, 1, complete};
	return wasmcp_serve(&s);
}
