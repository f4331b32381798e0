/*
 * The wasmcp reference tool set, written with the C guest SDK: echo (with
 * an output schema), sum, progress, ask (elicitation), the resource
 * ref://greeting and the prompt greet. Every SDK implements the same set;
 * tests/reference_test.go drives them all.
 */
#include "wasmcp.h"

#include <stdlib.h>
#include <string.h>

static const char description[] =
    "{\"abiVersion\":1,\"name\":\"reference\",\"version\":\"1.0.0\","
    "\"tools\":["
    "{\"name\":\"echo\",\"description\":\"Echoes the text.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}},"
    "{\"name\":\"sum\",\"description\":\"Adds the numbers.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"numbers\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}},"
    "\"required\":[\"numbers\"]},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},\"required\":[\"sum\"]}},"
    "{\"name\":\"progress\",\"description\":\"Reports progress for each step.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"steps\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20}},"
    "\"required\":[\"steps\"]}},"
    "{\"name\":\"ask\",\"description\":\"Asks the user for their name.\","
    "\"inputSchema\":{\"type\":\"object\"}}],"
    "\"resources\":[{\"uri\":\"ref://greeting\",\"name\":\"greeting\",\"mimeType\":\"text/plain\"}],"
    "\"prompts\":[{\"name\":\"greet\",\"description\":\"Asks the model to greet someone.\","
    "\"arguments\":[{\"name\":\"name\",\"required\":true}]}]}";

static void echo(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json t;
	size_t n;
	char *text = wasmcp_json_get(args, "text", &t) ? wasmcp_json_string(t, &n) : NULL;
	if (text == NULL) {
		wasmcp_tool_error(c, "text must be a string");
		return;
	}
	wasmcp_buf s = {0};
	wasmcp_buf_cstr(&s, "{\"text\":");
	wasmcp_buf_json_string(&s, text, n);
	wasmcp_buf_cstr(&s, "}");
	wasmcp_result_text_structured(c, text, n, s.data, s.len);
	wasmcp_buf_free(&s);
	free(text);
}

static void sum(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json nums, e;
	size_t pos = 0;
	double total = 0, d;
	if (!wasmcp_json_get(args, "numbers", &nums) || wasmcp_json_type_of(nums) != WASMCP_JSON_ARRAY) {
		wasmcp_tool_error(c, "numbers must be an array");
		return;
	}
	while (wasmcp_json_array_next(nums, &pos, &e)) {
		if (!wasmcp_json_number(e, &d)) {
			wasmcp_tool_error(c, "numbers must hold numbers");
			return;
		}
		total += d;
	}
	wasmcp_buf text = {0}, s = {0};
	wasmcp_buf_double(&text, total);
	wasmcp_buf_cstr(&s, "{\"sum\":");
	wasmcp_buf_raw(&s, text.data, text.len);
	wasmcp_buf_cstr(&s, "}");
	wasmcp_result_text_structured(c, text.data, text.len, s.data, s.len);
	wasmcp_buf_free(&text);
	wasmcp_buf_free(&s);
}

static void progress(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json v;
	int64_t steps;
	if (!wasmcp_json_get(args, "steps", &v) || !wasmcp_json_int(v, &steps) || steps < 1 || steps > 20) {
		wasmcp_tool_error(c, "steps must be an integer from 1 to 20");
		return;
	}
	for (int64_t i = 1; i <= steps; i++)
		wasmcp_progress(c, (double)i, (double)steps, NULL);
	wasmcp_buf text = {0};
	wasmcp_buf_cstr(&text, "done ");
	wasmcp_buf_int(&text, steps);
	wasmcp_result_text(c, text.data, text.len);
	wasmcp_buf_free(&text);
}

static void ask(wasmcp_call *c, wasmcp_json args) {
	(void)args;
	wasmcp_answer a;
	wasmcp_json action, content, name;
	if (wasmcp_elicit(c, "user_name", "What is your name?",
	                  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}",
	                  &a) != 0) {
		wasmcp_tool_error(c, a.message);
		wasmcp_answer_free(&a);
		return;
	}
	char *who = NULL;
	if (wasmcp_json_get(a.result, "action", &action) && wasmcp_json_string_equals(action, "accept") &&
	    wasmcp_json_get(a.result, "content", &content) && wasmcp_json_get(content, "name", &name))
		who = wasmcp_json_string(name, NULL);
	if (who != NULL) {
		wasmcp_buf text = {0};
		wasmcp_buf_cstr(&text, "hello ");
		wasmcp_buf_cstr(&text, who);
		wasmcp_result_text(c, text.data, text.len);
		wasmcp_buf_free(&text);
		free(who);
	} else if (wasmcp_json_string_equals(action, "accept")) {
		wasmcp_tool_error(c, "the answer has no name");
	} else {
		wasmcp_result_text(c, "no name given", 13);
	}
	wasmcp_answer_free(&a);
}

static void greeting(wasmcp_call *c, const char *uri, wasmcp_json vars) {
	(void)vars;
	static const char text[] = "hello from the reference tools";
	wasmcp_resource_text(c, uri, "text/plain", text, sizeof text - 1);
}

static void greet(wasmcp_call *c, wasmcp_json args) {
	wasmcp_json v;
	char *name = wasmcp_json_get(args, "name", &v) ? wasmcp_json_string(v, NULL) : NULL;
	wasmcp_buf text = {0};
	wasmcp_buf_cstr(&text, "Say hello to ");
	wasmcp_buf_cstr(&text, name ? name : "");
	wasmcp_buf_cstr(&text, ".");
	wasmcp_prompt_result(c, NULL, "user", text.data, text.len);
	wasmcp_buf_free(&text);
	free(name);
}

int main(void) {
	static const wasmcp_tool tools[] = {{"echo", echo}, {"sum", sum}, {"progress", progress}, {"ask", ask}};
	static const wasmcp_resource resources[] = {{"ref://greeting", greeting}};
	static const wasmcp_prompt prompts[] = {{"greet", greet}};
	wasmcp_server s = {description, tools, 4, resources, 1, prompts, 1, NULL};
	return wasmcp_serve(&s);
}
