package wasmrewrite

import "fmt"

// Locals reads the local declarations at the start of a function body and
// returns how many locals they declare.
func (r *Reader) Locals() uint64 {
	var total uint64
	for n := r.U32(); n > 0 && r.Err == nil; n-- {
		total += uint64(r.U32())
		r.Byte()
	}
	return total
}

// Instr reads one instruction with its immediates and returns its opcode
// and, for an instruction whose first immediate is an index (br, call,
// local.*, global.*, table.get/set, ref.func, memory.size/grow), that
// index; for the prefixed opcodes 0xFC, 0xFD and 0xFE, idx is the
// sub-opcode. Opcodes outside the proposals wazero implements fail the
// reader.
func (r *Reader) Instr() (op byte, idx uint32) {
	op = r.Byte()
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
		r.BlockType()
	case op == 0x0C || op == 0x0D || op == 0x10 || (op >= 0x20 && op <= 0x26) || op == 0xD2 || op == 0x3F || op == 0x40:
		idx = r.U32() // br, br_if, call, local/global get/set/tee, table get/set, ref.func, memory.size/grow
	case op == 0x0E: // br_table
		for n := r.U32(); n > 0 && r.Err == nil; n-- {
			r.U32()
		}
		r.U32()
	case op == 0x11: // call_indirect
		idx = r.U32()
		r.U32()
	case op == 0x1C: // select t*
		for n := r.U32(); n > 0 && r.Err == nil; n-- {
			r.Byte()
		}
	case op >= 0x28 && op <= 0x3E:
		r.MemArg()
	case op == 0x41:
		r.LEB(5)
	case op == 0x42:
		r.LEB(10)
	case op == 0x43:
		r.Bytes(4)
	case op == 0x44:
		r.Bytes(8)
	case op == 0xD0: // ref.null t
		r.Byte()
	case op == 0xFC:
		idx = r.misc()
	case op == 0xFD:
		idx = r.simd()
	case op == 0xFE:
		if idx = r.U32(); idx == 0x03 { // atomic.fence
			r.Byte()
		} else {
			r.MemArg()
		}
	case op <= 0x01, op == 0x05, op == 0x0B, op == 0x0F, op == 0x1A, op == 0x1B, op >= 0x45 && op <= 0xC4, op == 0xD1:
		// no immediates
	default:
		r.Fail(fmt.Sprintf("opcode 0x%02x", op))
	}
	return op, idx
}

// misc reads the immediates of a 0xFC instruction.
func (r *Reader) misc() uint32 {
	switch sub := r.U32(); {
	case sub <= 7: // saturating truncations
		return sub
	case sub == 8: // memory.init data mem
		r.U32()
		r.U32()
		return sub
	case sub == 9, sub == 13, sub >= 15 && sub <= 17: // data.drop, elem.drop, table.grow/size/fill
		r.U32()
		return sub
	case sub == 10, sub == 12, sub == 14: // memory.copy, table.init, table.copy
		r.U32()
		r.U32()
		return sub
	case sub == 11: // memory.fill
		r.U32()
		return sub
	default:
		r.Fail(fmt.Sprintf("opcode 0xfc %d", sub))
		return 0
	}
}

// simd reads the immediates of a 0xFD instruction.
func (r *Reader) simd() uint32 {
	switch sub := r.U32(); {
	case sub <= 11, sub == 92, sub == 93: // loads, stores, load_zero
		r.MemArg()
		return sub
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		r.Bytes(16)
		return sub
	case sub >= 21 && sub <= 34: // extract/replace lane
		r.Byte()
		return sub
	case sub >= 84 && sub <= 91: // load/store lane
		r.MemArg()
		r.Byte()
		return sub
	case sub <= 275:
		return sub // no immediates
	default:
		r.Fail(fmt.Sprintf("opcode 0xfd %d", sub))
		return 0
	}
}
