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
for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "build.sh: $tool not found (apt-get install nodejs npm)" >&2
		exit 3
	fi
done
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$pkg"
# Several builds may run at once (the test suites build every reference
# set in parallel): one npm ci at a time, and none when the installed
# packages already match the lock file.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${TMPDIR:-/tmp}/wasmcp-assemblyscript-sdk.lock"
	flock 9
fi
if ! cmp -s package-lock.json node_modules/.wasmcp-installed-lock 2>/dev/null; then
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
	cp package-lock.json node_modules/.wasmcp-installed-lock
fi
node_modules/.bin/asc "$here/reference.ts" --config asconfig.json --target release -o "$out/reference.wasm"
