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
#
# A slow, lossy path (this machine's kernel has no netem qdisc, so the path
# is made of other parts): DELAY=25ms puts bench/netpath between mcpload
# and the server, a relay holding every TCP byte and UDP datagram 25 ms in
# each direction (RTT 50 ms); the server listens on 127.0.0.2 and the relay
# on 127.0.0.1 with the same port number. LOSS=1 drops 1% of the packets
# between the relay and the server, each way, with the kernel's netfilter
# (nft numgen random), so TCP and QUIC recover with their own machinery.
# LOSS needs root and nft: the script re-runs itself in a new network
# namespace (unshare -n) with only its own loopback, and the rule lives
# and dies there. The relay terminates TCP, so a TCP retransmission is
# timed by the kernel on a path of near-zero RTT (Linux's minimum RTO of
# 200 ms and tail-loss probe still apply); QUIC runs end to end through it
# and sees the whole delay.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DELAY=${DELAY:-}
LOSS=${LOSS:-0}
if [ "$LOSS" != 0 ] && [ -z "${NETPATH_NETNS:-}" ]; then
	[ -n "$DELAY" ] || DELAY=0ms
	command -v nft >/dev/null || { echo "LOSS needs nft (apt-get install nftables)" >&2; exit 2; }
	exec unshare -n env NETPATH_NETNS=1 DELAY="$DELAY" LOSS="$LOSS" "$0" "$@"
fi
if [ -n "${NETPATH_NETNS:-}" ]; then
	ip link set lo up
	permyriad=$(python3 -c "print(round(float('$LOSS') * 100))")
	nft add table inet netpath
	# Dropped on input, as a lost packet is: a drop on output would fail the
	# sender's sendmsg (EPERM), which QUIC treats as a broken socket.
	nft add chain inet netpath in '{ type filter hook input priority 0; }'
	nft add rule inet netpath in ip daddr 127.0.0.2 numgen random mod 10000 \< "$permyriad" drop
	nft add rule inet netpath in ip saddr 127.0.0.2 numgen random mod 10000 \< "$permyriad" drop
fi
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
[ -z "$DELAY" ] || (cd "$root/bench" && go build -o "$work/netpath" ./netpath)
mkdir -p "$work/tools"
cp "$root/examples/c/wordcount/wordcount.wasm" "$work/tools/"
"$work/wasmcp" cert --out "$work/tls" --hosts 127.0.0.1 --days 1 >/dev/null

args=$(json_text "$TEXT")

machine
echo "settings: CLIENTS=$CLIENTS DURATION=$DURATION WARMUP=$WARMUP, word_count (C guest) on ${#TEXT} bytes of text, TLS 1.3 on loopback"
bind=127.0.0.1
if [ -n "$DELAY" ]; then
	bind=127.0.0.2
	if [ "$LOSS" != 0 ]; then
		echo "path: bench/netpath, one-way delay $DELAY each way; loss $LOSS% each way between the relay and the server (nft, own network namespace)"
	else
		echo "path: bench/netpath, one-way delay $DELAY each way; no loss"
	fi
fi
for era in $ERAS; do
	files=""
	for proto in $PROTOS; do
		case $proto in
		h1) flag="" label="HTTP/1.1" ;;
		h2) flag="-h2" label="HTTP/2" ;;
		h3) flag="-http3" label="HTTP/3" ;;
		*) echo "unknown protocol $proto (want h1, h2 or h3)" >&2; exit 2 ;;
		esac
		start "$proto-$era" 'msg="modules loaded"' "$work/wasmcp" serve --http "$bind:0" --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem" --http3 \
			--tools "$work/tools" --cache-dir "$work/cache" --watch=false --data-dir -
		if [ -n "$DELAY" ]; then
			port=${url##*:}
			port=${port%%/*}
			"$work/netpath" -listen "127.0.0.1:$port" -to "127.0.0.2:$port" -delay "$DELAY" >"$work/netpath.log" 2>&1 &
			relay=$!
			for _ in $(seq 1 100); do grep -q '^netpath' "$work/netpath.log" && break; sleep 0.1; done
			grep -q '^netpath' "$work/netpath.log" || { cat "$work/netpath.log" >&2; exit 1; }
			url="https://127.0.0.1:$port/mcp"
		fi
		"$work/mcpload" -url "$url" $flag -cacert "$work/tls/cert.pem" -tool word_count -args "$args" -c "$CLIENTS" \
			-d "$DURATION" -warmup "$WARMUP" -era "$era" -pid "$pid" -label "$label" -json >"$work/$proto-$era.json"
		stop
		if [ -n "$DELAY" ]; then kill "$relay"; wait "$relay" 2>/dev/null || true; fi
		files="$files${files:+,}$work/$proto-$era.json"
	done
	echo
	echo "== $era era =="
	"$work/mcpload" -table "$files"
done
