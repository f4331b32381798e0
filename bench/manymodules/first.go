package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The first-call phase (-nfirst N, docs/performance.md "First call: the
// interpreter tier"): Go reactors never seen before (empty caches), with
// wasmcp serve's interpreter tier (--interpreter-first) and, with
// -firstoff, without it:
//
//   - landing: a running server (--watch) with an empty tools directory; a
//     new Go reactor is renamed into it and called until it answers: the
//     time from the rename to the first successful answer (-landings runs,
//     tier on and off interleaved);
//   - N distinct new Go reactors: the time from the server's start to a
//     complete tools/list, then each module's first call in turn: its
//     latency and the time since the listing when it answered.
var (
	nfirst   = flag.Int("nfirst", 0, "Go reactors for the first-call phase (0: no such phase)")
	landings = flag.Int("landings", 3, "with -nfirst: landings of a new Go reactor in a running server, per setting")
	firstOff = flag.Bool("firstoff", false, "with -nfirst: list and call the N reactors with --interpreter-first=false too (landings always run both ways)")
)

// buildReactor builds the Go word_count example as a reactor (with a
// snapshot of its start-up), as go run ./examples/wasm/build does.
func buildReactor(root, work string) []byte {
	out := filepath.Join(work, "wordcount-go-reactor.wasm")
	run(filepath.Join(root, "examples/wasm/wordcount"), []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
		"go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	return read(out)
}

func firstCalls(bin, work string, wasm []byte) {
	settings := []string{"--interpreter-first=true", "--interpreter-first=false"}
	log.Printf("first calls: Go reactor %s", mib(len(wasm)))
	lands := map[string][]time.Duration{}
	next := 50000 // variant numbers no other phase uses
	for k := range *landings {
		for _, s := range settings {
			d := landing(bin, filepath.Join(work, fmt.Sprintf("land-%d-%s", k, s[len(s)-4:])), wasm, next, s)
			next++
			lands[s] = append(lands[s], d)
		}
	}
	for _, s := range settings {
		ds := lands[s]
		log.Printf("landing, %s: a new Go reactor's first answer %v after its file landed (runs in order)", s, rounded(ds))
	}
	if !*firstOff {
		settings = settings[:1]
	}
	for _, s := range settings {
		many(bin, filepath.Join(work, "first-"+s[len(s)-4:]), wasm, next, s)
		next += *nfirst
	}
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}

// landing starts a server on an empty tools directory and cache, drops
// variant i in, and returns the time to its first successful answer.
func landing(bin, dir string, wasm []byte, i int, setting string) time.Duration {
	tools := filepath.Join(dir, "tools")
	must(os.MkdirAll(tools, 0o755))
	c := startServer(bin, tools, filepath.Join(dir, "cache"), "--watch=true", setting)
	defer c.Close()
	v := variant(wasm, "go", i)
	tmp := filepath.Join(dir, "new.wasm")
	must(os.WriteFile(tmp, v, 0o644))
	must(os.Rename(tmp, filepath.Join(tools, "new.wasm")))
	start := time.Now()
	call := fmt.Sprintf(`{"name":%q,"arguments":{"text":"one two three"}}`, toolName(i))
	for {
		if res := c.Request("tools/call", call); strings.Contains(res, `"words":3`) {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Minute {
			log.Fatalf("the landed module never answered; stderr:\n%s", c.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// many lists n new Go reactors and calls each once.
func many(bin, dir string, wasm []byte, first int, setting string) {
	tools := filepath.Join(dir, "tools")
	must(os.MkdirAll(tools, 0o755))
	for i := range *nfirst {
		must(os.WriteFile(filepath.Join(tools, fmt.Sprintf("go-%04d.wasm", i)), variant(wasm, "go", first+i), 0o644))
	}
	d, c := startAndList(bin, tools, filepath.Join(dir, "cache"), *nfirst, []string{setting})
	defer c.Close()
	listed := time.Now()
	rssAtList := c.peakRSS()
	upgradedAtList := strings.Count(c.Stderr.String(), "new calls run on the compiled code")
	var lat, since []time.Duration
	for i := range *nfirst {
		t := time.Now()
		res := c.Request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"one two three"}}`, toolName(first+i)))
		lat = append(lat, time.Since(t))
		since = append(since, time.Since(listed))
		if !strings.Contains(res, `"words":3`) {
			log.Fatalf("module %d: %s", i, res)
		}
	}
	upgraded := strings.Count(c.Stderr.String(), "new calls run on the compiled code")
	slices.Sort(lat)
	log.Printf("%d new Go reactors, %s: %s to a complete tools/list (server CPU %s); first calls one after another: p50 %s, max %s each, the last answered %s after the listing; compiled tier ready for %d at the listing, %d after the calls; peak RSS (VmHWM) %s at the listing, %s after the calls (--code-memory: the default, 512 MiB)",
		*nfirst, setting, d.Round(time.Millisecond), c.cpu, lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond),
		since[len(since)-1].Round(time.Millisecond), upgradedAtList, upgraded, rssAtList, c.peakRSS())
}
