package wasmrewrite

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// TestSplitSharesCodeAndKeepsState: two snapshots of one module with
// different states split into byte-identical code, and an instance of that
// code given a state (memory grown, segments written, globals set) holds
// what an instance of its snapshot holds.
func TestSplitSharesCodeAndKeepsState(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	orig := initModule()
	snapOf := func(fill byte, g1 uint64, pages int) []byte {
		mem := make([]byte, pages*65536)
		copy(mem[16:], "hi")
		mem[100], mem[70000], mem[3000] = 9, 0x2A, fill
		snap, err := Snapshot(orig, Image{Memory: mem, Drop: []string{"_initialize"},
			Globals: map[uint32]uint64{1: g1, 2: 1 << 40, 3: uint64(api.EncodeF32(1.5)), 4: api.EncodeF64(-2.25)},
			Custom:  []Section{CustomSection("x.test", []byte{fill})}})
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	a, b := snapOf(1, 7, 2), snapOf(2, 8, 3)
	codeA, stA, err := Split(a)
	if err != nil {
		t.Fatal(err)
	}
	codeB, stB, err := Split(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(codeA, codeB) {
		t.Fatal("two snapshots of one module split into different code")
	}
	if stA.Pages != 2 || stB.Pages != 3 || len(stA.Globals) != 4 {
		t.Fatalf("states: %+v %+v", stA, stB)
	}
	code, err := r.CompileModule(ctx, codeA)
	if err != nil {
		t.Fatalf("the split code does not compile: %v", err)
	}
	for i, c := range []struct {
		snap []byte
		st   *State
	}{{a, stA}, {b, stB}} {
		inst, err := r.InstantiateModule(ctx, code, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		m := inst.Memory()
		if _, ok := m.Grow(c.st.Pages - m.Size()/65536); !ok {
			t.Fatal("grow")
		}
		for _, s := range c.st.Segments {
			m.Write(s.Offset, s.Bytes)
		}
		for _, g := range c.st.Globals {
			inst.ExportedGlobal(g.Export).(api.MutableGlobal).Set(g.Value)
		}
		// The snapshot itself, globals readable, for comparison.
		readable, _, err := ExportGlobals(c.snap)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := r.CompileModule(ctx, readable)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.InstantiateModule(ctx, sc, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		gm, _ := m.Read(0, m.Size())
		wm, _ := want.Memory().Read(0, want.Memory().Size())
		if !bytes.Equal(gm, wm) {
			t.Errorf("snapshot %d: memory differs from the snapshot's (%d and %d bytes)", i, len(gm), len(wm))
		}
		for _, g := range c.st.Globals {
			if got, w := inst.ExportedGlobal(g.Export).Get(), want.ExportedGlobal(g.Export).Get(); got != w {
				t.Errorf("snapshot %d: global %d = %#x, want %#x", i, g.Index, got, w)
			}
		}
		inst.Close(ctx)
		want.Close(ctx)
	}
}
