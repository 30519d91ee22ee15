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

// armDecoder decodes the ARM-mode shapes of armv7 frames: push {..., r7,
// lr}; add r7, sp, #n; push {r8, r10, r11}; vpush {d8-d15}; sub sp, sp,
// #n; and sub sp, r7, #n / add sp / vpop / pop {..., pc} or pop {..., lr};
// bx lr.
func armDecoder(arch *archregs.Arch) *decoder {
	d := &decoder{arch: arch}
	isSaved := func(r unwind.Reg) bool {
		return arch.IsCalleeSaved(r) || r == armLR || r >= armDReg+8 && r <= armDReg+15
	}
	// list calls f for each register of a push/pop list, lowest first,
	// with its offset from SP; it returns the list's size in bytes.
	list := func(insn uint32, f func(r unwind.Reg, off int64)) int64 {
		var off int64
		for r := unwind.Reg(0); r < 16; r++ {
			if insn&(1<<r) != 0 {
				f(r, off)
				off += 4
			}
		}
		return off
	}
	// vregs decodes a vpush/vpop of d registers: the first register's
	// DWARF number and how many.
	vregs := func(insn uint32) (unwind.Reg, int) {
		first := unwind.Reg(insn>>22&1)<<4 | unwind.Reg(insn>>12&0xF)
		return armDReg + first, int(insn&0xFF) / 2
	}
	d.prologue = func(s *frameState, code []byte) (int, bool) {
		if len(code) < 4 {
			return 0, false
		}
		insn := le32(code)
		switch {
		case insn&0xFFFF0000 == 0xE92D0000: // push {list}
			n := int64(bits.OnesCount32(insn & 0xFFFF))
			s.depth += 4 * n
			list(insn, func(r unwind.Reg, off int64) {
				if isSaved(r) {
					s.save(r, off)
				}
			})
		case insn&0xFFFF0FFF == 0xE52D0004: // push {rt}: str rt, [sp, #-4]!
			s.depth += 4
			if r := unwind.Reg(insn >> 12 & 0xF); isSaved(r) {
				s.save(r, 0)
			}
		case insn&0xFFFFF000 == 0xE28D7000: // add r7, sp, #imm
			s.fpSet, s.fpOff = true, s.depth-armImm(insn)
		case insn == 0xE1A0700D: // mov r7, sp
			s.fpSet, s.fpOff = true, s.depth
		case insn&0xFFFFF000 == 0xE24DD000: // sub sp, sp, #imm
			s.depth += armImm(insn)
		case insn&0xFFBF0F00 == 0xED2D0B00: // vpush {dN-dM}
			first, n := vregs(insn)
			s.depth += 8 * int64(n)
			for k := 0; k < n; k++ {
				if r := first + unwind.Reg(k); isSaved(r) {
					s.save(r, 8*int64(k))
				}
			}
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
				size := list(insn, func(r unwind.Reg, off int64) {
					switch {
					case r == armPC: // the return address, popped into pc
						s.load(armLR, off)
					case isSaved(r):
						s.load(r, off)
					}
				})
				s.up += size
				if insn&(1<<armPC) != 0 {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case insn&0xFFFF0FFF == 0xE49D0004: // pop {rt}: ldr rt, [sp], #4
				r := unwind.Reg(insn >> 12 & 0xF)
				if r == armPC {
					s.load(armLR, 0)
					s.up += 4
					return d.armEpilogueRow(&s), true, restoresSP
				}
				if isSaved(r) {
					s.load(r, 0)
				}
				s.up += 4
			case insn&0xFFFFF000 == 0xE28DD000: // add sp, sp, #imm
				s.up += armImm(insn)
			case insn&0xFFBF0F00 == 0xECBD0B00: // vpop
				first, n := vregs(insn)
				for k := 0; k < n; k++ {
					if r := first + unwind.Reg(k); isSaved(r) {
						s.load(r, 8*int64(k))
					}
				}
				s.up += 8 * int64(n)
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
