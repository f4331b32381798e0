#!/usr/bin/env bash
# compare.sh — wasmcp against mcp-go and the official go-sdk, side by side,
# on this machine.
#
# Builds wasmcp, the mcpload load tool and the comparison servers
# (bench/mcpgo, bench/gosdk), then serves the same word_count tool five
# ways, one server at a time on a free loopback port:
#   wasmcp+C    wasmcp with examples/c/wordcount/wordcount.wasm (C guest)
#   wasmcp+Go   wasmcp with examples/wasm/wordcount built for wasip1 as a
#               command (-tags command: the Go runtime starts in every instance)
#   wasmcp+GoR  the same Go code built as a reactor (-buildmode=c-shared,
#               its default shape): every instance starts from a snapshot
#   go-sdk      bench/gosdk: the official Go SDK's server, native handler
#   mcp-go      bench/mcpgo: mcp-go's Streamable HTTP server, native handler
# and drives each with mcpload at the same concurrency and duration, in each
# era, and prints one table per era with ratios against mcp-go, then the
# reactor against go-sdk. With HIGH (default 64) it then runs the servers
# of HIGH_SERVERS (default "wasmcp+GoR") at HIGH clients, for their CPU per
# call and resident memory under that many calls at once. The load tool and
# the server share the machine's cores: compare ratios within one run, not
# absolute figures across machines.
#
# Settings (environment): CLIENTS (default 16), DURATION (10s), WARMUP (2s),
# ERAS ("modern legacy"), SERVERS (the five above, in that order; the last
# is the ratios' base), HIGH and HIGH_SERVERS (HIGH=0 skips that run),
# TEXT (the text to count), TIER_WAIT (seconds a wasmcp server may take,
# after it starts, until its compiled code serves: 300), WASMCP_FLAGS (more flags for wasmcp serve, e.g.
# --audit-calls=false), KEEP=1 keeps the work directory. BEFORE=REV (a
# commit, tag or branch of this repository) builds wasmcp and the C guest
# as they were at REV too and adds their rows (wasmcp+C@before,
# wasmcp+GoR@before, wasmcp+Go@before; name them in SERVERS), so a change
# is measured against its base in the same run.
# Usage: bench/compare.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-16}
SERVERS=${SERVERS:-wasmcp+C wasmcp+Go wasmcp+GoR go-sdk mcp-go}
HIGH=${HIGH:-64}
HIGH_SERVERS=${HIGH_SERVERS:-wasmcp+GoR}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
ERAS=${ERAS:-modern legacy}
TEXT=${TEXT:-"The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.
The five boxing wizards jump quickly; a wizard's job is to vex chumps quickly in fog."}

. "$root/bench/lib.sh"

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
(cd "$root/bench" && go build -o "$work/mcpgo" ./mcpgo && go build -o "$work/gosdk" ./gosdk)
mkdir -p "$work/tools-c" "$work/tools-go" "$work/tools-gor"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools-c/"
(cd "$root/examples/wasm/wordcount" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -tags command -trimpath -ldflags="-s -w" -o "$work/tools-go/wordcount.wasm" .)
(cd "$root/examples/wasm/wordcount" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o "$work/tools-gor/wordcount.wasm" .)

if [ -n "${BEFORE:-}" ]; then
	echo "building wasmcp and the C guest as of $BEFORE ..."
	git -C "$root" worktree add --detach "$work/before-src" "$BEFORE" >/dev/null
	(cd "$work/before-src" && go build -o "$work/wasmcp-before" ./cmd/wasmcp)
	mkdir -p "$work/tools-c-before"
	cp "$work/before-src/examples/c/wordcount/wordcount.wasm" "$work/tools-c-before/"
	git -C "$root" worktree remove --force "$work/before-src"
fi

args=$(json_text "$TEXT")

machine
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, word_count on ${#TEXT} bytes of text"
# compiled_tier NAME waits until the wasmcp server logging to $work/NAME.log
# runs word_count on the compiled tier, so the figures are the compiler's,
# not the interpreter's (docs/design/interpreter-tier.md): one call makes a
# module listed from its cached description build its code, then the log
# must say the code is compiled — "module loaded ... tier=compiled", "module
# compiled" (straight from the compiler or the cache) or "module compiled;
# new calls run on the compiled code" (the background compile of a module
# first served from the interpreter took over). At most TIER_WAIT seconds
# (default 300).
compiled_tier() {
	local log=$work/$1.log t0 waited
	t0=$(date +%s.%N)
	"$work/mcpload" -url "$url" -tool word_count -args "$args" -c 1 -n 1 -d 5m -warmup 0 -era modern >/dev/null
	for _ in $(seq 1 $((${TIER_WAIT:-300} * 10))); do
		if grep -q 'msg="module compiled\|tier=compiled' "$log"; then
			waited=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
			if grep -q 'new calls run on the compiled code' "$log"; then
				echo "$1: waited ${waited}s for the compiled tier ($(grep -o 'new calls run on the compiled code.*took=[^ ]*' "$log" | grep -o 'took=[^ ]*'))"
			else
				echo "$1: waited ${waited}s for the compiled code (no interpreter tier)"
			fi
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "$1 ended before its code compiled" >&2; exit 1; }
		sleep 0.1
	done
	echo "$1: its compiled tier did not take over within ${TIER_WAIT:-300}s" >&2
	exit 1
}

# run SERVER ERA CLIENTS OUT serves word_count with SERVER and loads it.
run() {
	local server=$1 era=$2 clients=$3 out=$4
	case $server in
	wasmcp+C) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-c" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+Go) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-go" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+GoR) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-gor" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+C@before) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp-before" serve --http 127.0.0.1:0 --tools "$work/tools-c-before" --cache-dir "$work/cache-before" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+Go@before) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp-before" serve --http 127.0.0.1:0 --tools "$work/tools-go" --cache-dir "$work/cache-before" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+GoR@before) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp-before" serve --http 127.0.0.1:0 --tools "$work/tools-gor" --cache-dir "$work/cache-before" --watch=false ${WASMCP_FLAGS:-} ;;
	go-sdk) start "$server-$era-$clients" url=http "$work/gosdk" -addr 127.0.0.1:0 ;;
	mcp-go) start "$server-$era-$clients" url=http "$work/mcpgo" -addr 127.0.0.1:0 ;;
	*) echo "unknown server $server" >&2; exit 2 ;;
	esac
	case $server in wasmcp+*) compiled_tier "$server-$era-$clients" ;; esac
	"$work/mcpload" -url "$url" -tool word_count -args "$args" -c "$clients" -d "$DURATION" -warmup "$WARMUP" \
		-era "$era" -pid "$pid" -label "$server" -json >"$out"
	stop
}

for era in $ERAS; do
	files=""
	for server in $SERVERS; do
		run "$server" "$era" "$CLIENTS" "$work/$server-$era.json"
		files="$files${files:+,}$work/$server-$era.json"
	done
	echo
	echo "== $era era =="
	"$work/mcpload" -table "$files"
	case " $SERVERS " in *" wasmcp+GoR "*)
		case " $SERVERS " in *" go-sdk "*)
			echo
			echo "-- the Go reactor against go-sdk, $era era --"
			"$work/mcpload" -table "$work/wasmcp+GoR-$era.json,$work/go-sdk-$era.json" ;;
		esac ;;
	esac
done

if [ "$HIGH" -gt 0 ]; then
	for era in $ERAS; do
		files=""
		for server in $HIGH_SERVERS; do
			run "$server" "$era" "$HIGH" "$work/$server-$era-high.json"
			files="$files${files:+,}$work/$server-$era-high.json"
		done
		echo
		echo "== $era era, $HIGH clients =="
		"$work/mcpload" -table "$files"
	done
fi
