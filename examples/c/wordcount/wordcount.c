/*
 * wordcount — a wasmcp tool module in C: counts the words, lines and bytes
 * of a text the way wc(1) does in the C locale. It is the C twin of the Go
 * example examples/wasm/wordcount: the same description, the same work,
 * the same answer. Build it with ./build.sh (clang-14 and wasi-libc).
 */
#include "wasmcp.h"

#include <stdlib.h>

/* The description the host asks for at load time (abi/README.md section 5). */
static const char description[] =
    "{\"abiVersion\":1,\"name\":\"wordcount\",\"version\":\"1.0.0\",\"tools\":[{"
    "\"name\":\"word_count\",\"title\":\"Word count\","
    "\"description\":\"Counts the words, lines and bytes of a text, as wc does.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"text\":{\"type\":\"string\",\"description\":\"The text to count\"}},\"required\":[\"text\"]},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"words\":{\"type\":\"integer\",\"description\":\"Runs of bytes that are not ASCII whitespace\"},"
    "\"lines\":{\"type\":\"integer\",\"description\":\"Newline characters, as wc -l counts\"},"
    "\"bytes\":{\"type\":\"integer\",\"description\":\"Length of the text in UTF-8 bytes\"}},"
    "\"required\":[\"words\",\"lines\",\"bytes\"]},"
    "\"annotations\":{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}}]}";

static void word_count(wasmcp_call *call, wasmcp_json args) {
	wasmcp_json text;
	size_t n;
	char *s;
	if (!wasmcp_json_get(args, "text", &text) || (s = wasmcp_json_string(text, &n)) == NULL) {
		wasmcp_tool_error(call, "text must be a string");
		return;
	}
	int64_t words = 0, lines = 0;
	int in_word = 0;
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\n':
			lines++;
			in_word = 0;
			break;
		case ' ': case '\t': case '\v': case '\f': case '\r':
			in_word = 0;
			break;
		default:
			if (!in_word) {
				words++;
				in_word = 1;
			}
		}
	}
	free(s);
	wasmcp_buf out = {0};
	wasmcp_buf_cstr(&out, "{\"words\":");
	wasmcp_buf_int(&out, words);
	wasmcp_buf_cstr(&out, ",\"lines\":");
	wasmcp_buf_int(&out, lines);
	wasmcp_buf_cstr(&out, ",\"bytes\":");
	wasmcp_buf_int(&out, (int64_t)n);
	wasmcp_buf_cstr(&out, "}");
	if (out.oom)
		wasmcp_tool_error(call, "out of memory");
	else
		wasmcp_result_structured(call, out.data, out.len);
	wasmcp_buf_free(&out);
}

int main(void) {
	static const wasmcp_tool tools[] = {{"word_count", word_count}};
	return wasmcp_run(description, tools, sizeof tools / sizeof *tools);
}
