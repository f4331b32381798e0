// Command manyscripts measures wasmcp serve with a tools directory of many
// distinct TypeScript scripts (docs/performance.md, "Scripts"):
//
//   - cold start: N distinct scripts, empty caches: time from starting the
//     process to a tools/list listing all N;
//   - warm start: the same directory and caches, a new process: the time
//     to a complete tools/list; then, after -idle, the server's resident
//     memory (VmRSS) and the compiled code it holds (none yet: a warm start
//     lists the scripts from the description cache and compiles a script's
//     code at its first call); then one call of each script, the
//     compilations settled and -idle again, the same figures. Compiled
//     code is read two ways: the machine code mapped (the process's
//     anonymous executable mappings in /proc/PID/smaps, which is where
//     wazero puts compiled code) and what the engine counts against
//     --code-memory (/metrics wasmcp_code_memory_bytes);
//   - new scripts: NEW times, a new distinct script is renamed into the
//     running server's tools directory and a tools/call of its tool is
//     sent every 10 ms until one succeeds: min, median and max of the time
//     from the rename to that success.
//
// The scripts are bench/scripts/echo.ts with the tool (and server) name
// made distinct per file, so each has its own hash, its own transform,
// its own snapshot and its own tool. The server is built from this
// checkout and speaks stdio; /metrics is on a free loopback port
// (--metrics-addr 127.0.0.1:0). Each wait is bounded by -bound. Every
// figure is printed with its target from issue 38 beside it.
//
// Usage (from the repository root; Linux, for /proc):
//
//	cd bench && go run ./manyscripts [-n 20] [-new 5] [-idle 5s] [-bound 10m] [-keep]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/bench/internal/stdioserve"
)

var (
	nScripts = flag.Int("n", 20, "distinct scripts in the tools directory")
	nNew     = flag.Int("new", 5, "new scripts dropped into the running server, one at a time")
	idle     = flag.Duration("idle", 5*time.Second, "how long the warm server idles before its memory is read")
	bound    = flag.Duration("bound", 10*time.Minute, "the most each wait (a start, the compilations, a new script) may take")
	keep     = flag.Bool("keep", false, "keep the work directory")
)

// Issue 38's targets.
const (
	targetWarm    = 10 * time.Second
	targetRSS     = 150 << 20
	targetCode    = 64 << 20
	targetNewCall = time.Second
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	root, err := filepath.Abs("..")
	must(err)
	work, err := os.MkdirTemp("", "wasmcp-manyscripts.")
	must(err)
	if *keep {
		log.Printf("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "wasmcp")
	run(root, "go", "build", "-o", bin, "./cmd/wasmcp")
	echo := read(filepath.Join(root, "bench/scripts/echo.ts"))
	tools := filepath.Join(work, "tools")
	staging := filepath.Join(work, "staging")
	cache := filepath.Join(work, "cache")
	for _, d := range []string{tools, staging} {
		must(os.MkdirAll(d, 0o755))
	}
	for i := range *nScripts {
		name := fmt.Sprintf("echo_%02d", i)
		must(os.WriteFile(filepath.Join(tools, name+".ts"), script(echo, name), 0o644))
	}
	log.Printf("%d distinct scripts (bench/scripts/echo.ts renamed); %d cores, load average %s", *nScripts, runtime.NumCPU(), loadavg())

	// Cold: empty caches.
	d, c := startAndList(bin, work, tools, cache, *nScripts)
	log.Printf("cold start, %d scripts, empty cache: %s to a complete tools/list (server CPU %s); no target",
		*nScripts, d.Round(time.Millisecond), c.CPUTime())
	c.Close()

	// Warm: the same caches, a new process.
	d, c = startAndList(bin, work, tools, cache, *nScripts)
	defer c.Close()
	log.Printf("warm start, %d scripts: %s to a complete tools/list (server CPU %s); target <= %s: %s",
		*nScripts, d.Round(time.Millisecond), c.CPUTime(), targetWarm, verdict(d <= targetWarm, float64(d)/float64(targetWarm)))
	time.Sleep(*idle)
	c.report(fmt.Sprintf("idle %s after the warm start, no call yet", *idle))

	// One call of each script: each one's code compiled (from the cache).
	var first []time.Duration
	for i := range *nScripts {
		name := fmt.Sprintf("echo_%02d", i)
		t := time.Now()
		if res := c.Request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"hi"}}`, name)); !called(res, "hi") {
			log.Fatalf("%s: %s\nstderr:\n%s", name, res, c.Stderr)
		}
		first = append(first, time.Since(t))
	}
	slices.Sort(first)
	log.Printf("first call of each script after the warm start: median %s, max %s",
		first[len(first)/2].Round(time.Millisecond), first[len(first)-1].Round(time.Millisecond))
	c.settle()
	time.Sleep(*idle)
	c.report(fmt.Sprintf("idle %s after one call of each script", *idle))

	// New scripts into the running server.
	var ds []time.Duration
	for k := range *nNew {
		name := fmt.Sprintf("new_%02d", k)
		staged := filepath.Join(staging, name+".ts")
		must(os.WriteFile(staged, script(echo, name), 0o644))
		start := time.Now()
		must(os.Rename(staged, filepath.Join(tools, name+".ts")))
		for {
			res := c.Request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"hi %d"}}`, name, k))
			if called(res, fmt.Sprintf("hi %d", k)) {
				break
			}
			if time.Since(start) > *bound {
				log.Fatalf("%s not callable after %s: %s\nstderr:\n%s", name, *bound, res, c.Stderr)
			}
			time.Sleep(10 * time.Millisecond)
		}
		ds = append(ds, time.Since(start))
		log.Printf("  %s: callable %s after its rename (server log: %s)", name, ds[k].Round(time.Millisecond), c.loadedLine(name))
	}
	if len(ds) > 0 {
		slices.Sort(ds)
		med := ds[len(ds)/2]
		log.Printf("new script to a successful tools/call, %d files: min %s, median %s, max %s; target <= %s: %s",
			len(ds), ds[0].Round(time.Millisecond), med.Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond),
			targetNewCall, verdict(med <= targetNewCall, float64(med)/float64(targetNewCall)))
	}
	log.Printf("load average at the end %s", loadavg())
}

// script is echo.ts serving its tool (and naming its server) name.
func script(echo []byte, name string) []byte {
	return bytes.ReplaceAll(echo, []byte(`"echo"`), []byte(strconv.Quote(name)))
}

func verdict(met bool, ratio float64) string {
	if met {
		return fmt.Sprintf("met (%.2fx the target)", ratio)
	}
	return fmt.Sprintf("MISSED (%.2fx the target)", ratio)
}

// client is a wasmcp serve --stdio process.
type client struct {
	*stdioserve.Server
	metrics string // the /metrics URL
}

// startAndList starts a server and returns the time from its start to a
// tools/list answer holding n tools (asked again until it does).
func startAndList(bin, work, tools, cache string, n int) (time.Duration, *client) {
	start := time.Now()
	logFile, err := os.Create(filepath.Join(work, fmt.Sprintf("serve-%d.log", time.Now().UnixNano())))
	must(err)
	srv, err := stdioserve.Start(bin, []string{"--tools", tools, "--cache-dir", cache, "--metrics-addr", "127.0.0.1:0"},
		[]string{"XDG_DATA_HOME=" + filepath.Join(work, "data")}, logFile)
	must(err)
	c := &client{Server: srv}
	for {
		if got, _ := c.ListAll(); got == n {
			break
		}
		if time.Since(start) > *bound {
			log.Fatalf("tools/list lacks some of the %d tools after %s; stderr:\n%s", n, *bound, c.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), c
}

// settle waits (at most -bound) until the compiled code the engine
// counts has not changed for three polls half a second apart: background
// compilations done.
func (c *client) settle() {
	start, last, same := time.Now(), int64(-1), 0
	for same < 3 && time.Since(start) < *bound {
		time.Sleep(500 * time.Millisecond)
		if v := c.metric("wasmcp_code_memory_bytes"); v == last {
			same++
		} else {
			last, same = v, 0
		}
	}
}

// report prints the server's resident memory and compiled code now,
// against their targets.
func (c *client) report(when string) {
	rss, hwm := c.memory()
	log.Printf("RSS, %s: VmRSS %s (VmHWM %s); target <= %s idle: %s",
		when, mib(rss), mib(hwm), mib(targetRSS), verdict(rss <= targetRSS, float64(rss)/targetRSS))
	mapped, resident := c.execMapped()
	log.Printf("compiled code, %s: machine code mapped %s (%s resident; anonymous executable mappings in /proc/PID/smaps); target <= %s in all: %s",
		when, mib(mapped), mib(resident), mib(targetCode), verdict(mapped <= targetCode, float64(mapped)/targetCode))
	log.Printf("compiled code the engine counts against --code-memory, %s (/metrics wasmcp_code_memory_bytes): %s",
		when, mib(c.metric("wasmcp_code_memory_bytes")))
}

// called says whether a tools/call response is a success holding text.
func called(res, text string) bool {
	return strings.Contains(res, `"result"`) && !strings.Contains(res, `"isError":true`) && strings.Contains(res, strconv.Quote(text))
}

// loadedLine is the server log's "module loaded" line of module name.
func (c *client) loadedLine(name string) string {
	re := regexp.MustCompile(`msg="module loaded" module=` + name + ` .*took=(\S+)`)
	if m := re.FindStringSubmatch(c.Stderr.String()); m != nil {
		return "loaded in " + m[1]
	}
	return "no load line"
}

// memory returns the server's VmRSS and VmHWM in bytes.
func (c *client) memory() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Cmd.Process.Pid))
	must(err)
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[2] == "kB" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmRSS:":
				rss = v << 10
			case "VmHWM:":
				hwm = v << 10
			}
		}
	}
	return rss, hwm
}

// execMapped sums the size and the resident part of the server's
// anonymous executable mappings: the machine code wazero compiled (the
// binary's own code is a file mapping and not counted).
func (c *client) execMapped() (size, resident int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", c.Cmd.Process.Pid))
	must(err)
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			in = f[1][2] == 'x' && f[4] == "0" && len(f) == 5
			continue
		}
		if !in || len(f) != 3 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Size:":
			size += v << 10
		case "Rss:":
			resident += v << 10
		}
	}
	return size, resident
}

// metric reads one gauge from the server's /metrics.
func (c *client) metric(name string) int64 {
	if c.metrics == "" {
		m := regexp.MustCompile(`serving metrics and probes" url=(\S+)`).FindStringSubmatch(c.Stderr.String())
		if m == nil {
			log.Fatalf("the server serves no /metrics; stderr:\n%s", c.Stderr)
		}
		c.metrics = m[1]
	}
	resp, err := http.Get(c.metrics)
	must(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			must(err)
			return int64(v)
		}
	}
	log.Fatalf("/metrics has no %s", name)
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func run(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
}

func read(p string) []byte {
	b, err := os.ReadFile(p)
	must(err)
	return b
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
