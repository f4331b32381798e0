package wasmrewrite

import (
	"errors"
	"testing"
)

func TestClampTables(t *testing.T) {
	table := func(entries ...byte) []byte {
		return append([]byte(Header), append([]byte{SecTable, byte(len(entries))}, entries...)...)
	}
	limitsOf := func(wasm []byte) []Limits {
		info, err := Check(wasm, DefaultCaps())
		if err != nil {
			t.Fatal(err)
		}
		return info.Tables
	}
	// Two tables: min 10 unbounded, min 5 max 8; cap 100: the first gets
	// what the second does not reserve: max 10+(100-15-3).
	out, err := ClampTables(table(2, 0x70, 0, 10, 0x70, 1, 5, 8), 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(out); got[0] != (Limits{Min: 10, Max: 92, HasMax: true}) || got[1] != (Limits{Min: 5, Max: 8, HasMax: true}) {
		t.Fatalf("got %+v", got)
	}
	// Within the cap already: the same bytes.
	in := table(1, 0x70, 1, 1, 4)
	if out, err := ClampTables(in, 100); err != nil || &out[0] != &in[0] {
		t.Fatalf("rewrote a module whose tables fit: %v", err)
	}
	// Minimums over the cap.
	if _, err := ClampTables(table(2, 0x70, 0, 60, 0x6F, 0, 60), 100); !errors.Is(err, ErrOverCap) {
		t.Fatalf("got %v, want ErrOverCap", err)
	}
}
