#!/bin/sh
# Builds the reference tool set with the AssemblyScript guest SDK:
# OUTDIR/reference.wasm. Installs the SDK package's pinned dependencies
# (assemblyscript, @assemblyscript/wasi-shim) with npm ci from its
# package-lock.json, preferring npm's cache, then compiles with asc.
# Needs node and npm (apt-get install nodejs npm); exits 3 without them.
# Usage: ./build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(cd "$here/../../../guest-sdk/assemblyscript" && pwd)
"$pkg/deps.sh" # exits 3 when node or npm is missing
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$pkg"
node_modules/.bin/asc "$here/reference.ts" --config asconfig.json --target release -o "$out/reference.wasm"
