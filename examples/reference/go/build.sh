#!/bin/sh
# Builds the Go reference tool set: ./build.sh OUTDIR writes
# OUTDIR/reference.wasm with the repository's Go (GOOS=wasip1 GOARCH=wasm),
# as a tool author builds a Go guest. Exits 3 when no go command is found.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
if ! command -v go >/dev/null 2>&1; then
	echo "build.sh: the go command is needed to build the Go reference tool set" >&2
	exit 3
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)/reference.wasm
cd "$here"
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out" .
