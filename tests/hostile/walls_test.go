package hostile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// The load-time walls: modules whose shape alone would cost the host
// seconds of compiling and hundreds of megabytes (a million functions took
// 13 s and 590 MB to compile) are refused at load, before wazero sees
// them, naming the policy key of the cap; the server's peak memory stays
// low, its CPU returns to idle, a neighbour's calls succeed, and SIGTERM
// ends it at once. The modules are generated here (a WAT source of a
// million functions would be megabytes of text); each is valid
// WebAssembly, so only the caps refuse it.

// wallModule is one generated module, the policy beside it (if any) and
// the policy key its refusal must name.
type wallModule struct {
	name, policy, key string
	wasm              func() []byte
}

var wallModules = []wallModule{
	{name: "manyfuncs", key: "max_functions", wasm: func() []byte { return funcsModule(1_000_000, 0, 0) }},
	{name: "manytypes", key: "max_types", wasm: manyTypesModule},
	{name: "manyimports", key: "max_imports", wasm: manyImportsModule},
	{name: "manylocals", key: "max_locals", wasm: func() []byte { return funcsModule(1, 60_000, 0) }},
	// The default code cap is 64 MiB; a policy lowers it (the key is the
	// same whoever sets the cap), so the test need not write 64 MiB.
	{name: "bigcode", key: "max_code", policy: "max_code = \"1MiB\"\n", wasm: func() []byte { return funcsModule(1, 0, 2<<20) }},
	{name: "manydata", key: "max_data_segments", wasm: func() []byte { return dataModule(150_000, 0) }},
	{name: "bigdata", key: "max_data", policy: "max_data = \"1MiB\"\n", wasm: func() []byte { return dataModule(1, 2<<20) }},
	{name: "manyelems", key: "max_elem_segments", wasm: manyElemsModule},
}

// section appends a section with body to e.
func section(e *wasmrewrite.Encoder, id byte, body []byte) { e.Section(id, body) }

// vecOf returns a vector of n copies of item.
func vecOf(n int, item []byte) []byte {
	b := wasmrewrite.AppendU32(make([]byte, 0, 5+n*len(item)), uint32(n))
	for range n {
		b = append(b, item...)
	}
	return b
}

// voidType is a type section holding () -> ().
var voidType = []byte{1, 0x60, 0, 0}

// funcsModule is n functions of type () -> (), exported _start first; the
// first has locals i32 locals and nops nop instructions.
func funcsModule(n, locals, nops int) []byte {
	e := wasmrewrite.NewEncoder(4*n + nops + 64)
	section(e, wasmrewrite.SecType, voidType)
	section(e, wasmrewrite.SecFunction, vecOf(n, []byte{0}))
	section(e, wasmrewrite.SecExport, append(wasmrewrite.AppendName([]byte{1}, "_start"), 0, 0))
	var first []byte
	if locals > 0 {
		first = wasmrewrite.AppendU32([]byte{1}, uint32(locals))
		first = append(first, 0x7F)
	} else {
		first = []byte{0}
	}
	first = append(first, bytes.Repeat([]byte{0x01}, nops)...)
	first = append(first, 0x0B)
	code := wasmrewrite.AppendU32(nil, uint32(n))
	code = append(wasmrewrite.AppendU32(code, uint32(len(first))), first...)
	for range n - 1 {
		code = append(code, 2, 0, 0x0B)
	}
	section(e, wasmrewrite.SecCode, code)
	return e.Bytes()
}

// manyTypesModule declares 150,000 function types.
func manyTypesModule() []byte {
	e := wasmrewrite.NewEncoder(3*150_000 + 16)
	section(e, wasmrewrite.SecType, vecOf(150_000, []byte{0x60, 0, 0}))
	return e.Bytes()
}

// manyImportsModule imports WASI's fd_write 2,000 times (the host's WASI
// has 46 functions).
func manyImportsModule() []byte {
	e := wasmrewrite.NewEncoder(2_000*40 + 32)
	section(e, wasmrewrite.SecType, []byte{1, 0x60, 4, 0x7F, 0x7F, 0x7F, 0x7F, 1, 0x7F})
	imp := wasmrewrite.AppendName(nil, "wasi_snapshot_preview1")
	imp = append(wasmrewrite.AppendName(imp, "fd_write"), 0, 0)
	section(e, wasmrewrite.SecImport, vecOf(2_000, imp))
	return e.Bytes()
}

// dataModule has a memory and n passive data segments of size bytes each.
func dataModule(n, size int) []byte {
	e := wasmrewrite.NewEncoder(n*(size+3) + 32)
	section(e, wasmrewrite.SecMemory, []byte{1, 0, 1})
	seg := wasmrewrite.AppendU32([]byte{1}, uint32(size))
	seg = append(seg, make([]byte, size)...)
	section(e, wasmrewrite.SecData, vecOf(n, seg))
	return e.Bytes()
}

// manyElemsModule has one function and 20,000 passive element segments
// naming it.
func manyElemsModule() []byte {
	e := wasmrewrite.NewEncoder(20_000*4 + 64)
	section(e, wasmrewrite.SecType, voidType)
	section(e, wasmrewrite.SecFunction, []byte{1, 0})
	section(e, wasmrewrite.SecElement, vecOf(20_000, []byte{1, 0x00, 1, 0}))
	section(e, wasmrewrite.SecCode, []byte{1, 2, 0, 0x0B})
	return e.Bytes()
}

// TestLoadTimeWalls serves the generated modules beside the good module
// over stdio: each is refused at load naming its cap, good answers, the
// server's peak RSS stays under wallPeakMiB, its CPU returns to idle, and
// SIGTERM ends it within a few seconds.
func TestLoadTimeWalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(toolsDir, "good.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good.wasm"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range wallModules {
		if err := os.WriteFile(filepath.Join(dir, m.name+".wasm"), m.wasm(), 0o644); err != nil {
			t.Fatal(err)
		}
		if m.policy != "" {
			if err := os.WriteFile(filepath.Join(dir, m.name+".policy.toml"), []byte(m.policy), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	srv := startServerIn(t, "stdio", dir)
	c := newStdioClient(t, srv)
	if r := c.call(t, "echo", `{"text":"beside the walls"}`); r.text != "echo: beside the walls" {
		t.Fatalf("the good module does not answer: %s", r)
	}
	waitLog(t, srv, 60*time.Second, "modules loaded")
	t.Logf("initial load ended after %s", time.Since(start).Round(time.Millisecond))
	log := srv.Stderr.String()
	for _, m := range wallModules {
		line := logLine(log, m.name+".wasm")
		if !strings.Contains(line, "module refused") || !strings.Contains(line, "limit "+m.key+")") {
			t.Errorf("%s: want a refusal naming limit %s, log line %q", m.name, m.key, line)
		}
	}
	if r := c.call(t, "manyfuncs_anything", "{}"); r.rpcCode != -32602 {
		t.Errorf("a tool of no loaded module: %s", r)
	}
	peak := procStatusKiB(t, srv.Cmd.Process.Pid, "VmHWM") / 1024
	t.Logf("peak RSS %d MiB (bound %d MiB)", peak, wallPeakMiB)
	if peak > wallPeakMiB {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", peak, wallPeakMiB)
	}
	waitIdle(t, srv.Cmd.Process.Pid, 5*time.Second)
	if r := c.call(t, "echo", `{"text":"after"}`); r.text != "echo: after" {
		t.Fatalf("the good module after the walls: %s", r)
	}
	sigterm := time.Now()
	if err := srv.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
		t.Logf("SIGTERM ended the server in %s", time.Since(sigterm).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the server was still running 10 s after SIGTERM")
	}
}

// wallPeakMiB bounds the peak RSS of a server refusing the wall modules
// beside the good Go module. Measured at about 100 MiB (most of it
// compiling and running good); compiling the million-function module
// alone took 590 MB.
const wallPeakMiB = 250

// waitLog waits until the server's log holds phrase.
func waitLog(t *testing.T, s *server, d time.Duration, phrase string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(s.Stderr.String(), phrase) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say %q within %s", phrase, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logLine returns the first log line mentioning s.
func logLine(log, s string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, s) && strings.Contains(line, "refused") {
			return line
		}
	}
	return ""
}

// procStatusKiB reads a "Name: N kB" line of /proc/PID/status.
func procStatusKiB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return 0
}

// cpuTicks is the CPU time pid used so far, user and system, in clock
// ticks (USER_HZ, 100 per second on Linux).
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// the last ')'. utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return u + st
}

// waitIdle waits until pid uses less than 10% of a core over 300 ms, and
// fails the test when that takes longer than within.
func waitIdle(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	const window, share, hz = 300 * time.Millisecond, 0.10, 100
	start := time.Now()
	for {
		t0, c0 := time.Now(), cpuTicks(t, pid)
		time.Sleep(window)
		used := float64(cpuTicks(t, pid)-c0) / hz
		if used <= share*time.Since(t0).Seconds() {
			t.Logf("CPU idle %s after asked", (time.Since(start) - window).Round(time.Millisecond))
			return
		}
		if time.Since(start) > within+window {
			t.Fatalf("the server still uses %.0f%% of a core %s later", 100*used/time.Since(t0).Seconds(), time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestRecursionWithinTheBudget: the memory budget counts each call's stack
// at wazero's ceiling. Four unbounded recursions (hostile's recurse, 64 MiB
// memory) at once under a budget that fits one of them beside one call of
// the good module (16 MiB): they run one after another (each ends in a
// stack overflow, or as busy after waiting 5 s), the good module answers
// after them, and the server's peak RSS stays under what four stacks at once
// would take (150 MB each).
func TestRecursionWithinTheBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, policy := range map[string]string{
		"hostile": "memory = \"64MiB\"\ntimeout = \"30s\"\n",
		"good":    "memory = \"16MiB\"\n",
	} {
		wasm, err := os.ReadFile(filepath.Join(toolsDir, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".policy.toml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One recursion is admitted with 8 MB of table, 160 MB of stack and
	// its first 16 MiB of memory (about 180 MiB), one good call with
	// about 170 MiB: one module holds at most half of 425 MiB, so the
	// recursions run one at a time beside a good call. Without the stack
	// in the cost, all four would run at once.
	srv := startServerIn(t, "stdio", dir, "--memory-budget", "425")
	c := newStdioClient(t, srv)
	if r := c.call(t, "echo", `{"text":"ready"}`); r.text != "echo: ready" {
		t.Fatalf("the good module does not answer: %s", r)
	}
	base := procStatusKiB(t, srv.Cmd.Process.Pid, "VmHWM") / 1024
	replies := make([]reply, 4)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = c.call(t, "recurse", "{}")
		}()
	}
	wg.Wait()
	// The budget admits in order, so a call of the good module made while
	// recursions wait would wait behind them; after them it runs.
	if r := c.call(t, "echo", `{"text":"after"}`); r.text != "echo: after" {
		t.Errorf("the good module after the recursions: %s", r)
	}
	overflows := 0
	for _, r := range replies {
		switch {
		case r.isError && strings.Contains(r.text, "stack overflow"):
			overflows++
		case r.isError && strings.Contains(r.text, "busy: the server's memory budget"):
		default:
			t.Errorf("a recursion: %s", r)
		}
	}
	if overflows == 0 {
		t.Error("no recursion ran to its stack overflow")
	}
	peak := procStatusKiB(t, srv.Cmd.Process.Pid, "VmHWM") / 1024
	t.Logf("%d of 4 recursions ran (the others busy); peak RSS %d MiB (%d MiB before them, bound %d)", overflows, peak, base, base+recursionBoundMiB)
	if peak > base+recursionBoundMiB {
		t.Errorf("peak RSS %d MiB: more than %d MiB over the %d MiB before the recursions", peak, recursionBoundMiB, base)
	}
	waitIdle(t, srv.Cmd.Process.Pid, 5*time.Second)
}

// recursionBoundMiB bounds what the recursions add to the peak RSS: one
// stack (150 MB) and the garbage of those before it, under the
// four at once (600 MB) the budget would admit without counting stacks.
const recursionBoundMiB = 500
