# lib.sh — what the bench/*.sh scripts share. Source it after setting
# root; it makes $work (removed at exit unless KEEP=1) and defines start,
# stop, machine and json_text.

work=$(mktemp -d "/tmp/wasmcp-$(basename "$0" .sh).XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [ "${KEEP:-}" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# start NAME READY CMD... starts CMD logging to $work/NAME.log and sets pid;
# once a log line matches the grep pattern READY, sets url to the first
# url=… the log holds. It waits START_TRIES tenths of a second (default
# 600).
start() {
	local name=$1 ready=$2
	shift 2
	"$@" >"$work/$name.log" 2>&1 &
	pid=$!
	url=""
	for _ in $(seq 1 "${START_TRIES:-600}"); do
		if grep -q "$ready" "$work/$name.log"; then
			url=$(grep -o 'url=https\?://[^ ]*' "$work/$name.log" | head -1 | cut -d= -f2 || true)
			[ -n "$url" ] && return 0
		fi
		kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log"; echo "$name did not start" >&2; exit 1; }
		sleep 0.1
	done
	echo "$name did not start serving within $(( ${START_TRIES:-600} / 10 ))s" >&2
	exit 1
}

# stop ends the server start started.
stop() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=""
}

# machine prints the line that says where the figures were measured.
machine() {
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# json_text TEXT prints {"text": TEXT} as JSON.
json_text() {
	printf '%s' "$1" | python3 -c 'import json,sys; print(json.dumps({"text": sys.stdin.read()}))' 2>/dev/null ||
		printf '{"text":"%s"}' "$(printf '%s' "$1" | tr '\n' ' ' | sed 's/["\\]//g')"
}
