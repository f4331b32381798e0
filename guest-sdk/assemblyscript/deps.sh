#!/bin/sh
# Installs the package's pinned dependencies (assemblyscript,
# @assemblyscript/wasi-shim) from package-lock.json with npm ci, preferring
# npm's cache, unless node_modules already holds exactly them. Safe to run
# from several builds at once. Exits 3 when node or npm is missing.
set -eu
cd "$(dirname "$0")"
for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$0: $tool not found (apt-get install nodejs npm)" >&2
		exit 3
	fi
done
if command -v flock >/dev/null 2>&1; then
	exec 9>"${TMPDIR:-/tmp}/wasmcp-assemblyscript-sdk.lock"
	flock 9
fi
if ! cmp -s package-lock.json node_modules/.wasmcp-installed-lock 2>/dev/null; then
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
	cp package-lock.json node_modules/.wasmcp-installed-lock
fi
