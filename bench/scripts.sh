#!/usr/bin/env bash
# scripts.sh — the echo tool as a script on wasmcp, against the same echo as
# a Go reactor on wasmcp and on the official TypeScript SDK's own server,
# side by side, on this machine (issue 29; compare.sh does the same for
# word_count against the Go SDKs).
#
# Builds wasmcp, mcpload and bench/echoreactor,
# installs bench/nodesdk with `npm ci` (its package-lock.json pins
# @modelcontextprotocol/server 2.4.0), then serves the echo tool of the
# reference tool sets (the text back as text and as structured content)
# one server at a time on a free loopback port:
#   wasmcp+TS   wasmcp serving bench/scripts/echo.ts (echo.js when this
#               wasmcp has no TypeScript transform) on the JavaScript
#               runner: a fresh instance per call from the script's snapshot
#   wasmcp+GoR  wasmcp serving bench/echoreactor, a Go reactor (snapshot)
#   node-sdk    bench/nodesdk: @modelcontextprotocol/server v2 on Node
#               (createMcpHandler: the 2026-07-28 era per request, 2025-era
#               traffic through its stateless legacy fallback — no session)
# and drives each with mcpload at the same concurrency and duration, in each
# era, printing one table per era (ratios against the last server), then
# wasmcp+TS against node-sdk. The load tool and the servers share the
# machine's cores: compare ratios within one run.
#
# Settings (environment): CLIENTS (16), DURATION (10s), WARMUP (2s), ERAS
# ("modern legacy"), SERVERS ("wasmcp+TS wasmcp+GoR node-sdk"), TEXT (the
# text echoed), WASMCP_FLAGS (more flags for wasmcp serve; the default
# waits for the compiled code instead of serving the first calls from the
# interpreter, and gives the start-up run for a snapshot 60s, for a busy
# machine), NODE (node),
# KEEP=1 keeps the work directory. HIGH is accepted for compare.sh's
# settings and ignored (no high-concurrency run here).
# Usage: bench/scripts.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-16}
SERVERS=${SERVERS:-wasmcp+TS wasmcp+GoR node-sdk}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
ERAS=${ERAS:-modern legacy}
NODE=${NODE:-node}
TEXT=${TEXT:-"The quick brown fox jumps over the lazy dog."}
WASMCP_FLAGS=${WASMCP_FLAGS:---interpreter-first=false --snapshot-timeout 60s}
# The runner's first compilation takes minutes on a busy machine.
START_TRIES=${START_TRIES:-3000}

. "$root/bench/lib.sh"

echo "building into $work ..."
(cd "$root" && go build -o "$work/wasmcp" ./cmd/wasmcp && go build -o "$work/mcpload" ./cmd/mcpload)
mkdir -p "$work/tools-ts" "$work/tools-gor" "$work/runner"
(cd "$root/bench/echoreactor" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o "$work/tools-gor/echo.wasm" .)
case " $SERVERS " in *" wasmcp+TS "*)
	# The runner is the one wasmcp embeds (guest-sdk/js/quickjs).
	mkdir -p "$work/probe"
	cp "$root/bench/scripts/echo.ts" "$work/probe/"
	if "$work/wasmcp" check "$work/probe/echo.ts" >"$work/probe.log" 2>&1; then
		cp "$root/bench/scripts/echo.ts" "$work/tools-ts/"
	else
		echo "note: this wasmcp does not serve echo.ts ($(tail -1 "$work/probe.log")): serving echo.js"
		cp "$root/bench/scripts/echo.js" "$work/tools-ts/"
	fi
	echo "wasmcp+TS serves $(ls "$work/tools-ts"), runner $(wc -c <"$root/guest-sdk/js/quickjs/runner.wasm") bytes" ;;
esac
case " $SERVERS " in *" node-sdk "*)
	cp "$root/bench/nodesdk/package.json" "$root/bench/nodesdk/package-lock.json" "$root/bench/nodesdk/server.mjs" "$work/"
	(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	echo "node-sdk: $("$NODE" --version), @modelcontextprotocol/server $(cd "$work" && "$NODE" -p 'require("./node_modules/@modelcontextprotocol/server/package.json").version')" ;;
esac

args=$(json_text "$TEXT")

machine
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, echo of ${#TEXT} bytes of text"
# run SERVER ERA CLIENTS OUT serves echo with SERVER and loads it.
run() {
	local server=$1 era=$2 clients=$3 out=$4
	case $server in
	wasmcp+TS) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-ts" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
	wasmcp+GoR) start "$server-$era-$clients" 'msg="modules loaded"' "$work/wasmcp" serve --http 127.0.0.1:0 --tools "$work/tools-gor" --cache-dir "$work/cache" --watch=false ${WASMCP_FLAGS:-} ;;
	node-sdk) start "$server-$era-$clients" url=http "$NODE" "$work/server.mjs" -addr 127.0.0.1:0 ;;
	*) echo "unknown server $server" >&2; exit 2 ;;
	esac
	if grep -q "runs without a snapshot" "$work/$server-$era-$clients.log"; then
		echo "warning: $server runs without its snapshot: $(grep -m1 'runs without a snapshot' "$work/$server-$era-$clients.log")" >&2
	fi
	"$work/mcpload" -url "$url" -tool echo -args "$args" -c "$clients" -d "$DURATION" -warmup "$WARMUP" \
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
	case " $SERVERS " in *" wasmcp+TS "*)
		case " $SERVERS " in *" node-sdk "*)
			echo
			echo "-- the script against node-sdk, $era era --"
			"$work/mcpload" -table "$work/wasmcp+TS-$era.json,$work/node-sdk-$era.json" ;;
		esac ;;
	esac
done
