#!/usr/bin/env bash
# scaleout.sh — throughput of 1, 2 and 3 wasmcp replicas behind HAProxy.
#
# Starts a redis-server (the replicas' --store) and, for each replica count,
# that many `wasmcp serve --http` processes on free loopback ports behind
# HAProxy (round-robin, sticky on Mcp-Session-Id: the configuration of
# docs/scale-out.md), then drives the proxy with cmd/mcpload: word_count
# (examples/c/wordcount, a C guest) in the modern era, then a baseline of
# one replica without the proxy. Needs redis-server and haproxy (Debian:
# apt-get install redis-server haproxy).
#
# Every process shares the machine's cores — the load tool, HAProxy, Redis
# and the replicas: on a machine with fewer cores than replicas, more
# replicas cannot add throughput; the figures show what the proxy and the
# extra processes cost there. Compare within one run.
#
# Settings (environment): CLIENTS (default 16), DURATION (10s), WARMUP (2s),
# REPLICAS ("1 2 3"), KEEP=1 keeps the work directory.
# Usage: bench/scaleout.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-16}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
REPLICAS=${REPLICAS:-1 2 3}
for bin in redis-server haproxy; do
	command -v $bin >/dev/null || { echo "$bin is needed (apt-get install -y redis-server haproxy)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/wasmcp-scaleout.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	if [ "${KEEP:-}" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# freeport prints a loopback TCP port nobody listens on.
freeport() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
	done
}

# waitport PORT waits until something listens there.
waitport() {
	for _ in $(seq 1 600); do
		(exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nothing listens on $1" >&2
	exit 1
}

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
mkdir -p "$work/tools"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools/"
args='{"text":"The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs."}'

rport=$(freeport)
redis-server --port "$rport" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no --daemonize no >"$work/redis.log" 2>&1 &
pids+=($!)
waitport "$rport"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, word_count (C guest), modern era"
files=""
for n in $REPLICAS; do
	ports=()
	rpids=()
	for i in $(seq 1 "$n"); do
		p=$(freeport)
		"$work/wasmcp" serve --tools "$work/tools" --http "127.0.0.1:$p" --watch=false --cache-dir "$work/cache" \
			--store "redis://127.0.0.1:$rport" --allowed-hosts 127.0.0.1 >"$work/replica$n-$i.log" 2>&1 &
		rpids+=($!)
		pids+=($!)
		waitport "$p"
		ports+=("$p")
	done
	pport=$(freeport)
	{
		printf 'global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 120s\n    timeout server 120s\n'
		printf 'frontend mcp\n    bind 127.0.0.1:%s\n    default_backend wasmcp\n' "$pport"
		printf 'backend wasmcp\n    balance roundrobin\n    stick-table type string len 64 size 1m expire 1h\n'
		printf '    stick on req.hdr(Mcp-Session-Id)\n    stick store-response res.hdr(Mcp-Session-Id)\n'
		for i in "${!ports[@]}"; do printf '    server r%d 127.0.0.1:%s check\n' "$i" "${ports[$i]}"; done
	} >"$work/haproxy-$n.cfg"
	haproxy -db -f "$work/haproxy-$n.cfg" >"$work/haproxy-$n.log" 2>&1 &
	hp=$!
	pids+=($hp)
	waitport "$pport"
	"$work/mcpload" -url "http://127.0.0.1:$pport/mcp" -tool word_count -args "$args" -c "$CLIENTS" -d "$DURATION" \
		-warmup "$WARMUP" -label "$n replica(s) behind haproxy" -json >"$work/proxy-$n.json"
	files="$files${files:+,}$work/proxy-$n.json"
	if [ "$n" = 1 ]; then
		"$work/mcpload" -url "http://127.0.0.1:${ports[0]}/mcp" -tool word_count -args "$args" -c "$CLIENTS" -d "$DURATION" \
			-warmup "$WARMUP" -label "1 replica, no proxy" -json >"$work/direct.json"
		files="$files,$work/direct.json"
	fi
	kill "$hp" "${rpids[@]}" 2>/dev/null || true
	wait "$hp" "${rpids[@]}" 2>/dev/null || true
done
"$work/mcpload" -table "$files"
