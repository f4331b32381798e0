#!/usr/bin/env bash
# protocols.sh — the same MCP load over HTTP/1.1, HTTP/2 and HTTP/3.
#
# Builds wasmcp and the mcpload load tool, makes a development certificate
# with 'wasmcp cert', then for each HTTP version starts
#   wasmcp serve --http 127.0.0.1:0 --tls-cert … --tls-key … --http3
# with the C word_count example (examples/c/wordcount) on a free loopback
# port, drives it with mcpload (-h2 / -http3 / neither) at the same
# concurrency and duration, and prints one table per era: throughput,
# latency percentiles and the server's CPU time per call, with ratios
# against HTTP/1.1. Every version runs over TLS, on its own server process,
# each mcpload client on its own connection. The load tool and the server
# share the machine's cores: compare ratios within one run.
#
# Settings (environment): CLIENTS (default 8), DURATION (10s), WARMUP (2s),
# ERAS ("modern legacy"), PROTOS ("h3 h2 h1"), TEXT (the text to count),
# KEEP=1 keeps the work directory. Usage: bench/protocols.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
ERAS=${ERAS:-modern legacy}
PROTOS=${PROTOS:-h3 h2 h1}
TEXT=${TEXT:-"The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.
The five boxing wizards jump quickly; a wizard's job is to vex chumps quickly in fog."}

work=$(mktemp -d /tmp/wasmcp-protocols.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [ "${KEEP:-}" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
mkdir -p "$work/tools"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools/"
"$work/wasmcp" cert --out "$work/tls" --hosts 127.0.0.1 --days 1 >/dev/null

args=$(printf '%s' "$TEXT" | python3 -c 'import json,sys; print(json.dumps({"text": sys.stdin.read()}))' 2>/dev/null ||
	printf '{"text":"%s"}' "$(printf '%s' "$TEXT" | tr '\n' ' ' | sed 's/["\\]//g')")

# start NAME starts a server logging to $work/NAME.log and sets pid and url
# once it serves HTTP/3.
start() {
	local name=$1
	"$work/wasmcp" serve --http 127.0.0.1:0 --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem" --http3 \
		--tools "$work/tools" --cache-dir "$work/cache" --watch=false --data-dir - >"$work/$name.log" 2>&1 &
	pid=$!
	url=""
	for _ in $(seq 1 600); do
		if grep -q 'msg="serving HTTP/3"' "$work/$name.log"; then
			url=$(grep -o 'url=https://[^ ]*' "$work/$name.log" | head -1 | cut -d= -f2)
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log"; echo "$name did not start" >&2; exit 1; }
		sleep 0.1
	done
	echo "$name did not start serving within 60s" >&2
	exit 1
}

stop() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=""
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, word_count (C guest) on ${#TEXT} bytes of text, TLS 1.3 on loopback"
for era in $ERAS; do
	files=""
	for proto in $PROTOS; do
		case $proto in
		h1) flag="" label="HTTP/1.1" ;;
		h2) flag="-h2" label="HTTP/2" ;;
		h3) flag="-http3" label="HTTP/3" ;;
		*) echo "unknown protocol $proto (want h1, h2 or h3)" >&2; exit 2 ;;
		esac
		start "$proto-$era"
		"$work/mcpload" -url "$url" $flag -cacert "$work/tls/cert.pem" -tool word_count -args "$args" -c "$CLIENTS" \
			-d "$DURATION" -warmup "$WARMUP" -era "$era" -pid "$pid" -label "$label" -json >"$work/$proto-$era.json"
		stop
		files="$files${files:+,}$work/$proto-$era.json"
	done
	echo
	echo "== $era era =="
	"$work/mcpload" -table "$files"
done
