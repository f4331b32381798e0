package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const traces = `File: wasmcp.test
Type: cpu
-----------+-------------------------------------------------------
      30ms   runtime.memmove
             github.com/tetratelabs/wazero.(*runtime).InstantiateModule
             github.com/wasmcp/wasmcp/host.(*Module).callWith
             github.com/wasmcp/wasmcp/protocol.(*Server).Handle
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      10ms   log/slog.(*Logger).log
             github.com/wasmcp/wasmcp/protocol.(*request).audit
             github.com/wasmcp/wasmcp/protocol.(*Server).Handle
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      20ms   net/http.(*persistConn).readLoop
-----------+-------------------------------------------------------
      10ms   runtime.scanobject
             runtime.gcBgMarkWorker
`

func TestClassify(t *testing.T) {
	totals, err := classify(strings.NewReader(traces))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"instantiation (wazero InstantiateModule)": 30,
		"audit line": 10,
		"the benchmark's client (not the server)":                       20,
		"Go runtime: garbage collection (background marking, sweeping)": 10,
	}
	for name, ms := range want {
		if got := totals[name].Milliseconds(); got != ms {
			t.Errorf("%s: %d ms, want %d (all: %v)", name, got, ms, totals)
		}
	}
	var out bytes.Buffer
	write(&out, totals, 1000)
	// 50 ms of server time over 1000 calls: 50 µs a call; the client's
	// 20 ms are left out.
	if !strings.Contains(out.String(), "| **server total** | **50.0** |") || !strings.Contains(out.String(), "client 20.0 µs") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestCheckBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(path, []byte(`{"eras":{"modern":{"allocsPerCall":100,"timeOverClientOnly":2}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(bench string) string {
		var out bytes.Buffer
		if err := checkBaseline(strings.NewReader(bench), &out, path); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	ok := "BenchmarkServeCall/modern/default-2 100 200000 ns/op 1 B/op 105 allocs/op\nBenchmarkServeCall/modern/client-only-2 100 100000 ns/op 1 B/op 10 allocs/op\n"
	if out := run(ok); strings.Contains(out, "REGRESSION") || !strings.Contains(out, "200.0 µs") {
		t.Errorf("within the tolerance:\n%s", out)
	}
	bad := "BenchmarkServeCall/modern/default-2 100 300000 ns/op 1 B/op 120 allocs/op\nBenchmarkServeCall/modern/client-only-2 100 100000 ns/op 1 B/op 10 allocs/op\n"
	if out := run(bad); strings.Count(out, "REGRESSION") != 2 {
		t.Errorf("over the tolerance in both figures:\n%s", out)
	}
	if err := checkBaseline(strings.NewReader("nothing"), &bytes.Buffer{}, path); err == nil {
		t.Error("no figures: no error")
	}
}
