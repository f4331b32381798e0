#!/bin/sh
# Runs the SDK's unit tests (tests/json.test.ts: the JSON reader and
# writer, URI templates) after installing the pinned dependencies, and
# builds tests/server.test.ts into OUTDIR for the Go test that drives it. Exits 3
# when node or npm is missing, 1 when a test fails. The test module goes to
# OUTDIR (default: build). Usage: ./test.sh [OUTDIR]
set -eu
cd "$(dirname "$0")"
./deps.sh
out=${1:-build}
mkdir -p "$out"
node_modules/.bin/asc tests/json.test.ts --config asconfig.json --target test -o "$out/json.test.wasm"
# The Go test drives this one with request lines (tests/sdkreference_test.go).
node_modules/.bin/asc tests/server.test.ts --config asconfig.json --target test -o "$out/server.test.wasm"
node --no-warnings tests/run.mjs "$out/json.test.wasm"
