#!/bin/sh
# Builds the reference tool set with the C guest SDK: OUTDIR/reference.wasm.
# Needs Debian's clang-14 and wasi-libc (apt-get install clang-14 lld-14
# wasi-libc libclang-rt-14-dev-wasm32), or CC and WASI_SYSROOT pointing at
# a wasi-sdk. Exits 3 when the toolchain is missing. Usage: ./build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
sdk=$(cd "$here/../../../guest-sdk/c" && pwd)
CC=${CC:-clang-14}
SYSROOT=${WASI_SYSROOT:-/usr}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "build.sh: $CC not found (apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)" >&2
	exit 3
fi
if [ ! -f "$SYSROOT/include/wasm32-wasi/stdio.h" ] && { [ "$SYSROOT" = /usr ] || [ ! -f "$SYSROOT/include/stdio.h" ]; }; then
	echo "build.sh: no wasi-libc under $SYSROOT (apt-get install wasi-libc, or set WASI_SYSROOT)" >&2
	exit 3
fi
mkdir -p "$1"
"$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -O2 -std=c99 -Wall -Wextra -Werror \
	-ffile-prefix-map="$here"=. -ffile-prefix-map="$sdk"=sdk \
	-I "$sdk" -Wl,--strip-debug \
	-o "$1/reference.wasm" "$here/reference.c" "$sdk/wasmcp.c"
