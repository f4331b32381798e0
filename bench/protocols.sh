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

. "$root/bench/lib.sh"

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
mkdir -p "$work/tools"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools/"
"$work/wasmcp" cert --out "$work/tls" --hosts 127.0.0.1 --days 1 >/dev/null

args=$(json_text "$TEXT")

machine
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
		start "$proto-$era" 'msg="serving HTTP/3"' "$work/wasmcp" serve --http 127.0.0.1:0 --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem" --http3 \
			--tools "$work/tools" --cache-dir "$work/cache" --watch=false --data-dir -
		"$work/mcpload" -url "$url" $flag -cacert "$work/tls/cert.pem" -tool word_count -args "$args" -c "$CLIENTS" \
			-d "$DURATION" -warmup "$WARMUP" -era "$era" -pid "$pid" -label "$label" -json >"$work/$proto-$era.json"
		stop
		files="$files${files:+,}$work/$proto-$era.json"
	done
	echo
	echo "== $era era =="
	"$work/mcpload" -table "$files"
done
