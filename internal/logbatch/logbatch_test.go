package logbatch

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer records each Write the destination receives.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) snapshot() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.writes
}

func TestBatchesLinesInOrder(t *testing.T) {
	dst := &lockedBuffer{}
	w := New(dst, time.Hour, 1<<20)
	for i := range 100 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got, n := dst.snapshot(); got != "" || n != 0 {
		t.Fatalf("written before a flush: %d writes", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, n := dst.snapshot()
	if n != 1 {
		t.Errorf("%d writes, want one batch", n)
	}
	for i := range 100 {
		if !strings.Contains(got, fmt.Sprintf("line %d\n", i)) {
			t.Fatalf("line %d lost", i)
		}
	}
	if strings.Index(got, "line 10\n") > strings.Index(got, "line 11\n") {
		t.Error("out of order")
	}
	// After Close a line goes straight through.
	fmt.Fprintln(w, "late")
	if got, _ := dst.snapshot(); !strings.HasSuffix(got, "late\n") {
		t.Error("a write after Close was not passed through")
	}
}

func TestFlushesAfterTheInterval(t *testing.T) {
	dst := &lockedBuffer{}
	w := New(dst, 10*time.Millisecond, 1<<20)
	defer w.Close()
	fmt.Fprintln(w, "one")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got, _ := dst.snapshot(); got == "one\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the line was not written after the interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFlushesAtTheSize(t *testing.T) {
	dst := &lockedBuffer{}
	w := New(dst, time.Hour, 64)
	defer w.Close()
	line := strings.Repeat("x", 40) + "\n"
	fmt.Fprint(w, line)
	if _, n := dst.snapshot(); n != 0 {
		t.Fatal("written under the size")
	}
	fmt.Fprint(w, line)
	if got, n := dst.snapshot(); n != 1 || got != line+line {
		t.Fatalf("%d writes, %q", n, got)
	}
}

func TestConcurrentWritersKeepLinesWhole(t *testing.T) {
	dst := &lockedBuffer{}
	w := New(dst, time.Millisecond, 256)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(w, "g%d-%d\n", g, i)
			}
		}()
	}
	wg.Wait()
	w.Close()
	got, _ := dst.snapshot()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines, want 1600", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "g") || seen[l] {
			t.Fatalf("torn or repeated line %q", l)
		}
		seen[l] = true
	}
}
