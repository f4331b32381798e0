package wasmrewrite

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRefuses(t *testing.T) {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
	}
	small := DefaultCaps()
	small.Functions, small.Locals, small.DataBytes, small.ElemEntries = 1, 10, 4, 3
	tinyCode := DefaultCaps()
	tinyCode.CodeBytes = 3
	typed := append([]byte(Header), sec(SecType, 1, 0x60, 0, 0)...) // one type, () -> ()
	cases := []struct {
		name string
		wasm []byte
		caps Caps
		err  error
		msg  string
	}{
		{"blocks too deep", nestedModule(10_000, 0x02), DefaultCaps(), ErrOverCap, "blocks nested deeper than 10000"},
		{"loops too deep", nestedModule(1_001, 0x03), DefaultCaps(), ErrOverCap, "loops nested deeper than 1000"},
		{"tables declared beyond the bytes", append([]byte(Header), sec(SecTable, 0x98, 0x98, 0x98, 0x98, 0x04)...), DefaultCaps(), ErrUnsupported, "tables declared in 0 bytes"},
		{"too many functions", append(typed, sec(SecFunction, 2, 0, 0)...), small, ErrOverCap, "2 functions; the limit is 1"},
		{"too many locals", append(append(typed, sec(SecFunction, 1, 0)...), sec(SecCode, 1, 4, 1, 11, 0x7F, 0x0B)...), small, ErrOverCap, "more than 10 locals"},
		{"locals summing past the cap", append(append(typed, sec(SecFunction, 1, 0)...), sec(SecCode, 1, 6, 2, 6, 0x7F, 6, 0x7F, 0x0B)...), small, ErrOverCap, "more than 10 locals"},
		{"code section too large", append(append(typed, sec(SecFunction, 1, 0)...), sec(SecCode, 1, 2, 0, 0x0B)...), tinyCode, ErrOverCap, "the code section is 4 bytes; the limit is 3"},
		{"element entries past the cap", append([]byte(Header), sec(SecElement, 2, 1, 0, 2, 0, 0, 1, 0, 2, 0, 0)...), small, ErrOverCap, "element segments of more than 3 entries together"},
		{"data past the cap", append([]byte(Header), sec(SecData, 2, 1, 3, 'a', 'b', 'c', 1, 2, 'd', 'e')...), small, ErrOverCap, "data segments of more than 4 bytes together"},
		{"unbalanced body", append(append(typed, sec(SecFunction, 1, 0)...), sec(SecCode, 1, 2, 0, 0x01)...), DefaultCaps(), ErrUnsupported, "ends inside a block"},
		{"sections out of order", append(append([]byte(Header), sec(SecFunction, 0)...), sec(SecType, 0)...), DefaultCaps(), ErrUnsupported, "out of order"},
		{"a function naming no type", append(typed, sec(SecFunction, 1, 1)...), DefaultCaps(), ErrUnsupported, "a function names type 1; the module has 1 types"},
		{"an import naming no type", append(typed, sec(SecImport, append(append(AppendName(AppendName([]byte{1}, "wasi_snapshot_preview1"), "proc_exit"), 0), 5)...)...), DefaultCaps(), ErrUnsupported, "an imported function names type 5"},
		{"name section counts", append([]byte(Header), sec(SecCustom, append(AppendName(nil, "name"), 1, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F)...)...), DefaultCaps(), ErrUnsupported, "function names declared"},
	}
	for _, c := range cases {
		_, err := Check(c.wasm, c.caps)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v mentioning %q", c.name, err, c.err, c.msg)
		}
		var over *OverCapError
		if errors.Is(err, ErrOverCap) && (!errors.As(err, &over) || over.Cap == "") {
			t.Errorf("%s: %v does not name its cap", c.name, err)
		}
	}
	for i, m := range [][]byte{spinModule(), globalsModule(), nestedModule(9_999, 0x02), nestedModule(1_000, 0x03)} {
		if _, err := Check(m, DefaultCaps()); err != nil {
			t.Errorf("module %d: %v", i, err)
		}
	}
}

// A passive segment's entries are built at every instantiation, in Go:
// a 10 MB module of 10 M entries cost 7.5 s and 861 MB per call. The
// default cap admits a million entries, the largest default table.
func TestCheckElemEntries(t *testing.T) {
	passive := func(n uint32) []byte {
		return append(AppendU32([]byte{1, 0}, n), make([]byte, n)...)
	}
	caps := DefaultCaps()
	for _, c := range []struct {
		segs [][]byte
		ok   bool
	}{
		{[][]byte{passive(caps.ElemEntries)}, true},
		{[][]byte{passive(caps.ElemEntries / 2), passive(caps.ElemEntries/2 + 1)}, false},
		{[][]byte{passive(10 * caps.ElemEntries)}, false},
	} {
		wasm := tableModule{funcs: 1, tables: []tableType{{0x70, 1}}, elems: c.segs}.encode()
		_, err := Check(wasm, caps)
		var over *OverCapError
		if c.ok && err != nil || !c.ok && (!errors.As(err, &over) || over.Cap != "ElemEntries") {
			t.Errorf("%d bytes, %d segments: got %v, want refused %v", len(wasm), len(c.segs), err, !c.ok)
		}
	}
}
