#!/bin/sh
# Runs the SDK's unit tests (tests/json.test.ts: the JSON reader and
# writer, URI templates) after installing the pinned dependencies. Exits 3
# when node or npm is missing, 1 when a test fails. The test module goes to
# OUTDIR (default: build). Usage: ./test.sh [OUTDIR]
set -eu
cd "$(dirname "$0")"
./deps.sh
out=${1:-build}
mkdir -p "$out"
node_modules/.bin/asc tests/json.test.ts --config asconfig.json --target test -o "$out/json.test.wasm"
node --no-warnings tests/run.mjs "$out/json.test.wasm"
