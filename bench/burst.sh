#!/usr/bin/env bash
# burst.sh — does the server's memory return after a burst of calls?
#
# Serves tests/hostile/guests/hostile.wasm over HTTP with a 64 MiB memory
# cap, drives its `grow` tool (each call grows its linear memory a page at
# a time to the cap, then traps) with mcpload at CLIENTS concurrent clients
# for CALLS calls, then leaves the server idle and prints its resident
# memory (VmRSS, /proc) before, at the burst's end and at each of SAMPLES
# seconds after it, with the peak (VmHWM).
#
# Settings (environment): CLIENTS (default 16), CALLS (400), SAMPLES
# ("0 1 2 5 10 30 60 180"), WASMCP_FLAGS (more flags for wasmcp serve),
# KEEP=1 keeps the work directory. Usage: bench/burst.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-16}
CALLS=${CALLS:-400}
SAMPLES=${SAMPLES:-0 1 2 5 10 30 60 180}

. "$root/bench/lib.sh"

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
mkdir -p "$work/tools"
cp "$root/tests/hostile/guests/hostile.wasm" "$work/tools/"
printf 'memory = "64MiB"\ntimeout = "30s"\n' >"$work/tools/hostile.policy.toml"

rss() { awk -v k="$1:" '$1 == k { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }

machine
# shellcheck disable=SC2086
start wasmcp "serving MCP over HTTP" "$work/wasmcp" serve --tools "$work/tools" --http 127.0.0.1:0 \
	--cache-dir "$work/cache" --data-dir - --watch=false ${WASMCP_FLAGS:-}
for _ in $(seq 1 600); do grep -q "modules loaded" "$work/wasmcp.log" && break; sleep 0.1; done
echo "idle before the burst: RSS $(rss VmRSS) MiB"
"$work/mcpload" -url "$url" -tool grow -c "$CLIENTS" -n "$CALLS" -warmup 0 -d 5m -pid "$pid" 2>&1 | grep -v "first error" || true
t0=$(date +%s.%N)
echo "burst of $CALLS calls at $CLIENTS clients done: peak RSS $(rss VmHWM) MiB"
for s in $SAMPLES; do
	now=$(date +%s.%N)
	wait=$(awk -v a="$t0" -v b="$now" -v s="$s" 'BEGIN { w = a + s - b; print (w > 0 ? w : 0) }')
	sleep "$wait"
	printf '%4ss after: RSS %s MiB\n' "$s" "$(rss VmRSS)"
done
stop
