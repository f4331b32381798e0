package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// manyRR is the -nrr phase: nrr distinct Go modules, the compilation
// cache primed once (each module compiled by one server with a small
// budget, its first calls sent a few at a time so both cores compile),
// then a fresh server with that warm cache and the code budget (-budget,
// default the server's) calls every module in turn, -rounds times; with
// -before, a server of that binary does the same after it, on the same
// cache. Both run with --cache-max -cachemax: the default bound of the
// on-disk cache (1 GiB) holds the code of about 35 Go modules (two
// entries of 15 MB each: the module as given and the instrumented one),
// and a start prunes the rest.
func manyRR(bin, work, goBase string, goWasm []byte) {
	n := *nrr
	dir := filepath.Join(work, "rr")
	writeVariants(dir, "go", goWasm, n)
	cache := *rrDir
	if cache == "" {
		cache = filepath.Join(work, "cache-rr")
	}
	cache, err := filepath.Abs(cache)
	must(err)
	// Every module is listed from its description at start-up, so that
	// only the calls compile.
	goDesc := baseDescription(bin, goBase, work)
	for i := range n {
		seedDescription(cache, variant(goWasm, "go", i), renamed(goDesc, i))
	}
	mark := filepath.Join(cache, fmt.Sprintf("manymodules-primed-%d", n))
	if _, err := os.Stat(mark); err == nil {
		log.Printf("round-robin: compilation cache %s primed already for %d modules", cache, n)
	} else {
		prime(bin, dir, cache, n)
		must(os.WriteFile(mark, nil, 0o600))
	}
	roundRobin(bin, dir, cache, n)
	if *before != "" {
		roundRobin(*before, dir, cache, n)
	}
}

// prime compiles every module once, into the compilation cache.
func prime(bin, dir, cache string, n int) {
	start := time.Now()
	_, c := startAndList(bin, dir, cache, n, []string{"--code-memory", "128MiB", "--cache-max", *cacheMax})
	defer c.Close()
	c.checkSeeds()
	stop := time.AfterFunc(*bound, func() {
		log.Printf("priming took longer than -bound %s: stopping the server", *bound)
		_ = c.Cmd.Process.Kill()
	})
	defer stop.Stop()
	const window = 4 // the server compiles min(cores, 4) at once
	next, done, retries := 0, 0, 0
	pending := map[int]int{} // request id -> module
	send := func(i int) {
		pending[c.Send("tools/call", callParams(i))] = i
	}
	for ; next < min(window, n); next++ {
		send(next)
	}
	for done < n {
		id, line := c.Recv()
		i, ok := pending[id]
		if !ok {
			continue
		}
		delete(pending, id)
		if !strings.Contains(line, `"words":3`) {
			// A first call may meet its deadline while the module
			// compiles; the compilation goes on: ask again.
			if retries++; retries > n {
				log.Fatalf("priming: too many failed calls; the last, module %d: %s", i, line)
			}
			send(i)
			continue
		}
		done++
		if done%20 == 0 {
			log.Printf("priming: %d of %d modules compiled, %s", done, n, time.Since(start).Round(time.Second))
		}
		if next < n {
			send(next)
			next++
		}
	}
	log.Printf("priming: %d Go modules compiled into the cache in %s (server CPU time %s; %d calls retried)",
		n, time.Since(start).Round(time.Second), c.CPUTime(), retries)
}

func callParams(i int) string {
	return fmt.Sprintf(`{"name":%q,"arguments":{"text":"one two three"}}`, toolName(i))
}

// sample is the server's memory at one moment.
type sample struct {
	rss, execAnon, otherAnon, fileRSS int64   // /proc/PID/status and smaps
	metrics                           metrics // /metrics
}

// metrics holds the /metrics gauges the report uses.
type metrics map[string]float64

var metricNames = []string{
	"go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes",
	"go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "go_memstats_next_gc_bytes",
	"wasmcp_code_memory_bytes", "wasmcp_code_memory_budget_bytes",
}

// roundRobin calls every module in turn with a warm compilation cache.
func roundRobin(bin, dir, cache string, n int) {
	addr := freeAddr()
	args := []string{"--log-level", "debug", "--metrics-addr", addr, "--cache-max", *cacheMax}
	if *budget != "" {
		args = append(args, "--code-memory", *budget)
	}
	ready, c := startAndList(bin, dir, cache, n, args)
	defer c.Close()
	c.checkSeeds()
	log.Printf("round-robin: %d Go modules listed in %s (warm cache)", n, ready.Round(time.Millisecond))
	stop := time.AfterFunc(*bound, func() {
		log.Printf("round-robin calls took longer than -bound %s: stopping the server", *bound)
		_ = c.Cmd.Process.Kill()
	})
	defer stop.Stop()
	var lat []time.Duration
	var peak sample
	start := time.Now()
	for r := range *rounds {
		for i := range n {
			t := time.Now()
			res := c.Request("tools/call", callParams(i))
			lat = append(lat, time.Since(t))
			if !strings.Contains(res, `"words":3`) {
				log.Fatalf("round %d module %d: %s", r, i, res)
			}
			if len(lat)%10 == 0 {
				if s := c.sample(addr); s.rss > peak.rss {
					peak = s
				}
			}
		}
		log.Printf("round-robin: round %d of %d done, %s", r+1, *rounds, time.Since(start).Round(time.Second))
	}
	calls := len(lat)
	cpu := c.CPUTime()
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))].Round(time.Millisecond) }
	logs := c.Stderr.String()
	evictions := strings.Count(logs, "module code closed")
	var took []time.Duration
	for _, m := range regexp.MustCompile(`msg="module compiled".* took=(\S+)`).FindAllStringSubmatch(logs, -1) {
		if d, err := time.ParseDuration(m[1]); err == nil {
			took = append(took, d)
		}
	}
	slices.Sort(took)
	medianTook := time.Duration(0)
	if len(took) > 0 {
		medianTook = took[len(took)/2]
	}
	hwm := c.status("VmHWM")
	b := int64(peak.metrics["wasmcp_code_memory_budget_bytes"])
	log.Printf("%s: round-robin, %d Go modules x %d rounds, --code-memory %s: p50 %s, p99 %s, max %s (%d calls, %s, server CPU %s); %d evictions, %d compilations from the cache (median %s)",
		bin, n, *rounds, mibf(float64(b)), p(0.5), p(0.99), lat[len(lat)-1].Round(time.Millisecond), calls,
		time.Since(start).Round(time.Second), cpu, evictions, len(took), medianTook.Round(time.Millisecond))
	log.Printf("round-robin memory: peak RSS (VmHWM) %s = budget %s + %s; at the largest sampled RSS (%s): machine code mapped (anonymous executable) %s, other anonymous (Go heap, stacks, wazero's allocations outside the heap) %s, files (the binary) %s; Go heap in use %s, heap idle not returned to the OS %s, goroutine stacks %s, Go runtime total (sys) %s, next GC at %s; code counted by the budget %s",
		mibf(float64(hwm)), mibf(float64(b)), mibf(float64(hwm-b)), mibf(float64(peak.rss)),
		mibf(float64(peak.execAnon)), mibf(float64(peak.otherAnon)), mibf(float64(peak.fileRSS)),
		mibf(peak.metrics["go_memstats_heap_inuse_bytes"]),
		mibf(peak.metrics["go_memstats_heap_idle_bytes"]-peak.metrics["go_memstats_heap_released_bytes"]),
		mibf(peak.metrics["go_memstats_stack_inuse_bytes"]), mibf(peak.metrics["go_memstats_sys_bytes"]),
		mibf(peak.metrics["go_memstats_next_gc_bytes"]), mibf(peak.metrics["wasmcp_code_memory_bytes"]))
}

// sample reads the server's memory now.
func (c *client) sample(addr string) sample {
	s := sample{rss: c.status("VmRSS"), metrics: metrics{}}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", c.Cmd.Process.Pid)); err == nil {
		sc := bufio.NewScanner(f)
		var perms, path string
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
				perms, path = fs[1], ""
				if len(fs) >= 6 {
					path = fs[5]
				}
				continue
			}
			if len(fs) == 3 && fs[0] == "Rss:" {
				kb, _ := strconv.ParseInt(fs[1], 10, 64)
				switch {
				case strings.HasPrefix(path, "/"):
					s.fileRSS += kb << 10
				case strings.Contains(perms, "x"):
					s.execAnon += kb << 10
				default:
					s.otherAnon += kb << 10
				}
			}
		}
		f.Close()
	}
	cl := http.Client{Timeout: 5 * time.Second}
	if resp, err := cl.Get("http://" + addr + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, l := range strings.Split(string(b), "\n") {
			for _, name := range metricNames {
				if v, ok := strings.CutPrefix(l, name+" "); ok {
					s.metrics[name], _ = strconv.ParseFloat(v, 64)
				}
			}
		}
	}
	return s
}

// status reads a kB field of /proc/PID/status, in bytes.
func (c *client) status(field string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// freeAddr is a loopback address with a port free now.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().String()
}

func mibf(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }
