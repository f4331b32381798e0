package host

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// wasmSection frames a section.
func wasmSection(id byte, body ...byte) []byte {
	return append(append([]byte{id}, appendU32(nil, uint32(len(body)))...), body...)
}

// spinWithImports is spinModule with an import section (its body given),
// and with more function types after its type 0, () -> ().
func spinWithImports(imports []byte, types ...[]byte) []byte {
	spin := spinModule()
	typ := []byte{byte(1 + len(types)), 0x60, 0, 0}
	for _, t := range types {
		typ = append(typ, t...)
	}
	out := append([]byte{}, spin[:8]...)
	out = append(out, wasmSection(1, typ...)...)
	out = append(out, wasmSection(2, imports...)...)
	return append(out, spin[8+6:]...)
}

func importEntry(module, name string, desc ...byte) []byte {
	return append(appendName(appendName(nil, module), name), desc...)
}

func TestLoadChecksImports(t *testing.T) {
	e := newEngine(t, Limits{Timeout: 2 * time.Second})
	cases := []struct {
		name    string
		imports []byte
		types   [][]byte
		want    string
	}{
		{"wrong signature", append([]byte{1}, importEntry("wasi_snapshot_preview1", "fd_write", 0x00, 0)...), nil,
			"imports wasi_snapshot_preview1.fd_write with type () -> (); the host's is (i32, i32, i32, i32) -> (i32)"},
		{"missing function", append([]byte{1}, importEntry("wasi_snapshot_preview1", "fd_teleport", 0x00, 0)...), nil,
			"imports wasi_snapshot_preview1.fd_teleport, which the host's WASI does not provide"},
		{"global", append([]byte{1}, importEntry("wasi_snapshot_preview1", "errno", 0x03, 0x7F, 0)...), nil,
			"imports a global as wasi_snapshot_preview1.errno; the host provides only wasi_snapshot_preview1 functions"},
		{"table", append([]byte{1}, importEntry("wasi_snapshot_preview1", "tbl", 0x01, 0x70, 0, 1)...), nil,
			"imports a table as wasi_snapshot_preview1.tbl"},
	}
	for _, c := range cases {
		_, err := e.Load(context.Background(), c.name, spinWithImports(c.imports, c.types...), Policy{})
		if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a load error containing %q", c.name, err, c.want)
		}
	}
	// The right signature loads: fd_write (i32 i32 i32 i32) -> i32.
	ok := append([]byte{1}, importEntry("wasi_snapshot_preview1", "fd_write", 0x00, 1)...)
	if _, err := e.Load(context.Background(), "ok", spinWithImports(ok, []byte{0x60, 4, 0x7F, 0x7F, 0x7F, 0x7F, 1, 0x7F}), Policy{}); err != nil {
		t.Fatalf("a module importing fd_write with its signature: %v", err)
	}
}

// tableGrower is a command whose _start grows its table (funcref, min 1,
// no maximum) by 65536 elements at a time until table.grow fails, then
// traps (unreachable). Unbounded, it would take wazero to 2³² elements:
// 32 GiB of host memory, none of it linear memory.
func tableGrower() []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, wasmSection(1, 1, 0x60, 0, 0)...)
	m = append(m, wasmSection(3, 1, 0)...)
	m = append(m, wasmSection(4, 1, 0x70, 0, 1)...) // funcref, min 1
	m = append(m, wasmSection(5, 1, 0, 1)...)
	exports := []byte{2}
	exports = append(appendName(exports, "_start"), 0x00, 0)
	exports = append(appendName(exports, "memory"), 0x02, 0)
	m = append(m, wasmSection(7, exports...)...)
	// loop: ref.null func; i32.const 65536; table.grow 0; i32.const -1;
	// i32.ne; br_if 0; end; unreachable; end
	body := []byte{0, 0x03, 0x40, 0xD0, 0x70, 0x41, 0x80, 0x80, 0x04, 0xFC, 15, 0, 0x41, 0x7F, 0x47, 0x0D, 0, 0x0B, 0x00, 0x0B}
	m = append(m, wasmSection(10, append(append([]byte{1}, appendU32(nil, uint32(len(body)))...), body...)...)...)
	desc := `{"abiVersion":1,"name":"tables","version":"1","tools":[{"name":"grow","inputSchema":{"type":"object"}}]}`
	return append(m, wasmSection(0, append(appendName(nil, "wasmcp.describe"), desc...)...)...)
}

func TestTableGrowthIsBounded(t *testing.T) {
	for _, instrument := range []bool{false, true} {
		e := newEngine(t, Limits{Timeout: 20 * time.Second})
		if instrument {
			e = instrumentingEngine(t, Limits{Timeout: 20 * time.Second})
		}
		m, err := e.Load(context.Background(), "tables", tableGrower(), Policy{Limits: Limits{TableElements: 200_000}})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err = m.Call(context.Background(), "tools/call", []byte(`{"name":"grow"}`), nil)
		runtime.ReadMemStats(&after)
		if !IsKind(err, KindTrap) || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("instrument=%v: got %v, want the guest's trap once table.grow failed", instrument, err)
		}
		// 200,000 elements are 1.6 MB; growing by appends allocates a
		// few times that in total.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Fatalf("instrument=%v: the call allocated %d MiB", instrument, grew>>20)
		}
	}
	// Declared minimums over the cap are refused at load.
	big := tableGrower()
	i := strings.Index(string(big), "\x04\x04\x01\x70\x00\x01")
	big = append(append(append([]byte{}, big[:i]...), wasmSection(4, 1, 0x70, 0, 0x80, 0x80, 0x10)...), big[i+6:]...) // min 262144
	_, err := newEngine(t, Limits{}).Load(context.Background(), "big", big, Policy{Limits: Limits{TableElements: 200_000}})
	if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "refused: over a structural limit: its tables declare at least 262144 elements; the limit is 200000 (limit table_elements)") {
		t.Fatalf("got %v, want the table refusal", err)
	}
}

// A module past a structural cap is refused before wazero compiles it:
// 20,000 nested loops would take wazero minutes.
func TestLoadRefusesDeepNesting(t *testing.T) {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, wasmSection(1, 1, 0x60, 0, 0)...)
	m = append(m, wasmSection(3, 1, 0)...)
	body := []byte{0}
	for range 20_000 {
		body = append(body, 0x03, 0x40)
	}
	for range 20_001 {
		body = append(body, 0x0B)
	}
	m = append(m, wasmSection(10, append(append([]byte{1}, appendU32(nil, uint32(len(body)))...), body...)...)...)
	_, err := newEngine(t, Limits{}).Load(context.Background(), "deep", m, Policy{})
	if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "does not compile: section 10: function body 0: over a structural limit: loops nested deeper than 1000 (checked before compiling)") {
		t.Fatalf("got %v, want the nesting refusal", err)
	}
}

// BenchmarkPrepare is the structural check and table clamp a load adds
// before compiling, on the probe (a Go guest of a few MB):
//
//	go test ./host -run '^$' -bench Prepare -benchmem
func BenchmarkPrepare(b *testing.B) {
	b.SetBytes(int64(len(probeWasm)))
	for b.Loop() {
		if _, _, err := prepare(probeWasm, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

// A real Go guest (the probe, built by the Go toolchain) fits the
// structural caps and the default table cap with room to spare. Go's wasm
// port nests a block per call site of a function, and puts every
// function in its table, so Go guests are the tightest fit; the figures
// are logged for docs/design/module-limits.md:
//
//	go test ./host -run TestGoGuestFitsTheCaps -v
func TestGoGuestFitsTheCaps(t *testing.T) {
	info, err := wasmrewrite.Check(probeWasm, wasmrewrite.DefaultCaps())
	if err != nil {
		t.Fatal(err)
	}
	var table uint64
	for _, l := range info.Tables {
		table += l.Min
	}
	caps := wasmrewrite.DefaultCaps()
	t.Logf("probe: %d bytes, %d functions, %d types, %d imports, table %d elements, max nesting %d, max loop nesting %d, nesting work %d, loop work %d",
		len(probeWasm), info.Functions, info.Types, len(info.Imports), table, info.MaxNesting, info.MaxLoopNesting, info.NestingWork, info.LoopWork)
	t.Logf("probe: code %d bytes, max locals %d, %d data segments of %d bytes, %d element segments",
		info.CodeBytes, info.MaxLocals, info.DataSegments, info.DataBytes, info.ElemSegments)
	const margin = 8
	// Go's linker writes a data segment per symbol: 41,000 for this 3.9 MB
	// probe; the cap (V8's) admits Go guests to about 9 MB of wasm before
	// data segments bind.
	if info.DataSegments*2 > caps.DataSegments {
		t.Fatalf("the probe has %d data segments, within 2x of the cap %d", info.DataSegments, caps.DataSegments)
	}
	switch {
	case uint64(info.Functions)*margin > uint64(caps.Functions),
		uint64(info.Types)*margin > uint64(caps.Types),
		uint64(len(info.Imports))*margin > uint64(caps.Imports),
		info.CodeBytes*margin > uint64(caps.CodeBytes),
		info.MaxLocals*margin > uint64(caps.Locals),
		info.DataBytes*margin > uint64(caps.DataBytes),
		uint64(info.ElemSegments)*margin > uint64(caps.ElemSegments),
		table*margin > DefaultLimits().TableElements,
		info.MaxNesting*margin > caps.Nesting,
		info.MaxLoopNesting*margin > caps.LoopNesting,
		info.NestingWork*margin > caps.NestingWork,
		info.LoopWork*margin > caps.LoopWork:
		t.Fatalf("the probe is within %dx of a cap: %+v, table %d, caps %+v", margin, info, table, caps)
	}
}
