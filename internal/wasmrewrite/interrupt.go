package wasmrewrite

import "fmt"

// Instrument makes a module stoppable at its deadline (used by the host
// when its Config.InstrumentLoops is set).
//
// A guest must stop when its call's deadline passes or its call is
// canceled, even in a loop that never calls the host. wazero's own way,
// WithCloseOnContextDone, calls out of the compiled code into Go at every
// loop iteration, which made a small C tool's call several times slower
// (wazero issue 2466). Instead, the host has each module rewritten once,
// after wazero validated it and before compiling the result: Instrument
// adds two mutable i32 globals, exports the first as InterruptExport, and
// makes every loop header read it and trap (unreachable) when it is not
// zero. A call sets the global when its context ends; the check is a load
// and a branch in the compiled code. The second global counts loop
// iterations down to the next yield (see YieldEvery).
//
// The stop flag can be set only once instantiation has returned the
// instance, so no guest code may run before: a start function that spins
// would never stop. Instrument removes the start section and exports its
// function as StartExport instead; whoever instantiates the module calls
// that export first (the host does, with the flag armed), before anything
// else runs in the instance, as the start section would have.
//
// A module Instrument does not understand (an opcode outside the proposals
// wazero implements, an export already named InterruptExport) is refused
// with an error wrapping ErrUnsupported.
func Instrument(wasm []byte) ([]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	var importedGlobals, definedGlobals uint32
	hasGlobal, hasExport, hasMemory := false, false, false
	start := int64(-1)
	for _, s := range secs {
		switch s.ID {
		case SecStart:
			sr := &Reader{B: s.Body}
			if start = int64(sr.U32()); sr.Err != nil {
				return nil, sr.Err
			}
		case SecImport:
			imps, err := readImports(s.Body)
			if err != nil {
				return nil, err
			}
			for _, im := range imps {
				switch im.Kind {
				case ImportGlobal:
					importedGlobals++
				case ImportMemory:
					hasMemory = true
				}
			}
		case SecMemory:
			sr := &Reader{B: s.Body}
			hasMemory = hasMemory || sr.U32() > 0
		case SecGlobal:
			hasGlobal = true
			sr := &Reader{B: s.Body}
			definedGlobals = sr.U32()
			if sr.Err != nil {
				return nil, sr.Err
			}
		case SecExport:
			hasExport = true
		}
	}
	if !hasMemory {
		// The yield (memory.grow 0) needs a memory.
		return nil, fmt.Errorf("%w: it has no memory", ErrUnsupported)
	}
	idx := importedGlobals + definedGlobals // the stop flag; idx+1 is the budget
	check := loopCheck(idx)

	enc := NewEncoder(len(wasm) + len(wasm)/8)
	// Two i32 mutable globals: the stop flag (0) and the yield budget.
	ourGlobal := []byte{0x7F, 0x01, 0x41, 0x00, 0x0B, 0x7F, 0x01, 0x41}
	ourGlobal = AppendS32(ourGlobal, YieldEvery)
	ourGlobal = append(ourGlobal, 0x0B)
	ourExport := AppendName(nil, InterruptExport)
	ourExport = append(ourExport, 0x03)
	ourExport = AppendU32(ourExport, idx)
	exports := uint32(1)
	if start >= 0 {
		ourExport = append(AppendName(ourExport, StartExport), 0x00)
		ourExport = AppendU32(ourExport, uint32(start))
		exports++
	}
	// The sections Instrument adds go after the last known section, before
	// any custom sections that end the module, so that every section keeps
	// its neighbours (a decoder that reads a trailing custom section to the
	// module's end reads it as it did).
	lastKnown := -1
	for i, s := range secs {
		if s.ID != SecCustom {
			lastKnown = i
		}
	}
	for i, s := range secs {
		if s.ID != SecCustom {
			if !hasGlobal && before(SecGlobal, s.ID) {
				enc.Section(SecGlobal, append([]byte{2}, ourGlobal...))
				hasGlobal = true
			}
			if !hasExport && before(SecExport, s.ID) {
				enc.Section(SecExport, append(AppendU32(nil, exports), ourExport...))
				hasExport = true
			}
		}
		switch s.ID {
		case SecGlobal:
			sr := &Reader{B: s.Body}
			n := sr.U32()
			body := AppendU32(nil, n+2)
			body = append(body, s.Body[sr.I:]...)
			enc.Section(SecGlobal, append(body, ourGlobal...))
		case SecExport:
			body, err := addExport(s.Body, ourExport, exports, idx)
			if err != nil {
				return nil, err
			}
			enc.Section(SecExport, body)
		case SecStart:
			// Exported as StartExport.
		case SecCode:
			body, err := instrumentCode(s.Body, check, idx)
			if err != nil {
				return nil, err
			}
			enc.Section(SecCode, body)
		default:
			enc.Section(s.ID, s.Body)
		}
		if i == lastKnown {
			if !hasGlobal {
				enc.Section(SecGlobal, append([]byte{2}, ourGlobal...))
				hasGlobal = true
			}
			if !hasExport {
				enc.Section(SecExport, append(AppendU32(nil, exports), ourExport...))
				hasExport = true
			}
		}
	}
	if !hasGlobal {
		enc.Section(SecGlobal, append([]byte{2}, ourGlobal...))
	}
	if !hasExport {
		enc.Section(SecExport, append(AppendU32(nil, exports), ourExport...))
	}
	return enc.Bytes(), nil
}

// InterruptExport is the name of the global Instrument adds: setting it to
// a non-zero value makes the instance trap at its next loop header.
const InterruptExport = "wasmcp.interrupt"

// StartExport is the name under which Instrument exports the module's
// start function, in place of its start section.
const StartExport = "wasmcp.start"

// YieldEvery is how many loop iterations run between two exits of the
// compiled code into Go (memory.grow 0). The Go runtime cannot preempt
// compiled WebAssembly: without these exits a guest spinning in a loop
// would hold its thread through a garbage collection's stop-the-world, and
// so stop every goroutine of the server, including the one that would set
// its stop flag. One exit costs about as much as a hundred iterations of
// a small loop; every 16384 iterations it is noise.
const YieldEvery = 1 << 14

// loopCheck is the code inserted at every loop header, with stop the
// index of the stop flag and stop+1 that of the budget:
//
//	global.get stop; if; unreachable; end
//	budget = budget - 1
//	if budget == 0 { drop(memory.grow 0); budget = YieldEvery }
func loopCheck(stop uint32) []byte {
	budget := stop + 1
	b := append(AppendU32([]byte{0x23}, stop), 0x04, 0x40, 0x00, 0x0B)
	b = AppendU32(append(AppendU32(append(b, 0x23), budget), 0x41, 0x01, 0x6B, 0x24), budget)
	b = append(AppendU32(append(b, 0x23), budget), 0x45, 0x04, 0x40)
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1A, 0x41)
	b = AppendS32(b, YieldEvery)
	b = append(AppendU32(append(b, 0x24), budget), 0x0B)
	return b
}

// addExport appends k export entries, refusing a module that already has
// an export of the names Instrument adds, or exports a global it does not
// have (one of globals or more: the rewrite would make it the stop flag).
func addExport(b, entries []byte, k, globals uint32) ([]byte, error) {
	r := &Reader{B: b}
	n := r.U32()
	start := r.I
	for i := uint32(0); i < n && r.Err == nil; i++ {
		if name := r.Name(); name == InterruptExport || name == StartExport {
			return nil, fmt.Errorf("%w: it exports %s itself", ErrUnsupported, name)
		}
		if kind, idx := r.Byte(), r.U32(); kind == ImportGlobal && idx >= globals && r.Err == nil {
			return nil, fmt.Errorf("%w: it exports global %d, which it does not have", ErrUnsupported, idx)
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	out := AppendU32(nil, n+k)
	out = append(out, b[start:]...)
	return append(out, entries...), nil
}

// instrumentCode rewrites a code section, inserting check after the block
// type of every loop instruction.
func instrumentCode(b, check []byte, globals uint32) ([]byte, error) {
	r := &Reader{B: b}
	n := r.U32()
	out := AppendU32(make([]byte, 0, len(b)+len(b)/8), n)
	var body []byte
	for i := uint32(0); i < n; i++ {
		size := r.U32()
		fn := r.Bytes(int(size))
		if r.Err != nil {
			return nil, r.Err
		}
		var err error
		if body, err = instrumentBody(body[:0], fn, check, globals); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if !r.Done() {
		return nil, fmt.Errorf("%w: trailing bytes in the code section", ErrUnsupported)
	}
	return out, nil
}

// instrumentBody rewrites one function body. globals is the number of
// globals the module has (imported and defined): an instruction naming
// any other global makes the module invalid — and, were it instrumented,
// would name the stop flag or the budget and could clear them — so it is
// refused.
func instrumentBody(out, fn, check []byte, globals uint32) ([]byte, error) {
	r := &Reader{B: fn}
	r.Locals()
	if r.Err != nil {
		return nil, r.Err
	}
	copied := 0
	for !r.Done() {
		op, idx := r.Instr()
		if r.Err != nil {
			return nil, r.Err
		}
		switch op {
		case 0x03: // loop bt
			out = append(out, fn[copied:r.I]...)
			out = append(out, check...)
			copied = r.I
		case 0x23, 0x24: // global.get, global.set
			if idx >= globals {
				return nil, fmt.Errorf("%w: it names global %d, which it does not have", ErrUnsupported, idx)
			}
		}
	}
	return append(out, fn[copied:]...), nil
}
