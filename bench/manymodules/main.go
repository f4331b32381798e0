// Command manymodules measures wasmcp serve with a tools directory of many
// modules (docs/performance.md, "Many modules"):
//
//   - cold start: NCOLD distinct Go modules, empty caches, compiled one at a
//     time (--compilations 1, as before) and with the default pool;
//   - warm start: time from starting the process to a complete tools/list,
//     with NGO distinct Go modules and NC distinct C modules, warm caches;
//   - round-robin calls over the cold-start modules under a code budget:
//     p50/p99/max call latency (first calls after an eviction included),
//     the evictions, and the server's peak resident memory;
//   - tools/list with NC tools (one per C module): its time;
//   - with -nfirst N: new Go reactors' first calls, with and without the
//     interpreter tier (first.go);
//   - with -nrr N: N distinct Go modules called round-robin under the code
//     budget (default: the server's, 512 MiB), the compilation cache
//     primed once beforehand: p50/p99/max call latency, the evictions, the
//     server's peak resident memory against the budget, and what the
//     memory above the budget is made of.
//
// Distinct modules are made from the Go and C word_count examples by
// rewriting the tool name in the module's data ("word_count" becomes
// "wc_0000017", the same length), so every module has its own hash, its
// own tool and the same code size, as distinct builds would. A warm start
// needs each module described once; for the modules not compiled in the
// cold-start phase the description cache is seeded with the description a
// describe run gives (the base module's, with the tool renamed), which the
// cold-start phase checks against real describe runs.
//
// Usage (from the repository root):
//
//	cd bench && go run ./manymodules [-ngo 200] [-nc 1000] [-ncold 20] [-budget 96MiB]
//	cd bench && go run ./manymodules -ngo 0 -nc 0 -ncold 0 -nrr 200 -rounds 2
//	cd bench && go run ./manymodules -ngo 0 -nc 0 -ncold 0 -nfirst 100 [-firstoff]
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/bench/internal/stdioserve"
)

var (
	ngo      = flag.Int("ngo", 200, "Go modules for the warm start")
	nc       = flag.Int("nc", 1000, "C modules for the warm start and the tools/list")
	ncold    = flag.Int("ncold", 20, "Go modules for the cold start and the round-robin calls")
	rounds   = flag.Int("rounds", 5, "round-robin rounds over the cold-start modules")
	budget   = flag.String("budget", "", "--code-memory for the round-robin calls (default: the server's default)")
	keep     = flag.Bool("keep", false, "keep the work directory")
	before   = flag.String("before", "", "a wasmcp binary to compare the cold and warm starts with (e.g. one built from an older commit)")
	nrr      = flag.Int("nrr", 0, "Go modules for the round-robin phase under the code budget, compilation cache primed once (0: no such phase)")
	rrDir    = flag.String("rrcache", "", "with -nrr: the compilation cache to prime and keep (primed already when it holds the mark a priming leaves: not primed again)")
	cacheMax = flag.String("cachemax", "8GiB", "with -nrr: --cache-max of the servers (the compiled code of 200 Go modules takes 6 GB)")
	bound    = flag.Duration("bound", 45*time.Minute, "with -nrr: the most the priming, and then the round-robin calls, may take each")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	root, err := filepath.Abs("..")
	must(err)
	work, err := os.MkdirTemp("", "wasmcp-many.")
	must(err)
	if !*keep {
		defer os.RemoveAll(work)
	} else {
		log.Printf("work directory: %s", work)
	}
	bin := filepath.Join(work, "wasmcp")
	run(root, nil, "go", "build", "-o", bin, "./cmd/wasmcp")
	goBase := filepath.Join(work, "wordcount-go.wasm")
	run(filepath.Join(root, "examples/wasm/wordcount"), []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
		"go", "build", "-tags", "command", "-trimpath", "-ldflags=-s -w", "-o", goBase, ".")
	goWasm := read(goBase)
	cWasm := read(filepath.Join(root, "examples/c/wordcount/wordcount.wasm"))
	log.Printf("Go module %s, C module %s; %d cores", mib(len(goWasm)), mib(len(cWasm)), numCPU())

	if *ncold > 0 {
		cold(bin, work, goBase, goWasm)
	}
	if *nfirst > 0 {
		firstCalls(bin, work, buildReactor(root, work))
	}
	if *nrr > 0 {
		manyRR(bin, work, goBase, goWasm)
	}
	warm(bin, root, work, goBase, goWasm, cWasm)
}

// cold measures the cold starts and the round-robin calls.
func cold(bin, work, goBase string, goWasm []byte) {
	// Cold start, serial then pooled, each with empty caches.
	coldDir := filepath.Join(work, "cold")
	writeVariants(coldDir, "go", goWasm, *ncold)
	var coldCache string
	for _, n := range []string{"1", ""} {
		coldCache = filepath.Join(work, "cache-cold-"+n)
		args := []string{}
		label := "default pool"
		if n != "" {
			args = append(args, "--compilations", n)
			label = "one at a time"
		}
		d, c := startAndList(bin, coldDir, coldCache, *ncold, args)
		c.Close()
		log.Printf("cold start, %d Go modules, %s: %s to a complete tools/list", *ncold, label, d.Round(time.Millisecond))
	}
	if *before != "" {
		d, c := startAndList(*before, coldDir, filepath.Join(work, "cache-cold-before"), *ncold, nil)
		c.Close()
		log.Printf("cold start, %d Go modules, %s: %s to a complete tools/list", *ncold, *before, d.Round(time.Millisecond))
	}
	// The descriptions real describe runs wrote are what seeding writes.
	goDesc := baseDescription(bin, goBase, work)
	for i := range *ncold {
		v := variant(goWasm, "go", i)
		got := cachedDescription(coldCache, v)
		if !bytes.Equal(got, renamed(goDesc, i)) {
			log.Fatalf("seeding would differ from describe for variant %d:\n%s\n%s", i, got, renamed(goDesc, i))
		}
	}
	log.Printf("seeded descriptions match the %d real describe runs", *ncold)

	// Round-robin calls over the cold-start modules (compilation cache warm).
	rr(bin, coldDir, coldCache)
}

// warm measures the warm starts and tools/list; with -before, the older
// binary's warm starts run interleaved with this one's, each with its own
// caches, so both see the same machine.
func warm(bin, root, work, goBase string, goWasm, cWasm []byte) {
	goDesc := baseDescription(bin, goBase, work)
	cDesc := baseDescription(bin, filepath.Join(root, "examples/c/wordcount/wordcount.wasm"), work)
	bins := []string{bin}
	if *before != "" {
		bins = append(bins, *before)
	}
	for _, k := range []struct {
		lang string
		wasm []byte
		desc []byte
		n    int
	}{{"go", goWasm, goDesc, *ngo}, {"c", cWasm, cDesc, *nc}} {
		if k.n == 0 {
			continue
		}
		dir := filepath.Join(work, "warm-"+k.lang)
		writeVariants(dir, k.lang, k.wasm, k.n)
		caches := make([]string, len(bins))
		for j := range bins {
			caches[j] = filepath.Join(work, fmt.Sprintf("cache-warm-%s-%d", k.lang, j))
			for i := range k.n {
				seedDescription(caches[j], variant(k.wasm, k.lang, i), renamed(k.desc, i))
			}
		}
		// The server indexes files whose timestamps are 2 s older than
		// their stat at start (registry/index.go): let the files settle, so
		// the first start records them all as a long-running deployment's
		// would be.
		time.Sleep(3 * time.Second)
		for j, b := range bins {
			_, c := startAndList(b, dir, caches[j], k.n, nil) // the first start keeps its copies of the modules
			c.checkSeeds()
			c.Close()
		}
		ds := make([][]time.Duration, len(bins))
		cpu := make([][]time.Duration, len(bins))
		listT := make([]time.Duration, len(bins))
		for range 3 {
			for j, b := range bins {
				d, c := startAndList(b, dir, caches[j], k.n, nil)
				ds[j] = append(ds[j], d)
				cpu[j] = append(cpu[j], c.cpu)
				listT[j] = c.timeList(20)
				c.Close()
			}
		}
		for j, b := range bins {
			slices.Sort(ds[j])
			slices.Sort(cpu[j])
			label := ""
			if len(bins) > 1 {
				label = b + ": "
			}
			log.Printf("%swarm start, %d %s modules: %s to a complete tools/list (median of 3; %s, %s), server CPU time by then %s (median); tools/list of %d tools, every page: %s (median of 20)",
				label, k.n, strings.ToUpper(k.lang), ds[j][1].Round(time.Millisecond), ds[j][0].Round(time.Millisecond), ds[j][2].Round(time.Millisecond),
				cpu[j][1], k.n, listT[j].Round(time.Microsecond))
		}
	}
}

// rr calls every cold-start module in turn, rounds times, and reports the
// latencies, evictions and peak memory.
func rr(bin, dir, cache string) {
	args := []string{"--log-level", "debug"}
	if *budget != "" {
		args = append(args, "--code-memory", *budget)
	}
	_, c := startAndList(bin, dir, cache, *ncold, args)
	defer c.Close()
	c.checkSeeds()
	var lat []time.Duration
	for r := range *rounds {
		for i := range *ncold {
			t := time.Now()
			res := c.Request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"one two three"}}`, toolName(i)))
			lat = append(lat, time.Since(t))
			if !strings.Contains(res, `"words":3`) {
				log.Fatalf("round %d module %d: %s", r, i, res)
			}
		}
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))].Round(time.Millisecond) }
	evictions := strings.Count(c.Stderr.String(), "module code closed")
	b := *budget
	if b == "" {
		b = "default (512MiB)"
	}
	log.Printf("round-robin, %d Go modules x %d rounds, --code-memory %s: p50 %s, p99 %s, max %s; %d evictions; peak RSS %s",
		*ncold, *rounds, b, p(0.5), p(0.99), lat[len(lat)-1].Round(time.Millisecond), evictions, c.peakRSS())
}

// client is a wasmcp serve --stdio process.
type client struct {
	*stdioserve.Server
	cpu time.Duration // CPU time to the first complete tools/list
}

// startAndList starts a server and returns the time from its start to a
// tools/list answer holding n tools (asked again until it does); the
// server's CPU time by then is in client.cpu.
func startAndList(bin, dir, cache string, n int, extra []string) (time.Duration, *client) {
	start := time.Now()
	c := startServer(bin, dir, cache, append([]string{"--watch=false"}, extra...)...)
	for {
		if got, _ := c.ListAll(); got == n {
			break
		} else if time.Since(start) > 30*time.Minute {
			log.Fatalf("tools/list has %d tools, want %d; stderr:\n%s", got, n, c.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := time.Since(start)
	c.cpu = c.CPUTime()
	return d, c
}

// startServer starts wasmcp serve --stdio on dir and cache with extra
// flags and initializes a session.
func startServer(bin, dir, cache string, extra ...string) *client {
	srv, err := stdioserve.Start(bin, append([]string{"--tools", dir, "--cache-dir", cache}, extra...), nil, nil)
	must(err)
	return &client{Server: srv}
}

// timeList returns the median time of k complete tools/list walks.
func (c *client) timeList(k int) time.Duration {
	var ds []time.Duration
	for range k {
		t := time.Now()
		c.ListAll()
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds[k/2]
}

// peakRSS reads the server's VmHWM.
func (c *client) peakRSS() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "?"
}

// toolName is variant i's tool name: as long as "word_count".
func toolName(i int) string { return fmt.Sprintf("wc_%07d", i) }

func variant(wasm []byte, lang string, i int) []byte {
	return bytes.ReplaceAll(wasm, []byte("word_count"), []byte(toolName(i)))
}

func renamed(desc []byte, i int) []byte {
	return bytes.ReplaceAll(desc, []byte("word_count"), []byte(toolName(i)))
}

func writeVariants(dir, lang string, wasm []byte, n int) {
	must(os.MkdirAll(dir, 0o755))
	for i := range n {
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%04d.wasm", lang, i)), variant(wasm, lang, i), 0o644))
	}
}

// baseDescription is the description a describe run gives for a module.
func baseDescription(bin, wasm, work string) []byte {
	cache := filepath.Join(work, "cache-base")
	run(work, nil, bin, "inspect", "--cache-dir", cache, wasm)
	return cachedDescription(cache, read(wasm))
}

// The server keeps each description sealed: the hex SHA-256 of the JSON
// and a newline before it (host/cacheseal.go), and takes a file whose seal
// does not match for damaged (removed, the module described again). So
// the descriptions are read through their seal, which must hold (a new
// format fails here, not silently in the warm starts), and seeded sealed.

// cachedDescription is the description the cache in dir holds for wasm.
func cachedDescription(dir string, wasm []byte) []byte {
	p := filepath.Join(dir, "describe", hash(wasm)+".json")
	b := read(p)
	sum, desc, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(sum) != hash(desc) {
		log.Fatalf("%s: not a sealed description (the hex SHA-256 of the JSON, a newline, the JSON): the server's cache format changed", p)
	}
	return desc
}

// seedDescription writes desc as the cached description of wasm in dir.
func seedDescription(dir string, wasm, desc []byte) {
	must(os.MkdirAll(filepath.Join(dir, "describe"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "describe", hash(wasm)+".json"), append([]byte(hash(desc)+"\n"), desc...), 0o600))
}

// checkSeeds fails the bench if the server took a seeded description for
// damaged: it then described the module again, which a warm start must not.
func (c *client) checkSeeds() {
	if strings.Contains(c.Stderr.String(), "cache entry damaged") {
		log.Fatalf("the server refused a seeded description; stderr:\n%s", c.Stderr)
	}
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func run(dir string, env []string, name string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func read(p string) []byte {
	b, err := os.ReadFile(p)
	must(err)
	return b
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func numCPU() int {
	b, _ := exec.Command("nproc").Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
