package wasmrewrite

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

func section(id byte, body ...byte) []byte {
	return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
}

// initModule has one memory of one page with a data segment ("hi" at 16),
// an immutable i32 global (5), mutable globals of each number type and an
// _initialize that writes memory and every mutable global:
//
//	mem[70000] = 0x2A (after growing the memory by one page)
//	g1 (i32) = -7, g2 (i64) = 1<<40, g3 (f32) = 1.5, g4 (f64) = -2.25
//
// and a start section that stores 9 at byte 100.
func initModule() []byte {
	w := []byte(Header)
	w = append(w, section(SecType, 1, 0x60, 0, 0)...)
	w = append(w, section(SecFunction, 2, 0, 0)...)
	w = append(w, section(SecMemory, 1, 0, 1)...)
	g := []byte{5, 0x7F, 0, 0x41, 5, 0x0B}
	g = append(g, 0x7F, 1, 0x41, 0, 0x0B)
	g = append(g, 0x7E, 1, 0x42, 0, 0x0B)
	g = append(g, 0x7D, 1, 0x43, 0, 0, 0, 0, 0x0B)
	g = append(g, 0x7C, 1, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B)
	w = append(w, section(SecGlobal, g...)...)
	exp := []byte{2}
	exp = append(AppendName(exp, "memory"), ImportMemory, 0)
	exp = append(AppendName(exp, "_initialize"), ImportFunc, 0)
	w = append(w, section(SecExport, exp...)...)
	w = append(w, section(SecStart, 1)...)
	init := []byte{0}
	init = append(init, 0x41, 1, 0x40, 0, 0x1A)                                 // memory.grow 1; drop
	init = append(AppendS32(append(init, 0x41), 70000), 0x41, 0x2A, 0x3A, 0, 0) // i32.store8
	init = append(AppendS32(append(init, 0x41), -7), 0x24, 1)
	init = append(AppendS64(append(init, 0x42), 1<<40), 0x24, 2)
	init = append(init, 0x43, 0, 0, 0xC0, 0x3F, 0x24, 3)                   // 1.5f
	init = append(init, 0x44, 0, 0, 0, 0, 0, 0, 0x02, 0xC0, 0x24, 4, 0x0B) // -2.25
	start := append(AppendS32([]byte{0, 0x41}, 100), 0x41, 9, 0x3A, 0, 0, 0x0B)
	code := []byte{2}
	code = append(append(AppendU32(code, uint32(len(init))), init...), AppendU32(nil, uint32(len(start)))...)
	code = append(code, start...)
	w = append(w, section(SecCode, code...)...)
	w = append(w, section(SecData, 1, 0, 0x41, 16, 0x0B, 2, 'h', 'i')...)
	return w
}

func TestSnapshotRecordsAndRestoresState(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	orig := initModule()
	probe, globals, err := ExportGlobals(orig)
	if err != nil {
		t.Fatal(err)
	}
	if len(globals) != 4 || globals[0].Index != 1 || globals[3].Type != 0x7C {
		t.Fatalf("globals: %+v", globals)
	}
	code, err := r.CompileModule(ctx, probe)
	if err != nil {
		t.Fatalf("the probe does not compile: %v", err)
	}
	mod, err := r.InstantiateModule(ctx, code, wazero.NewModuleConfig().WithName("probe"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.ExportedFunction("_initialize").Call(ctx); err != nil {
		t.Fatal(err)
	}
	img := Image{Globals: map[uint32]uint64{}, Drop: []string{"_initialize"},
		Custom: []Section{CustomSection("x.test", []byte{1, 2})}}
	for _, g := range globals {
		img.Globals[g.Index] = mod.ExportedGlobal(g.Export).Get()
	}
	mem, _ := mod.Memory().Read(0, mod.Memory().Size())
	img.Memory = bytes.Clone(mem)
	snap, err := Snapshot(orig, img)
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot with its globals exported, to read them back.
	readable, _, err := ExportGlobals(snap)
	if err != nil {
		t.Fatal(err)
	}
	code2, err := r.CompileModule(ctx, readable)
	if err != nil {
		t.Fatalf("the snapshot does not compile: %v", err)
	}
	if _, ok := code2.ExportedFunctions()["_initialize"]; ok {
		t.Fatal("the snapshot still exports _initialize")
	}
	inst, err := r.InstantiateModule(ctx, code2, wazero.NewModuleConfig().WithName("snap"))
	if err != nil {
		t.Fatal(err)
	}
	m := inst.Memory()
	if m.Size() != 2*65536 {
		t.Fatalf("memory of %d bytes, want two pages", m.Size())
	}
	got, _ := m.Read(0, m.Size())
	if !bytes.Equal(got, img.Memory) || got[100] != 9 || got[70000] != 0x2A || string(got[16:18]) != "hi" {
		t.Fatal("the snapshot's memory is not the image")
	}
	want := map[uint32]uint64{1: uint64(uint32(0xFFFFFFF9)), 2: 1 << 40, 3: uint64(api.EncodeF32(1.5)), 4: api.EncodeF64(-2.25)}
	for _, g := range globals {
		if v := inst.ExportedGlobal(g.Export).Get(); v != want[g.Index] {
			t.Errorf("global %d = %#x, want %#x", g.Index, v, want[g.Index])
		}
	}
	secs, _ := Sections(snap)
	for _, s := range secs {
		if s.ID == SecStart {
			t.Error("the snapshot keeps its start section")
		}
	}
	if !bytes.Contains(snap, []byte("x.test\x01\x02")) {
		t.Error("the custom section is missing")
	}
}

func TestSnapshotRefusals(t *testing.T) {
	base := initModule()
	cases := map[string][]byte{
		"no memory":  append([]byte(Header), section(SecType, 0)...),
		"data count": append(append([]byte{}, base...), section(SecDataCount, 1)...),
		"table.set": append([]byte(Header), append(section(SecType, 1, 0x60, 0, 0),
			append(section(SecFunction, 1, 0), append(section(SecMemory, 1, 0, 1),
				section(SecCode, 1, 8, 0, 0x41, 0, 0xD0, 0x70, 0x26, 0, 0x0B)...)...)...)...),
		"imported global": append([]byte(Header), append(section(SecImport, append(AppendName(AppendName([]byte{1}, "m"), "g"), 0x03, 0x7F, 1)...),
			section(SecMemory, 1, 0, 1)...)...),
	}
	for name, w := range cases {
		if _, _, err := ExportGlobals(w); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: got %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := Snapshot(base, Image{Memory: make([]byte, 100)}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a memory image of part of a page: %v", err)
	}
	if _, err := Snapshot(base, Image{Memory: make([]byte, 65536)}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no value for a mutable global: %v", err)
	}
}

func TestNonZeroRunsMerge(t *testing.T) {
	mem := make([]byte, 4096)
	mem[10], mem[11] = 1, 2
	mem[100] = 3  // 88 zeros after the first run: merged with gap 512
	mem[2000] = 4 // far: a run of its own
	mem[4095] = 5 // the last byte
	runs := nonZeroRuns(mem, 512, nil)
	if len(runs) != 3 || runs[0] != [2]int{10, 101} || runs[1] != [2]int{2000, 2001} || runs[2] != [2]int{4095, 4096} {
		t.Fatalf("runs %v", runs)
	}
	if runs := nonZeroRuns(make([]byte, 64), 512, nil); len(runs) != 0 {
		t.Fatalf("zero memory: %v", runs)
	}
}
