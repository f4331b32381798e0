#!/bin/sh
# "Builds" the JavaScript reference tool set: a script needs no build, so
# this copies reference.js into OUTDIR and builds the JavaScript runner
# (guest-sdk/js/runner) into OUTDIR/runner/runner.wasm (a subdirectory, which the tools directory scan does not enter), which the suite
# hands to wasmcp through WASMCP_JS_RUNNER until wasmcp embeds its own.
# Needs Go. Usage: ./build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
cp "$here/reference.js" "$out/reference.js"
mkdir -p "$out/runner"
cd "$here/../../../guest-sdk/js/runner"
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o "$out/runner/runner.wasm" .
