package host

import (
	"fmt"
	"time"
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
