/* Included before every source of the runner (build.sh: -include).
 *
 * WebAssembly has round-to-nearest only, so wasi-libc's fesetround cannot
 * set the directed modes QuickJS uses to round toFixed, toPrecision and
 * toExponential's exact decimal ties away from zero, as JavaScript
 * requires: around one snprintf of a double it sets FE_DOWNWARD or
 * FE_UPWARD. Here fesetround records the mode and snprintf, for those two
 * formats under a directed mode, rounds in that direction itself from the
 * exact decimal expansion of the double (which wasi-libc's printf writes
 * out in full). */
#ifndef WASMCP_WASI_COMPAT_H
#define WASMCP_WASI_COMPAT_H
#include <fenv.h>
#include <malloc.h>
#include <stdio.h>
#ifndef FE_DOWNWARD
#define FE_DOWNWARD 0x400
#endif
#ifndef FE_UPWARD
#define FE_UPWARD 0x800
#endif
int wasmcp_fesetround(int mode);
int wasmcp_snprintf(char *buf, size_t size, const char *fmt, ...);
#define fesetround wasmcp_fesetround
#define snprintf wasmcp_snprintf
#endif
