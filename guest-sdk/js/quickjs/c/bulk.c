/* memcpy, memmove and memset as WebAssembly's bulk memory instructions
 * (memory.copy, memory.fill), compiled alone with -mbulk-memory (build.sh):
 * Debian's wasi-libc copies a word at a time in a loop, which the engine
 * runs as a loop with the host's deadline check in every iteration, while
 * memory.copy is one host memmove. QuickJS copies strings and arrays with
 * them (a 1 MiB string concatenated: 25 ms with the loop on a busy machine). */
#include <string.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
	return __builtin_memcpy(dst, src, n);
}

void *memmove(void *dst, const void *src, size_t n) {
	return __builtin_memmove(dst, src, n);
}

void *memset(void *dst, int c, size_t n) {
	return __builtin_memset(dst, c, n);
}
