package compactunwind

import (
	"math/bits"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

const (
	armLR = 14
	armPC = 15
)

// armImm decodes an ARM-mode modified immediate: 8 bits rotated right by
// twice the 4-bit rotation.
func armImm(insn uint32) int64 {
	return int64(bits.RotateLeft32(insn&0xFF, -int(2*(insn>>8&0xF))))
}

// armFrame is what armDecoder and thumbDecoder share: which registers an
// armv7 frame saves, and what push, pop, vpush and vpop do to the frame,
// whichever encoding (ARM, 16- or 32-bit Thumb) carried them.
type armFrame struct{ arch *archregs.Arch }

// isSaved reports whether a prologue's store of r saves the caller's
// value: a callee-saved register, LR, or d8-d15.
func (a armFrame) isSaved(r unwind.Reg) bool {
	return a.arch.IsCalleeSaved(r) || r == armLR || r >= armDReg+8 && r <= armDReg+15
}

// armList calls f for each register of a push/pop register mask, lowest
// first, with its offset from SP, and returns the list's size in bytes.
func armList(mask uint32, f func(r unwind.Reg, off int64)) int64 {
	var off int64
	for r := unwind.Reg(0); r < 16; r++ {
		if mask&(1<<r) != 0 {
			f(r, off)
			off += 4
		}
	}
	return off
}

// armVRegs decodes the register list of a vpush or vpop of d registers:
// the first register's DWARF number and how many. ARM's A1 and Thumb's T1
// encodings share the fields; pass a Thumb instruction as hw1<<16 | hw2.
func armVRegs(insn uint32) (unwind.Reg, int) {
	first := unwind.Reg(insn>>22&1)<<4 | unwind.Reg(insn>>12&0xF)
	return armDReg + first, int(insn&0xFF) / 2
}

// push applies push {mask} to the prologue state.
func (a armFrame) push(s *frameState, mask uint32) {
	s.depth += 4 * int64(bits.OnesCount32(mask&0xFFFF))
	armList(mask, func(r unwind.Reg, off int64) {
		if a.isSaved(r) {
			s.save(r, off)
		}
	})
}

// pushOne applies push {r} (str r, [sp, #-4]!).
func (a armFrame) pushOne(s *frameState, r unwind.Reg) {
	s.depth += 4
	if a.isSaved(r) {
		s.save(r, 0)
	}
}

// vpush applies a vpush of d registers (insn as armVRegs takes it).
func (a armFrame) vpush(s *frameState, insn uint32) {
	first, n := armVRegs(insn)
	s.depth += 8 * int64(n)
	for k := 0; k < n; k++ {
		if r := first + unwind.Reg(k); a.isSaved(r) {
			s.save(r, 8*int64(k))
		}
	}
}

// pop applies pop {mask} to the epilogue state and reports whether it
// returns: a return address popped into pc is LR's.
func (a armFrame) pop(s *epilogueState, mask uint32) bool {
	s.up += armList(mask, func(r unwind.Reg, off int64) {
		switch {
		case r == armPC: // the return address, popped into pc
			s.load(armLR, off)
		case a.isSaved(r):
			s.load(r, off)
		}
	})
	return mask&(1<<armPC) != 0
}

// popOne applies pop {r} (ldr r, [sp], #4) and reports whether it returns.
func (a armFrame) popOne(s *epilogueState, r unwind.Reg) bool {
	switch {
	case r == armPC:
		s.load(armLR, 0)
	case a.isSaved(r):
		s.load(r, 0)
	}
	s.up += 4
	return r == armPC
}

// vpop applies a vpop of d registers (insn as armVRegs takes it).
func (a armFrame) vpop(s *epilogueState, insn uint32) {
	first, n := armVRegs(insn)
	for k := 0; k < n; k++ {
		if r := first + unwind.Reg(k); a.isSaved(r) {
			s.load(r, 8*int64(k))
		}
	}
	s.up += 8 * int64(n)
}

// armDecoder decodes the ARM-mode shapes of armv7 frames: push {..., r7,
// lr}; add r7, sp, #n; push {r8, r10, r11}; vpush {d8-d15}; sub sp, sp,
// #n; and sub sp, r7, #n / add sp / vpop / pop {..., pc} or pop {..., lr};
// bx lr.
func armDecoder(arch *archregs.Arch) *decoder {
	d := &decoder{arch: arch}
	a := armFrame{arch}
	d.prologue = func(s *frameState, code []byte) (int, bool) {
		if len(code) < 4 {
			return 0, false
		}
		insn := le32(code)
		switch {
		case insn&0xFFFF0000 == 0xE92D0000: // push {list}
			a.push(s, insn&0xFFFF)
		case insn&0xFFFF0FFF == 0xE52D0004: // push {rt}: str rt, [sp, #-4]!
			a.pushOne(s, unwind.Reg(insn>>12&0xF))
		case insn&0xFFFFF000 == 0xE28D7000: // add r7, sp, #imm
			s.fpSet, s.fpOff = true, s.depth-armImm(insn)
		case insn == 0xE1A0700D: // mov r7, sp
			s.fpSet, s.fpOff = true, s.depth
		case insn&0xFFFFF000 == 0xE24DD000: // sub sp, sp, #imm
			s.depth += armImm(insn)
		case insn&0xFFBF0F00 == 0xED2D0B00: // vpush {dN-dM}
			a.vpush(s, insn)
		default:
			return 0, false
		}
		return 4, true
	}
	d.epilogue = func(code []byte, pc uint32, e Entry) (unwind.Row, bool, bool) {
		var s epilogueState
		restoresSP := false
		for at := 0; at+4 <= len(code); at += 4 {
			insn := le32(code[at:])
			switch {
			case insn == 0xE12FFF1E: // bx lr
				return d.armEpilogueRow(&s), true, restoresSP
			case insn&0xFFFF0000 == 0xE8BD0000: // pop {list}
				if a.pop(&s, insn&0xFFFF) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case insn&0xFFFF0FFF == 0xE49D0004: // pop {rt}: ldr rt, [sp], #4
				if a.popOne(&s, unwind.Reg(insn>>12&0xF)) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case insn&0xFFFFF000 == 0xE28DD000: // add sp, sp, #imm
				s.up += armImm(insn)
			case insn&0xFFBF0F00 == 0xECBD0B00: // vpop
				a.vpop(&s, insn)
			case insn&0xFFFFF000 == 0xE247D000, insn == 0xE1A0D007: // sub sp, r7, #imm; mov sp, r7
				restoresSP = true
			case insn&0xFF000000 == 0xEA000000: // b: a tail call when it leaves the function
				target := int64(pc) + int64(at) + 8 + signExtend(insn, 24)*4
				if target < int64(e.FuncStart) || target >= int64(e.FuncEnd) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
				return unwind.Row{}, false, false
			default:
				return unwind.Row{}, false, false
			}
		}
		return unwind.Row{}, false, false
	}
	return d
}

// armEpilogueRow is the row in an armv7 epilogue: the return address is
// in LR unless it is still to be loaded.
func (d *decoder) armEpilogueRow(s *epilogueState) unwind.Row {
	row := s.row(d, 0, false)
	if row.Rule(d.arch.DWARFRA).Kind == unwind.Unspecified {
		row.SetRule(d.arch.DWARFRA, unwind.Rule{Kind: unwind.SameValue})
	}
	return row
}
