package wasmrewrite

import "fmt"

// The kinds of import (and export) in the binary format.
const (
	ImportFunc   byte = 0x00
	ImportTable  byte = 0x01
	ImportMemory byte = 0x02
	ImportGlobal byte = 0x03
	ImportTag    byte = 0x04
)

// Import is one entry of a module's import section.
type Import struct {
	Module, Name string
	Kind         byte
	// Type is a function import's type index.
	Type uint32
	// Limits are a table's or memory's.
	Limits Limits
}

// readImports decodes an import section.
func readImports(b []byte) ([]Import, error) {
	r := &Reader{B: b}
	n := r.U32()
	var out []Import
	for i := uint32(0); i < n && r.Err == nil; i++ {
		im := Import{Module: r.Name(), Name: r.Name(), Kind: r.Byte()}
		switch im.Kind {
		case ImportFunc:
			im.Type = r.U32()
		case ImportTable:
			r.Byte()
			im.Limits = r.Limits()
		case ImportMemory:
			im.Limits = r.Limits()
		case ImportGlobal:
			r.Byte()
			r.Byte()
		case ImportTag:
			r.Byte()
			im.Type = r.U32()
		default:
			return nil, fmt.Errorf("%w: unknown import kind 0x%02x", ErrUnsupported, im.Kind)
		}
		out = append(out, im)
	}
	return out, r.Err
}
