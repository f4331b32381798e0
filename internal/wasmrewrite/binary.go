package wasmrewrite

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by every error of this package: the input is
// not a WebAssembly 1.0 binary this package understands (malformed, or
// using an encoding outside the proposals wazero implements).
var ErrUnsupported = errors.New("module not understood")

// Header is the preamble of a WebAssembly 1.0 binary: magic and version.
const Header = "\x00asm\x01\x00\x00\x00"

// Section ids of the binary format.
const (
	SecCustom    byte = 0
	SecType      byte = 1
	SecImport    byte = 2
	SecFunction  byte = 3
	SecTable     byte = 4
	SecMemory    byte = 5
	SecGlobal    byte = 6
	SecExport    byte = 7
	SecStart     byte = 8
	SecElement   byte = 9
	SecCode      byte = 10
	SecData      byte = 11
	SecDataCount byte = 12
	SecTag       byte = 13
)

// rank orders the non-custom sections as the binary format requires; the
// tag section (13) sits between memory and global, data count (12) before
// code.
var rank = [14]int{SecType: 1, SecImport: 2, SecFunction: 3, SecTable: 4, SecMemory: 5, SecTag: 6,
	SecGlobal: 7, SecExport: 8, SecStart: 9, SecElement: 10, SecDataCount: 11, SecCode: 12, SecData: 13}

// before reports whether a section of id a comes before one of id b in a
// module (custom sections are placed anywhere and rank nowhere).
func before(a, b byte) bool {
	return a < byte(len(rank)) && b < byte(len(rank)) && rank[a] < rank[b]
}

// Section is one section of a module; Body aliases the module's bytes.
type Section struct {
	ID   byte
	Body []byte
}

// Sections splits a module into its sections, checking only the header and
// the section framing.
func Sections(wasm []byte) ([]Section, error) {
	if len(wasm) < len(Header) || string(wasm[:len(Header)]) != Header {
		return nil, fmt.Errorf("%w: not a WebAssembly 1.0 binary", ErrUnsupported)
	}
	var secs []Section
	r := &Reader{B: wasm, I: len(Header)}
	for !r.Done() {
		id := r.Byte()
		n := r.U32()
		body := r.Bytes(int(n))
		if r.Err != nil {
			return nil, r.Err
		}
		secs = append(secs, Section{id, body})
	}
	return secs, nil
}

// Encoder builds a module section by section.
type Encoder struct{ out []byte }

// NewEncoder starts a module of about size bytes with its header.
func NewEncoder(size int) *Encoder {
	return &Encoder{out: append(make([]byte, 0, size+64), Header...)}
}

// Section appends a section.
func (e *Encoder) Section(id byte, body []byte) {
	e.out = append(e.out, id)
	e.out = AppendU32(e.out, uint32(len(body)))
	e.out = append(e.out, body...)
}

// Bytes returns the module built so far.
func (e *Encoder) Bytes() []byte { return e.out }

// Reader decodes a WebAssembly binary from B at I; the first error sticks
// in Err (wrapping ErrUnsupported) and every read after it returns zero.
type Reader struct {
	B   []byte
	I   int
	Err error
}

// Done reports whether the reader is at the end or failed.
func (r *Reader) Done() bool { return r.Err != nil || r.I >= len(r.B) }

// Fail records an error at the current position (unless one is recorded).
func (r *Reader) Fail(what string) {
	if r.Err == nil {
		r.Err = fmt.Errorf("%w: %s at byte %d", ErrUnsupported, what, r.I)
	}
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.Err != nil || r.I >= len(r.B) {
		r.Fail("unexpected end")
		return 0
	}
	c := r.B[r.I]
	r.I++
	return c
}

// Bytes reads n bytes (aliasing B).
func (r *Reader) Bytes(n int) []byte {
	if r.Err != nil || n < 0 || n > len(r.B)-r.I {
		r.Fail("unexpected end")
		return nil
	}
	s := r.B[r.I : r.I+n]
	r.I += n
	return s
}

// LEB reads a LEB128 number of at most max bytes and returns its low 64
// bits (as unsigned).
func (r *Reader) LEB(max int) uint64 {
	var v uint64
	for k := 0; k < max; k++ {
		c := r.Byte()
		if r.Err != nil {
			return 0
		}
		v |= uint64(c&0x7F) << (7 * k)
		if c&0x80 == 0 {
			return v
		}
	}
	r.Fail("LEB128 too long")
	return 0
}

// U32 reads an unsigned LEB128 u32.
func (r *Reader) U32() uint32 { return uint32(r.LEB(5)) }

// Name reads a length-prefixed name.
func (r *Reader) Name() string { return string(r.Bytes(int(r.U32()))) }

// Limits reads the limits of a table or memory type.
func (r *Reader) Limits() Limits {
	var l Limits
	flags := r.Byte()
	l.Min = r.LEB(10)
	if flags&1 != 0 {
		l.Max, l.HasMax = r.LEB(10), true
	}
	if flags&^3 != 0 { // bit 1: shared memory (threads)
		r.Fail(fmt.Sprintf("limits flags 0x%02x", flags))
	}
	l.Shared = flags&2 != 0
	return l
}

// MemArg reads a load or store's memory argument.
func (r *Reader) MemArg() {
	if align := r.U32(); align&0x40 != 0 { // multi-memory: not in wazero
		r.Fail("multi-memory memarg")
	}
	r.LEB(10)
}

// BlockType reads a block type: empty, a value type or a type index.
func (r *Reader) BlockType() {
	if r.Err != nil || r.I >= len(r.B) {
		r.Fail("unexpected end")
		return
	}
	switch r.B[r.I] {
	case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		r.I++
	default:
		r.LEB(5) // a type index (s33)
	}
}

// Limits are the size bounds of a table (in elements) or memory (in
// pages).
type Limits struct {
	Min, Max uint64
	HasMax   bool
	Shared   bool
}

// AppendLimits appends l as encoded in a table or memory type.
func AppendLimits(b []byte, l Limits) []byte {
	var flags byte
	if l.HasMax {
		flags |= 1
	}
	if l.Shared {
		flags |= 2
	}
	b = AppendU64(append(b, flags), l.Min)
	if l.HasMax {
		b = AppendU64(b, l.Max)
	}
	return b
}

// AppendU32 appends v as unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte { return AppendU64(b, uint64(v)) }

// AppendU64 appends v as unsigned LEB128.
func AppendU64(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendS32 appends v as signed LEB128 (the same bytes as AppendS64 of
// the same value).
func AppendS32(b []byte, v int32) []byte { return AppendS64(b, int64(v)) }

// AppendName appends s as a length-prefixed name.
func AppendName(b []byte, s string) []byte {
	b = AppendU32(b, uint32(len(s)))
	return append(b, s...)
}
