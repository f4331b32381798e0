#!/bin/sh
# Builds wordcount.wasm from wordcount.c and the C guest SDK with Debian's
# clang-14 and wasi-libc (apt-get install clang-14 lld-14 wasi-libc
# libclang-rt-14-dev-wasm32). The output is byte-reproducible: no debug
# information (so no paths), no timestamps. Usage: ./build.sh [OUT.wasm]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk=$here/../../../guest-sdk/c
out=${1:-$here/wordcount.wasm}
CC=${CC:-clang-14}
SYSROOT=${WASI_SYSROOT:-/usr}
"$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -O2 -std=c99 -Wall -Wextra -Werror \
	-ffile-prefix-map="$here"=. -ffile-prefix-map="$sdk"=sdk \
	-I "$sdk" -Wl,--strip-debug \
	-o "$out" "$here/wordcount.c" "$sdk/wasmcp.c"
