#!/usr/bin/env bash
# callcost.sh — the cost table of one tools/call (docs/performance.md, "The
# cost of one call"): profiles BenchmarkServeCall (the whole `wasmcp serve
# --http` stack in process, the C word_count guest) in each era and charges
# every CPU sample to the innermost server layer its stack crosses
# (bench/callcost). Then prints the per-call figures of the benchmark
# itself against bench/callcost.json, as .ci/run does.
#
# Settings (environment): CALLS (default 20000 per profile), ERAS ("legacy
# modern"), COUNT (default 3 runs of each sub-benchmark for the check).
# Usage: bench/callcost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CALLS=${CALLS:-20000}
ERAS=${ERAS:-legacy modern}
COUNT=${COUNT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root/server"
go test -c -o "$work/server.test" .
for era in $ERAS; do
	echo "== $era era: $CALLS calls, one at a time, one keep-alive connection =="
	"$work/server.test" -test.run '^$' -test.bench "ServeCall/$era/default\$" -test.benchtime "${CALLS}x" \
		-test.cpuprofile "$work/$era.prof" | grep '^Benchmark'
	go tool pprof -traces "$work/server.test" "$work/$era.prof" 2>/dev/null | (cd "$root/bench" && go run ./callcost -calls "$CALLS")
	echo
done
"$work/server.test" -test.run '^$' -test.bench 'ServeCall' -test.benchtime 3000x -test.count "$COUNT" | tee "$work/bench.txt" | grep '^Benchmark'
(cd "$root/bench" && go run ./callcost -check callcost.json <"$work/bench.txt")
