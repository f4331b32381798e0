package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// tick is how often a step that is still running says so: the first run
// of the README's first command compiles for minutes, and a newcomer must
// never wait long without a line.
const tick = 10 * time.Second

// step runs do, printing what it does when it starts, a line every tick
// while it runs (with what status says, if anything), and how long it took.
func step(what string, status func() string, do func() error) error {
	start := time.Now()
	fmt.Fprintf(os.Stderr, "%s …\n", what)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				extra := ""
				if status != nil {
					if s := status(); s != "" {
						extra = ": " + s
					}
				}
				fmt.Fprintf(os.Stderr, "  … %s, %s so far%s\n", what, time.Since(start).Round(time.Second), extra)
			}
		}
	}()
	err := do()
	close(done)
	wg.Wait()
	if err == nil {
		fmt.Fprintf(os.Stderr, "  done in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// buildHost compiles wasmcp itself (./cmd/wasmcp, output discarded) so that
// the `go run ./cmd/wasmcp …` after this command finds every package in the
// Go build cache and starts within seconds; while it compiles, it counts
// the packages go build -v names.
func buildHost(ctx context.Context, root string) error {
	var mu sync.Mutex
	compiled, last := 0, ""
	status := func() string {
		mu.Lock()
		defer mu.Unlock()
		if compiled == 0 {
			return "resolving packages"
		}
		if last == "github.com/wasmcp/wasmcp/cmd/wasmcp" {
			return fmt.Sprintf("%d packages compiled, linking", compiled)
		}
		return fmt.Sprintf("%d packages compiled, last %s", compiled, last)
	}
	return step("building wasmcp (the host; cached for the next command)", status, func() error {
		cmd := exec.CommandContext(ctx, "go", "build", "-v", "-o", os.DevNull, "./cmd/wasmcp")
		cmd.Dir = root
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		var tail []string // what go build said besides package names
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "#") || strings.Contains(line, " ") {
				tail = append(tail, line)
				continue
			}
			mu.Lock()
			compiled++
			last = line
			mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("go build ./cmd/wasmcp: %w\n%s", err, strings.Join(tail, "\n"))
		}
		return nil
	})
}
