#!/bin/sh
# "Builds" the JavaScript reference tool set: a script needs no build, so
# this copies reference.js into OUTDIR; wasmcp runs it on the JavaScript
# runner it embeds (guest-sdk/js/quickjs). Usage: ./build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
cp "$here/reference.js" "$1/reference.js"
