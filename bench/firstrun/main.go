// Command firstrun measures a newcomer's first run: it clones a wasmcp
// checkout into a temporary directory, runs the README's first command
// there with an empty Go build cache (GOCACHE in the temporary directory;
// the module cache is the user's, so no download is timed), sends
// initialize and tools/list on its stdin, and reports how long the first
// tools/list answer took and the longest time the command printed nothing.
//
//	cd bench && go run ./firstrun [-repo DIR] [-rev REV] [-keep]
//
// -repo is the checkout to clone (default: the module root above bench),
// -rev the commit (default HEAD). Every line the command prints is echoed
// with its time since the start.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// readmeFirstCommand is the README's first set-up command, when the
// README does not say otherwise.
const readmeFirstCommand = "go run -v ./examples/wasm/build && go run ./cmd/wasmcp serve --tools examples/wasm/bin"

// firstCommand is the first set-up command of the README in dir: its
// first line that runs ./examples/wasm/build and then wasmcp.
func firstCommand(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return readmeFirstCommand
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "go run") && strings.Contains(l, "./examples/wasm/build &&") {
			return l
		}
	}
	return readmeFirstCommand
}

func main() {
	repo := flag.String("repo", "..", "the wasmcp checkout to clone")
	rev := flag.String("rev", "HEAD", "the commit to measure")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	timeout := flag.Duration("timeout", 60*time.Minute, "give up after this long")
	flag.Parse()
	if err := run(*repo, *rev, *keep, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "firstrun:", err)
		os.Exit(1)
	}
}

func run(repo, rev string, keep bool, timeout time.Duration) error {
	tmp, err := os.MkdirTemp("", "wasmcp-firstrun-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	clone := filepath.Join(tmp, "wasmcp")
	for _, args := range [][]string{{"clone", "-q", repo, clone}, {"-C", clone, "checkout", "-q", rev}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	head, _ := exec.Command("git", "-C", clone, "rev-parse", "--short=12", "HEAD").Output()
	first := firstCommand(clone)
	fmt.Printf("measuring %s: %s\n", strings.TrimSpace(string(head)), first)

	cmd := exec.Command("sh", "-c", first)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(tmp, "gocache"), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"firstrun","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		io.WriteString(stdin, m+"\n")
	}

	var mu sync.Mutex
	last, silence := start, time.Duration(0)
	seen := func(stream, line string) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if d := now.Sub(last); d > silence {
			silence = d
		}
		last = now
		fmt.Printf("%7.1fs %s %s\n", now.Sub(start).Seconds(), stream, truncate(line, 160))
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			seen("err", sc.Text())
		}
	}()
	answered := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 16<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Tools []json.RawMessage `json:"tools"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == "2" {
				answered <- len(m.Result.Tools)
				return
			}
			seen("out", line)
		}
		close(answered)
	}()
	select {
	case n, ok := <-answered:
		if !ok {
			return fmt.Errorf("the command ended before answering tools/list")
		}
		mu.Lock()
		defer mu.Unlock()
		if d := time.Since(last); d > silence {
			silence = d
		}
		fmt.Printf("first tools/list: %.1f s after the start, %d tools; longest silence %.1f s\n",
			time.Since(start).Seconds(), n, silence.Seconds())
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("no tools/list answer within %s", timeout)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
