// Command callcost turns a CPU profile of BenchmarkServeCall into the cost
// table of one tools/call: each sample is charged to the innermost layer
// of the server its stack crosses, and each layer's time is divided by the
// number of calls the benchmark made.
//
//	go test ./server -run '^$' -bench 'ServeCall/modern/default$' -benchtime 20000x -cpuprofile /tmp/cc.prof -o /tmp/server.test
//	go tool pprof -traces /tmp/server.test /tmp/cc.prof | go run ./bench/callcost -calls 20000
//
// bench/callcost.sh runs both steps for both eras. Samples of the
// benchmark's own client (net/http's client side) and of the server's
// start-up (the module's compilation) are counted apart and left out of
// the server's share; the Go runtime's own work (the scheduler, garbage
// collection in the background) is a row of its own.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// layer is one row of the table: a sample belongs to the first layer,
// walking its stack from the leaf up, one of whose patterns a frame
// matches.
type layer struct {
	name string
	re   *regexp.Regexp
}

// layers lists the layers innermost first. A layer's patterns name the
// functions that enter it.
var layers = []layer{
	{"start-up: compilation and load (not per call)", regexp.MustCompile(`host\.\(\*Engine\)\.(compile|build|load|Open)|registry\.\(\*Registry\)`)},
	{"the guest's own run (wazero call, WASI imports)", regexp.MustCompile(`wazevo\.\(\*callEngine\)\.Call$`)},
	{"instantiation (wazero InstantiateModule)", regexp.MustCompile(`wazero\.\(\*runtime\)\.InstantiateModule$`)},
	{"guest output framing (stdout lines)", regexp.MustCompile(`host\.\(\*call\)\.handleLine|host\.\(\*lineWriter\)`)},
	{"host call: code and memory slots, module config, instance close", regexp.MustCompile(`host\.\(\*Module\)\.(Call|callWith|call|measuredCall)$|host\.\(\*(call|codeSlot|memBudget|callMemory)\)`)},
	{"guest answer decode", regexp.MustCompile(`protocol\.guestCall$`)},
	{"input schema validation", regexp.MustCompile(`protocol\.\(\*Server\)\.validate$`)},
	{"output checks, structured-content schema, result encoding", regexp.MustCompile(`protocol\.\(\*Server\)\.(toolOutcome|checkStructured)$|protocol\.(checkReply|checkShape|ResultResponse)$|protocol\.\(\*request\)\.(toolAnswer|ok)$`)},
	{"audit line", regexp.MustCompile(`protocol\.\(\*request\)\.audit$`)},
	{"metrics", regexp.MustCompile(`telemetry\.\(\*Metrics\)`)},
	{"tracing", regexp.MustCompile(`telemetry\.\(\*Tracing\)|go\.opentelemetry\.io`)},
	{"protocol: envelope decode, dispatch, admission", regexp.MustCompile(`protocol\.\(\*Server\)\.Handle$`)},
	{"transport: body and header limits, Host/Origin, era, JSON/SSE write", regexp.MustCompile(`mcphttp\.\(\*Handler\)\.ServeHTTP$`)},
	{"auth guard", regexp.MustCompile(`wasmcp/auth\.`)},
	{"net/http server: connection, request parse, response write", regexp.MustCompile(`net/http\.\(\*conn\)\.serve$`)},
	{"the benchmark's client (not the server)", regexp.MustCompile(`benchClient|net/http\.\(\*persistConn\)|net/http\.\(\*Transport\)|net/http\.\(\*Client\)|BenchmarkServeCall`)},
	{"Go runtime: garbage collection (background marking, sweeping)", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$`)},
	{"Go runtime: scheduler (goroutine switches, wake-ups, idle)", regexp.MustCompile(`^runtime\.(mcall|schedule|park_m|goexit0|mstart|sysmon)$`)},
}

const (
	runtimeRow = "Go runtime: unattributed (syscalls and GC work the profiler could not place)"
	clientRow  = "the benchmark's client (not the server)"
	startRow   = "start-up: compilation and load (not per call)"
)

func main() {
	calls := flag.Int("calls", 0, "calls the profiled benchmark made (its -benchtime Nx)")
	check := flag.String("check", "", "read `go test -bench ServeCall` output on stdin and compare it with this baseline file")
	flag.Parse()
	if *check != "" {
		if err := checkBaseline(os.Stdin, os.Stdout, *check); err != nil {
			fmt.Fprintln(os.Stderr, "callcost:", err)
			os.Exit(1)
		}
		return
	}
	if *calls <= 0 {
		fmt.Fprintln(os.Stderr, "callcost: -calls N is required")
		os.Exit(2)
	}
	totals, err := classify(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "callcost:", err)
		os.Exit(1)
	}
	write(os.Stdout, totals, *calls)
}

// classify reads `go tool pprof -traces` output and sums each stack's
// time into its layer.
func classify(r io.Reader) (map[string]time.Duration, error) {
	totals := map[string]time.Duration{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var value time.Duration
	var frames []string
	flush := func() {
		if value > 0 {
			totals[layerOf(frames)] += value
		}
		value, frames = 0, frames[:0]
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(frames) == 0 && value == 0 && len(f) >= 2 {
			if d, err := time.ParseDuration(f[0]); err == nil {
				value = d
				frames = append(frames, strings.Join(f[1:], " "))
				continue
			}
		}
		if value > 0 {
			frames = append(frames, strings.TrimSpace(line))
		}
	}
	flush()
	return totals, sc.Err()
}

func layerOf(frames []string) string {
	for _, fr := range frames { // leaf first
		for _, l := range layers {
			if l.re.MatchString(fr) {
				return l.name
			}
		}
	}
	return runtimeRow
}

func write(w io.Writer, totals map[string]time.Duration, calls int) {
	var server time.Duration
	for name, d := range totals {
		if name != clientRow && name != startRow {
			server += d
		}
	}
	per := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Nanoseconds())/float64(calls)/1000, 'f', 1, 64)
	}
	fmt.Fprintf(w, "| layer | µs per call | share of server CPU |\n|---|---:|---:|\n")
	// Outermost first, as a request meets them; the runtime's rows last.
	var names []string
	for i := len(layers) - 1; i >= 0; i-- {
		if !strings.HasPrefix(layers[i].name, "Go runtime") {
			names = append(names, layers[i].name)
		}
	}
	for _, l := range layers {
		if strings.HasPrefix(l.name, "Go runtime") {
			names = append(names, l.name)
		}
	}
	names = append(names, runtimeRow)
	for _, name := range names {
		if name == clientRow || name == startRow {
			continue
		}
		d := totals[name]
		fmt.Fprintf(w, "| %s | %s | %.0f%% |\n", name, per(d), 100*float64(d)/float64(max(server, 1)))
	}
	fmt.Fprintf(w, "| **server total** | **%s** | 100%% |\n", per(server))
	fmt.Fprintf(w, "\nLeft out: the benchmark's client %s µs per call; start-up %s ms in all.\n",
		per(totals[clientRow]), strconv.FormatFloat(float64(totals[startRow].Microseconds())/1000, 'f', 0, 64))
}
