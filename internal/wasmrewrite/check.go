package wasmrewrite

import (
	"errors"
	"fmt"
)

// Caps are structural limits a module must fit before a WebAssembly
// engine sees it. wazero's decoder allocates what a module declares (a
// count of tables, of locals, of bytes) before it reads what follows, and
// its compiler is superlinear in block nesting; Check refuses a module
// outside these caps in time linear in its size, allocating little.
type Caps struct {
	ModuleBytes  int    // the whole binary
	Types        uint32 // function types
	Params       uint32 // parameters (and, separately, results) of one type
	Imports      uint32
	Functions    uint32 // imported and defined
	Tables       uint32 // imported and defined
	Memories     uint32 // imported and defined
	Globals      uint32 // imported and defined
	Tags         uint32
	Exports      uint32
	ElemSegments uint32
	ElemEntries  uint32 // the entries of all element segments together
	DataSegments uint32
	DataBytes    uint32 // the bytes of all data segments together
	CodeBytes    uint32 // the code section: every function body together
	BodyBytes    uint32 // one function body
	Locals       uint32 // declared locals of one function
	Nesting      uint32 // block, loop and if nesting in one function
	LoopNesting  uint32 // loops nested in loops in one function
	// NestingWork bounds, over the whole module, the sum of the depths at
	// which blocks open, and LoopWork the sum of the loop depths at which
	// loops open: wazero's compile time grows with them (a straight nest
	// of depth d costs d²/2), so they bound many functions each nested
	// just under the per-function caps.
	NestingWork, LoopWork uint64
	BrTable               uint32 // targets of one br_table
}

// DefaultCaps are the caps the host uses. The counts and sizes are well
// below the limits browsers' engines publish (V8's wasm-limits.h, shared
// with SpiderMonkey and JavaScriptCore): those admit what a browser tab
// may compile once, while a host compiles every module of a directory
// and keeps its code; a module within them that is over these can still
// be admitted by its policy (host.Structure). They leave the largest
// real guests room: a Go guest, the densest toolchain output, has about
// 7,000 functions and 1,000 types per 4 MB (see TestGoGuestFitsTheCaps in
// package host). Tables and memories are far below the browsers' (the host
// runs one memory, and every table is memory the linear-memory cap does
// not see), and Nesting is chosen from wazero's compile time (see
// BenchmarkCompileNesting and docs/design/module-limits.md).
func DefaultCaps() Caps {
	return Caps{
		ModuleBytes:  256 << 20,
		Types:        100_000,
		Params:       1_000,
		Imports:      1_000,
		Functions:    100_000,
		Tables:       100,
		Memories:     1,
		Globals:      100_000,
		Tags:         1_000_000,
		Exports:      100_000,
		ElemSegments: 10_000,
		// wazero builds a function reference for every entry of a passive
		// segment at each instantiation, in Go, outside the deadline and
		// the memory budget: a 10 MB module of 10 M entries took 7.5 s
		// and 861 MB per call. A million fills the largest table the host
		// admits by default (host.Limits.TableElements).
		ElemEntries:  1_000_000,
		DataSegments: 100_000,
		DataBytes:    64 << 20,
		CodeBytes:    64 << 20,
		BodyBytes:    7_654_321,
		Locals:       50_000,
		Nesting:      10_000,
		LoopNesting:  1_000,
		NestingWork:  100_000_000,
		LoopWork:     5_000_000,
		BrTable:      65_520,
	}
}

// ErrOverCap is wrapped by Check's errors for a module that is well
// formed as far as Check read it but exceeds one of its Caps.
var ErrOverCap = errors.New("over a structural limit")

// Info is what Check learned of a module.
type Info struct {
	Imports []Import
	// Tables are the tables the module defines (not imports), in order.
	Tables []Limits
	// Functions counts imported and defined functions, Globals imported
	// and defined globals.
	Functions, Globals uint32
	// MaxNesting is the deepest block nesting of any function (its own
	// block included), MaxLoopNesting the deepest loop nesting, and
	// NestingWork and LoopWork the module's sums (see Caps).
	MaxNesting, MaxLoopNesting uint32
	NestingWork, LoopWork      uint64
	// Types, DataSegments and ElemSegments count what the module
	// declares; DataBytes and CodeBytes are the bytes of its data segments
	// and of its code section; MaxLocals is the most locals of a function.
	Types, DataSegments, ElemSegments uint32
	DataBytes, CodeBytes, MaxLocals   uint64
}

// Check reads a whole module and refuses it, with an error naming the
// part and the cap, when it is malformed (an error wrapping
// ErrUnsupported) or exceeds c (an error wrapping ErrOverCap). Every
// vector's declared length is checked against the bytes left, so no count
// a module declares can make its decoder allocate more than a small
// multiple of the module's size. Check does not validate types or
// indices: wazero does, once Check has passed the module.
func Check(wasm []byte, c Caps) (*Info, error) {
	if len(wasm) > c.ModuleBytes {
		return nil, overCap("ModuleBytes", "the module is %d bytes; the limit is %d", len(wasm), c.ModuleBytes)
	}
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	k := &checker{c: c, info: &Info{}}
	last := byte(0)
	for _, s := range secs {
		if s.ID != SecCustom {
			if s.ID >= byte(len(rank)) || rank[s.ID] == 0 {
				return nil, fmt.Errorf("%w: unknown section id %d", ErrUnsupported, s.ID)
			}
			if last != 0 && !before(last, s.ID) {
				return nil, fmt.Errorf("%w: section %d out of order or repeated", ErrUnsupported, s.ID)
			}
			last = s.ID
		}
		if err := k.section(s); err != nil {
			return nil, fmt.Errorf("section %d: %w", s.ID, err)
		}
	}
	return k.totals()
}

// checker is Check's state across sections: the caps, the Info so far,
// and the tables, memories and globals counted (imported ones included).
type checker struct {
	c                            Caps
	info                         *Info
	nTables, nMemories, nGlobals uint32
}

// section checks one section's body whole: its entries, the caps they
// count towards, and no bytes left over.
func (k *checker) section(s Section) error {
	r := &Reader{B: s.Body}
	var err error
	switch s.ID {
	case SecCustom:
		err = checkCustom(r)
	case SecType:
		err = checkTypes(r, k.c, k.info)
	case SecImport:
		err = k.imports(r)
	case SecFunction:
		err = k.functions(r)
	case SecTable:
		err = k.tables(r)
	case SecMemory:
		err = k.memories(r)
	case SecTag:
		err = checkCount(r, k.c.Tags, "Tags", "tags")
		for n := r.U32(); err == nil && n > 0 && r.Err == nil; n-- {
			r.Byte()
			r.U32()
		}
	case SecGlobal:
		err = k.globals(r)
	case SecExport:
		err = checkCount(r, k.c.Exports, "Exports", "exports")
		for n := r.U32(); err == nil && n > 0 && r.Err == nil; n-- {
			r.Name()
			r.Byte()
			r.U32()
		}
	case SecStart, SecDataCount:
		r.U32()
	case SecElement:
		err = checkElements(r, k.c, k.info)
	case SecCode:
		if len(s.Body) > int(k.c.CodeBytes) {
			return overCap("CodeBytes", "the code section is %d bytes; the limit is %d", len(s.Body), k.c.CodeBytes)
		}
		k.info.CodeBytes = uint64(len(s.Body))
		err = checkCode(r, k.c, k.info)
	case SecData:
		err = checkData(r, k.c, k.info)
	}
	if err == nil && r.Err == nil && !r.Done() {
		r.Fail("trailing bytes")
	}
	if err == nil {
		err = r.Err
	}
	return err
}

// imports reads the import section into info.Imports and counts the
// functions, tables, memories and globals it imports.
func (k *checker) imports(r *Reader) error {
	err := checkCount(r, k.c.Imports, "Imports", "imports")
	if err == nil {
		k.info.Imports, err = readImports(r.B)
		r.I = len(r.B)
	}
	for _, im := range k.info.Imports {
		switch im.Kind {
		case ImportFunc:
			if im.Type >= k.info.Types && err == nil {
				err = badTypeIndex("an imported function", im.Type, k.info.Types)
			}
			k.info.Functions++
		case ImportTable:
			k.nTables++
		case ImportMemory:
			k.nMemories++
		case ImportGlobal:
			k.nGlobals++
		}
	}
	return err
}

// functions reads the function section, counting its functions against
// the Functions cap.
func (k *checker) functions(r *Reader) error {
	n, err := vec(r, "functions")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n && r.Err == nil; i++ {
		if t := r.U32(); t >= k.info.Types && r.Err == nil {
			return badTypeIndex("a function", t, k.info.Types)
		}
	}
	k.info.Functions += n
	if k.info.Functions > k.c.Functions {
		return overCap("Functions", "%d functions; the limit is %d", k.info.Functions, k.c.Functions)
	}
	return nil
}

// badTypeIndex refuses a function whose type index names no type. wazero
// 1.12 checks the index only after validating the code that calls the
// function, and panics there (found by FuzzInstrument): the host must not
// hand it such a module at all.
func badTypeIndex(what string, t, types uint32) error {
	return fmt.Errorf("%w: %s names type %d; the module has %d types", ErrUnsupported, what, t, types)
}

// tables reads the table section: each table's limits into info.Tables.
func (k *checker) tables(r *Reader) error {
	n, err := vec(r, "tables")
	if err == nil {
		for i := uint32(0); i < n && r.Err == nil; i++ {
			r.Byte() // reference type
			k.info.Tables = append(k.info.Tables, r.Limits())
		}
	}
	k.nTables += n
	return err
}

// memories reads the memory section.
func (k *checker) memories(r *Reader) error {
	n, err := vec(r, "memories")
	if err == nil {
		for i := uint32(0); i < n && r.Err == nil; i++ {
			r.Limits()
		}
	}
	k.nMemories += n
	return err
}

// globals reads the global section: each global's type and initializer.
func (k *checker) globals(r *Reader) error {
	n, err := vec(r, "globals")
	if err == nil {
		for i := uint32(0); i < n && r.Err == nil; i++ {
			r.Byte()
			r.Byte()
			constExpr(r)
		}
	}
	k.nGlobals += n
	return err
}

// totals checks the counts summed over the sections against their caps
// and returns the Info.
func (k *checker) totals() (*Info, error) {
	c := k.c
	switch {
	case k.nTables > c.Tables:
		return nil, overCap("Tables", "%d tables; the limit is %d", k.nTables, c.Tables)
	case k.nMemories > c.Memories:
		return nil, overCap("Memories", "%d memories; the limit is %d", k.nMemories, c.Memories)
	case k.nGlobals > c.Globals:
		return nil, overCap("Globals", "%d globals; the limit is %d", k.nGlobals, c.Globals)
	}
	k.info.Globals = k.nGlobals
	if k.info.Functions > c.Functions {
		return nil, overCap("Functions", "%d functions; the limit is %d", k.info.Functions, c.Functions)
	}
	return k.info, nil
}

// OverCapError is Check's error for a module over one of its Caps. It
// wraps ErrOverCap.
type OverCapError struct {
	// Cap names the field of Caps the module exceeds ("Functions"), or
	// "TableElements" for ClampTables' limit.
	Cap string
	// Msg says by how much ("100001 functions; the limit is 100000").
	Msg string
}

func (e *OverCapError) Error() string { return ErrOverCap.Error() + ": " + e.Msg }

// Unwrap returns ErrOverCap.
func (e *OverCapError) Unwrap() error { return ErrOverCap }

func overCap(capName, format string, a ...any) error {
	return &OverCapError{Cap: capName, Msg: fmt.Sprintf(format, a...)}
}

// vec reads a vector's length, which must not exceed the bytes left (every
// element takes at least one byte).
func vec(r *Reader, what string) (uint32, error) {
	n := r.U32()
	if r.Err != nil {
		return 0, r.Err
	}
	if int64(n) > int64(len(r.B)-r.I) {
		return 0, fmt.Errorf("%w: %d %s declared in %d bytes", ErrUnsupported, n, what, len(r.B)-r.I)
	}
	return n, nil
}

// checkCount reads a vector's length and checks it against a cap, leaving
// the reader where it was.
func checkCount(r *Reader, cap uint32, capName, what string) error {
	at := r.I
	n, err := vec(r, what)
	if err == nil && n > cap {
		err = overCap(capName, "%d %s; the limit is %d", n, what, cap)
	}
	r.I = at
	return err
}

func checkTypes(r *Reader, c Caps, info *Info) error {
	n, err := vec(r, "types")
	if err != nil {
		return err
	}
	info.Types = n
	if n > c.Types {
		return overCap("Types", "%d types; the limit is %d", n, c.Types)
	}
	for i := uint32(0); i < n && r.Err == nil; i++ {
		if form := r.Byte(); form != 0x60 {
			r.Fail(fmt.Sprintf("type form 0x%02x", form))
			break
		}
		for _, what := range []string{"parameters", "results"} {
			k, err := vec(r, what)
			if err != nil {
				return err
			}
			if k > c.Params {
				return overCap("Params", "type %d has %d %s; the limit is %d", i, k, what, c.Params)
			}
			for ; k > 0; k-- {
				valType(r)
			}
		}
	}
	return nil
}

// valType reads a value type (a reference type's heap type included).
func valType(r *Reader) {
	switch t := r.Byte(); t {
	case 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
	default:
		r.Fail(fmt.Sprintf("value type 0x%02x", t))
	}
}

// constExpr reads a constant expression up to its end.
func constExpr(r *Reader) {
	for depth := 0; r.Err == nil; {
		switch op, _ := r.Instr(); op {
		case 0x02, 0x03, 0x04:
			depth++
		case 0x0B:
			if depth == 0 {
				return
			}
			depth--
		}
	}
}

func checkElements(r *Reader, c Caps, info *Info) error {
	n, err := vec(r, "element segments")
	if err != nil {
		return err
	}
	info.ElemSegments = n
	if n > c.ElemSegments {
		return overCap("ElemSegments", "%d element segments; the limit is %d", n, c.ElemSegments)
	}
	var entries uint64
	for i := uint32(0); i < n && r.Err == nil; i++ {
		flags := r.U32()
		if flags > 7 {
			r.Fail(fmt.Sprintf("element segment flags %d", flags))
			break
		}
		if flags&3 == 2 { // active with a table index
			r.U32()
		}
		if flags&1 == 0 { // active: offset
			constExpr(r)
		}
		if flags&3 != 0 { // elemkind or reftype
			r.Byte()
		}
		k, err := vec(r, "elements")
		if err != nil {
			return err
		}
		if entries += uint64(k); entries > uint64(c.ElemEntries) {
			return overCap("ElemEntries", "element segments of more than %d entries together", c.ElemEntries)
		}
		for ; k > 0 && r.Err == nil; k-- {
			if flags&4 == 0 {
				r.U32()
			} else {
				constExpr(r)
			}
		}
	}
	return nil
}

func checkData(r *Reader, c Caps, info *Info) error {
	n, err := vec(r, "data segments")
	if err != nil {
		return err
	}
	info.DataSegments = n
	if n > c.DataSegments {
		return overCap("DataSegments", "%d data segments; the limit is %d", n, c.DataSegments)
	}
	var total uint64
	for i := uint32(0); i < n && r.Err == nil; i++ {
		switch flags := r.U32(); flags {
		case 0:
			constExpr(r)
		case 1:
		case 2:
			r.U32()
			constExpr(r)
		default:
			r.Fail(fmt.Sprintf("data segment flags %d", flags))
		}
		size := r.U32()
		if total += uint64(size); total > uint64(c.DataBytes) {
			return overCap("DataBytes", "data segments of more than %d bytes together", c.DataBytes)
		}
		r.Bytes(int(size))
	}
	info.DataBytes = total
	return nil
}

func checkCode(r *Reader, c Caps, info *Info) error {
	n, err := vec(r, "function bodies")
	if err != nil {
		return err
	}
	var work, loops uint64
	var stack []bool
	for i := uint32(0); i < n && r.Err == nil; i++ {
		size := r.U32()
		if size > c.BodyBytes {
			return overCap("BodyBytes", "function body %d is %d bytes; the limit is %d", i, size, c.BodyBytes)
		}
		body := r.Bytes(int(size))
		if r.Err != nil {
			break
		}
		w, lw, err := checkBody(body, c, &stack, info)
		if err != nil {
			return fmt.Errorf("function body %d: %w", i, err)
		}
		if work += w; work > c.NestingWork {
			return overCap("NestingWork", "nesting work (the sum of the depths at which blocks open) over %d, reached in function body %d", c.NestingWork, i)
		}
		if loops += lw; loops > c.LoopWork {
			return overCap("LoopWork", "loop nesting work (the sum of the loop depths at which loops open) over %d, reached in function body %d", c.LoopWork, i)
		}
		info.NestingWork, info.LoopWork = work, loops
	}
	return nil
}

// checkBody reads one function body: locals, nesting and br_table sizes.
// It returns the body's nesting work and loop work. stack is scratch
// space, reused across bodies.
func checkBody(fn []byte, c Caps, stack *[]bool, info *Info) (work, loopWork uint64, err error) {
	r := &Reader{B: fn}
	groups, err := vec(r, "local groups")
	if err != nil {
		return 0, 0, err
	}
	var locals uint64
	for ; groups > 0 && r.Err == nil; groups-- {
		locals += uint64(r.U32())
		if locals > uint64(c.Locals) {
			return 0, 0, overCap("Locals", "more than %d locals", c.Locals)
		}
		valType(r)
	}
	info.MaxLocals = max(info.MaxLocals, locals)
	// The open blocks, innermost last: true for a loop. The function's
	// own block is the first.
	open := append((*stack)[:0], false)
	defer func() { *stack = open }()
	var loopDepth uint32
	for !r.Done() {
		if r.B[r.I] == 0x0E { // br_table: its length first
			r.I++
			k, err := vec(r, "br_table targets")
			if err != nil {
				return 0, 0, err
			}
			if k > c.BrTable {
				return 0, 0, overCap("BrTable", "a br_table of %d targets; the limit is %d", k, c.BrTable)
			}
			for ; k > 0; k-- {
				r.U32()
			}
			r.U32()
			continue
		}
		switch op, _ := r.Instr(); op {
		case 0x02, 0x03, 0x04:
			if uint32(len(open)) >= c.Nesting {
				return 0, 0, overCap("Nesting", "blocks nested deeper than %d", c.Nesting)
			}
			open = append(open, op == 0x03)
			work += uint64(len(open))
			info.MaxNesting = max(info.MaxNesting, uint32(len(open)))
			if op == 0x03 {
				if loopDepth++; loopDepth > c.LoopNesting {
					return 0, 0, overCap("LoopNesting", "loops nested deeper than %d", c.LoopNesting)
				}
				loopWork += uint64(loopDepth)
				info.MaxLoopNesting = max(info.MaxLoopNesting, loopDepth)
			}
		case 0x0B:
			if len(open) == 0 {
				r.Fail("end without a block")
				break
			}
			if open[len(open)-1] {
				loopDepth--
			}
			open = open[:len(open)-1]
		}
	}
	if r.Err == nil && len(open) != 0 {
		r.Fail("function body ends inside a block")
	}
	return work, loopWork, r.Err
}

// checkCustom reads a custom section's name and, for the "name" section
// (which wazero decodes), the counts of its function and local names.
func checkCustom(r *Reader) error {
	if r.Name() != "name" || r.Err != nil {
		r.I = len(r.B)
		return r.Err
	}
	for !r.Done() {
		id := r.Byte()
		sub := &Reader{B: r.Bytes(int(r.U32()))}
		if r.Err != nil {
			return r.Err
		}
		switch id {
		case 1: // function names
			n, err := vec(sub, "function names")
			if err != nil {
				return err
			}
			for ; n > 0 && sub.Err == nil; n-- {
				sub.U32()
				sub.Name()
			}
		case 2: // local names
			n, err := vec(sub, "functions with local names")
			if err != nil {
				return err
			}
			for ; n > 0 && sub.Err == nil; n-- {
				sub.U32()
				k, err := vec(sub, "local names")
				if err != nil {
					return err
				}
				for ; k > 0 && sub.Err == nil; k-- {
					sub.U32()
					sub.Name()
				}
			}
		}
		if sub.Err != nil {
			return sub.Err
		}
	}
	return nil
}
