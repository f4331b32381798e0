package wasmrewrite

// ClampTables bounds the tables a module defines to limit elements
// together. It refuses a module whose tables' declared minimums exceed the
// limit (an error wrapping ErrOverCap), and otherwise rewrites the table
// section so that each table's maximum is at most its minimum plus what
// the limit leaves (declared maximums first, then the tables without
// one, the first first): table.grow past it then fails
// (returns -1) as the core specification allows, and the engine never
// allocates more. A module whose tables already fit is returned as it is.
// Imported tables are not counted (the host refuses them).
func ClampTables(wasm []byte, limit uint64) ([]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	for k, s := range secs {
		if s.ID != SecTable {
			continue
		}
		r := &Reader{B: s.Body}
		n, err := vec(r, "tables")
		if err != nil {
			return nil, err
		}
		types := make([]byte, n)
		lims := make([]Limits, n)
		var sum uint64
		for i := range lims {
			types[i] = r.Byte()
			lims[i] = r.Limits()
			if sum += lims[i].Min; sum < lims[i].Min {
				sum = ^uint64(0) // saturate
			}
		}
		if r.Err == nil && !r.Done() {
			r.Fail("trailing bytes in the table section")
		}
		if r.Err != nil {
			return nil, r.Err
		}
		if sum > limit {
			return nil, overCap("TableElements", "its tables declare at least %d elements; the limit is %d", sum, limit)
		}
		// Declared maximums first, in order, then the tables without one
		// share what is left, the first first.
		room, changed := limit-sum, false
		for _, bounded := range []bool{true, false} {
			for i := range lims {
				l := &lims[i]
				if l.HasMax != bounded || (l.HasMax && l.Max < l.Min) {
					continue // l.Max < l.Min: invalid, left to wazero
				}
				if allowed := l.Min + room; !l.HasMax || l.Max > allowed {
					l.Max, l.HasMax, changed = allowed, true, true
				}
				room -= l.Max - l.Min
			}
		}
		if !changed {
			return wasm, nil
		}
		body := AppendU32(nil, n)
		for i := range lims {
			body = AppendLimits(append(body, types[i]), lims[i])
		}
		enc := NewEncoder(len(wasm) + 16)
		for j, t := range secs {
			if j == k {
				enc.Section(SecTable, body)
			} else {
				enc.Section(t.ID, t.Body)
			}
		}
		return enc.Bytes(), nil
	}
	return wasm, nil
}

// TableElementBytes is what one table element costs the host (wazero
// keeps a table as a slice of uintptr), for budgets.
const TableElementBytes = 8
