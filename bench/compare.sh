#!/usr/bin/env bash
# compare.sh — wasmcp against mcp-go, side by side, on this machine.
#
# Builds wasmcp, the mcpload load tool and the mcp-go comparison server
# (bench/mcpgo), then serves the same word_count tool three ways, one
# server at a time on a free loopback port:
#   wasmcp+C   wasmcp with examples/c/wordcount/wordcount.wasm (C guest)
#   wasmcp+Go  wasmcp with examples/wasm/wordcount built for wasip1 (Go guest)
#   mcp-go     bench/mcpgo: mcp-go's Streamable HTTP server, native Go handler
# and drives each with mcpload at the same concurrency and duration, in each
# era, and prints one table per era with ratios against mcp-go. The load
# tool and the server share the machine's cores: compare ratios within one
# run, not absolute figures across machines.
#
# Settings (environment): CLIENTS (default 8), DURATION (10s), WARMUP (2s),
# ERAS ("modern legacy"), TEXT (the text to count), WASMCP_FLAGS (more
# flags for wasmcp serve, e.g. --audit-calls=false), KEEP=1 keeps the work
# directory. Usage: bench/compare.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
ERAS=${ERAS:-modern legacy}
TEXT=${TEXT:-"The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.
The five boxing wizards jump quickly; a wizard's job is to vex chumps quickly in fog."}

. "$root/bench/lib.sh"

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
(cd "$root/bench" && go build -o "$work/mcpgo" ./mcpgo)
mkdir -p "$work/tools-c" "$work/tools-go"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools-c/"
(cd "$root/examples/wasm/wordcount" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/tools-go/wordcount.wasm" .)

args=$(json_text "$TEXT")

machine
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, word_count on ${#TEXT} bytes of text"
for era in $ERAS; do
	files=""
	for server in wasmcp+C wasmcp+Go mcp-go; do
		case $server in
		wasmcp+C) start "$server-$era" url=http "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-c" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
		wasmcp+Go) start "$server-$era" url=http "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-go" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
		mcp-go) start "$server-$era" url=http "$work/mcpgo" -addr 127.0.0.1:0 ;;
		esac
		"$work/mcpload" -url "$url" -tool word_count -args "$args" -c "$CLIENTS" -d "$DURATION" -warmup "$WARMUP" \
			-era "$era" -pid "$pid" -label "$server" -json >"$work/$server-$era.json"
		stop
		files="$files${files:+,}$work/$server-$era.json"
	done
	echo
	echo "== $era era =="
	"$work/mcpload" -table "$files"
done
