#!/bin/sh
# Builds runner.wasm, the JavaScript runner every script shares: QuickJS
# 2021-03-27 (Fabrice Bellard and Charlie Gordon, MIT licence), whose C
# sources reach the build inside the npm package qjsc 0.3.0 (checked
# against the SHA-256 below; nothing of QuickJS is kept in this
# repository), c/ from here (the glue, the JavaScript half of the API,
# directed rounding for number formatting, bulk memory copies) and the C
# guest SDK.
# Toolchain: Debian's clang-14 and wasi-libc (apt-get install clang-14
# lld-14 wasi-libc libclang-rt-14-dev-wasm32) and npm to fetch the
# package. The output is byte-reproducible: no debug information (so no
# paths), no timestamps.
#
# Usage: ./build.sh [OUT.wasm]     (default: runner.wasm beside this file)
# QJSC_TGZ=path/to/qjsc-0.3.0.tgz uses a tarball already fetched.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk=$here/../../c
out=${1:-$here/runner.wasm}
CC=${CC:-clang-14}
SYSROOT=${WASI_SYSROOT:-/usr}
pkg=qjsc@0.3.0
sum=4a9ed1852b334d842d5dac42d1782817ae26310b448de39532451fd45c9ba0ee

cache=${XDG_CACHE_HOME:-$HOME/.cache}/wasmcp/npm
tgz=${QJSC_TGZ:-$cache/qjsc-0.3.0.tgz}
if [ ! -f "$tgz" ] || [ "$(sha256sum "$tgz" | cut -d' ' -f1)" != "$sum" ]; then
	mkdir -p "$cache"
	(cd "$cache" && npm pack --silent "$pkg" >/dev/null)
	tgz=$cache/qjsc-0.3.0.tgz
fi
if [ "$(sha256sum "$tgz" | cut -d' ' -f1)" != "$sum" ]; then
	echo "build.sh: $tgz is not $pkg as pinned (SHA-256 $sum)" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tgz" -C "$work" package/deps/quickjs_2021_03_27
q=$work/q
mv "$work/package/deps/quickjs_2021_03_27" "$q"

# Two settings of QuickJS for WASI, made on the extracted copy:
# - BigInt (CONFIG_BIGNUM, with libbf), as in every engine today;
# - no Atomics (they need threads, which wasm32-wasi has not);
# - a stack overflow is a RangeError, as in every other engine (QuickJS
#   2021 throws an InternalError), so scripts can catch it by kind.
perl -0pi -e 's/#if !defined\(EMSCRIPTEN\)\n#define CONFIG_ATOMICS/#if !defined(EMSCRIPTEN) && !defined(__wasi__)\n#define CONFIG_ATOMICS/' "$q/quickjs.c"
sed -i 's/JS_ThrowInternalError(ctx, "stack overflow")/JS_ThrowRangeError(ctx, "Maximum call stack size exceeded")/' "$q/quickjs.c"
grep -q 'defined(__wasi__)' "$q/quickjs.c" && grep -q 'Maximum call stack size exceeded' "$q/quickjs.c" || {
	echo "build.sh: the QuickJS sources are not the ones this script patches" >&2
	exit 1
}
# prelude.js as a C array.
{
	echo "static const char prelude_js[] = {"
	od -An -v -tu1 "$here/c/prelude.js" | sed 's/[0-9][0-9]*/&,/g'
	echo "0};"
	echo "static const size_t prelude_js_len = sizeof prelude_js - 1;"
} >"$work/prelude.h"

# memcpy, memmove and memset as bulk memory instructions (c/bulk.c), the
# one object built with -mbulk-memory.
"$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -O2 -mbulk-memory -ffile-prefix-map="$here"=. \
	-c -o "$work/bulk.o" "$here/c/bulk.c"

"$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -O2 -mexec-model=reactor \
	-D_GNU_SOURCE -DCONFIG_VERSION='"2021-03-27"' -DCONFIG_BIGNUM -include "$here/c/wasi-compat.h" \
	-ffile-prefix-map="$work"=. -ffile-prefix-map="$here"=. -ffile-prefix-map="$sdk"=sdk \
	-I "$q" -I "$sdk" -I "$work" -w \
	-Wl,--strip-debug -Wl,-z,stack-size=1048576 -Wl,--stack-first \
	-o "$out" "$work/bulk.o" "$here/c/runner.c" "$here/c/wasi-compat.c" "$sdk/wasmcp.c" \
	"$q/quickjs.c" "$q/libregexp.c" "$q/libunicode.c" "$q/cutils.c" "$q/libbf.c"
