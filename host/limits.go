package host

import (
	"fmt"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// Limits bound what one call of a module may use. A zero field means the
// default from DefaultLimits().
type Limits struct {
	// MemoryBytes caps the linear memory of an instance (rounded down to
	// 64 KiB pages).
	MemoryBytes uint64
	// Timeout is the wall-clock deadline of one call, from instantiation to
	// the guest's answer.
	Timeout time.Duration
	// OutputBytes caps the bytes a guest may write to stdout and stderr
	// together during one call.
	OutputBytes int64
	// LineBytes caps one line (one message) on the guest's stdout.
	LineBytes int
	// TableElements caps the elements of the tables a module defines,
	// together: their declared minimums at load, table.grow at run time
	// (wasmrewrite.ClampTables). Every element is 8 bytes of host memory
	// outside MemoryBytes.
	TableElements uint64
	// Structure bounds the module's shape at load.
	Structure Structure
}

// Structure bounds a module's shape. It is checked at load, before wazero
// decodes or compiles the module (wazero's decoder allocates what a module
// declares, and compiling costs time and memory that grow with the
// module: a million functions took 13 s and 590 MB); a module over one is
// refused, naming the policy key. A zero field means the default from
// DefaultLimits().
type Structure struct {
	Functions    uint32 // imported and defined functions (policy max_functions)
	Types        uint32 // function types (max_types)
	Imports      uint32 // imports (max_imports)
	Locals       uint32 // declared locals of one function (max_locals)
	CodeBytes    uint32 // the code section, every function body together (max_code)
	DataSegments uint32 // data segments (max_data_segments)
	DataBytes    uint32 // the bytes of all data segments together (max_data)
	ElemSegments uint32 // element segments (max_elem_segments)
}

// defaultStructure is the part of wasmrewrite.DefaultCaps a policy may
// change.
func defaultStructure() Structure {
	c := wasmrewrite.DefaultCaps()
	return Structure{Functions: c.Functions, Types: c.Types, Imports: c.Imports, Locals: c.Locals,
		CodeBytes: c.CodeBytes, DataSegments: c.DataSegments, DataBytes: c.DataBytes, ElemSegments: c.ElemSegments}
}

// withDefaults returns s with every zero field taken from d.
func (s Structure) withDefaults(d Structure) Structure {
	for _, f := range []struct{ v, d *uint32 }{
		{&s.Functions, &d.Functions}, {&s.Types, &d.Types}, {&s.Imports, &d.Imports}, {&s.Locals, &d.Locals},
		{&s.CodeBytes, &d.CodeBytes}, {&s.DataSegments, &d.DataSegments}, {&s.DataBytes, &d.DataBytes}, {&s.ElemSegments, &d.ElemSegments},
	} {
		if *f.v == 0 {
			*f.v = *f.d
		}
	}
	return s
}

// caps are the structural caps of a module under s: the host's defaults
// with s's fields.
func (s Structure) caps() wasmrewrite.Caps {
	c := wasmrewrite.DefaultCaps()
	c.Functions, c.Types, c.Imports, c.Locals = s.Functions, s.Types, s.Imports, s.Locals
	c.CodeBytes, c.DataSegments, c.DataBytes, c.ElemSegments = s.CodeBytes, s.DataSegments, s.DataBytes, s.ElemSegments
	return c
}

// structureKeys are the policy keys of the caps a policy may change, by
// wasmrewrite.Caps field name.
var structureKeys = map[string]string{
	"Functions": "max_functions", "Types": "max_types", "Imports": "max_imports", "Locals": "max_locals",
	"CodeBytes": "max_code", "DataSegments": "max_data_segments", "DataBytes": "max_data", "ElemSegments": "max_elem_segments",
}

// DefaultLimits returns the limits of a module without a policy.
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes: 256 << 20,
		Timeout:     60 * time.Second,
		OutputBytes: 16 << 20,
		LineBytes:   4 << 20,
		// A million elements (8 MiB) holds a function table for the
		// million functions wasmrewrite.DefaultCaps admits; Go's wasm
		// port puts every function in its table.
		TableElements: 1_000_000,
		Structure:     defaultStructure(),
	}
}

// WithDefaults returns l with every zero field taken from d.
func (l Limits) WithDefaults(d Limits) Limits {
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.LineBytes == 0 {
		l.LineBytes = d.LineBytes
	}
	if l.TableElements == 0 {
		l.TableElements = d.TableElements
	}
	l.Structure = l.Structure.withDefaults(d.Structure)
	return l
}

func (l Limits) memoryPages() uint32 {
	p := l.MemoryBytes / 65536
	if p < 1 {
		p = 1
	}
	if p > 65536 {
		p = 65536
	}
	return uint32(p)
}

// String formats the limits for logs and `wasmcp inspect`.
func (l Limits) String() string {
	return fmt.Sprintf("memory=%s timeout=%s output=%s line=%s table_elements=%d",
		FormatBytes(int64(l.MemoryBytes)), l.Timeout, FormatBytes(l.OutputBytes), FormatBytes(int64(l.LineBytes)), l.TableElements)
}

// FormatBytes renders n in the largest binary unit that divides it evenly.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
