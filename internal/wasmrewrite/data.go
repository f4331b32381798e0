package wasmrewrite

import (
	"fmt"
	"sort"
)

// DataRanges lists the bytes of memory 0 that a module's active data
// segments write when it is instantiated: sorted, disjoint [start, end)
// ranges, adjacent ones merged. It reports ok false, with no error, when
// it cannot know them statically — a segment of another memory, or one
// whose offset is not an i32.const (a global.get) — and an error wrapping
// ErrUnsupported when the data section does not read. Passive segments
// write nothing at instantiation and are not listed.
func DataRanges(wasm []byte) (ranges [][2]uint64, ok bool, err error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, false, err
	}
	for _, s := range secs {
		if s.ID != SecData {
			continue
		}
		r := &Reader{B: s.Body}
		n := r.U32()
		for i := uint32(0); i < n && r.Err == nil; i++ {
			flags := r.U32()
			switch flags {
			case 1: // passive
				r.Bytes(int(r.U32()))
				continue
			case 0:
			case 2:
				if r.U32() != 0 {
					return nil, false, nil
				}
			default:
				r.Fail(fmt.Sprintf("data segment flags %d", flags))
				continue
			}
			if r.Byte() != 0x41 { // i32.const
				return nil, false, r.Err
			}
			off := uint64(uint32(r.sleb32()))
			if r.Byte() != 0x0B { // end
				return nil, false, r.Err
			}
			size := uint64(r.U32())
			r.Bytes(int(size))
			if size > 0 {
				ranges = append(ranges, [2]uint64{off, off + size})
			}
		}
		if r.Err != nil {
			return nil, false, r.Err
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i][0] < ranges[j][0] })
	merged := ranges[:0]
	for _, g := range ranges {
		if k := len(merged); k > 0 && g[0] <= merged[k-1][1] {
			merged[k-1][1] = max(merged[k-1][1], g[1])
			continue
		}
		merged = append(merged, g)
	}
	return merged, true, nil
}

// sleb32 reads a signed LEB128 of at most 5 bytes.
func (r *Reader) sleb32() int32 {
	var v int64
	var shift uint
	for i := 0; i < 5; i++ {
		b := r.Byte()
		if r.Err != nil {
			return 0
		}
		v |= int64(b&0x7F) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v)
		}
	}
	r.Fail("signed LEB128 longer than 5 bytes")
	return 0
}
