#!/bin/sh
# "Builds" the TypeScript reference tool set: a script needs no build, so
# this copies reference.ts into OUTDIR. wasmcp strips its types at load
# and runs it on the JavaScript runner it embeds (guest-sdk/js/quickjs).
# Usage: ./build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
cp "$here/reference.ts" "$1/reference.ts"
