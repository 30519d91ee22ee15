package compactunwind

import (
	"encoding/binary"
	"math/bits"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// thumbExpandImm decodes a Thumb-2 modified immediate, i:imm3:imm8, when
// it is a rotated byte (the form stack adjustments take); ok is false for
// the replicated-byte forms.
func thumbExpandImm(imm12 uint32) (int64, bool) {
	if imm12>>10 == 0 {
		if imm12>>8 == 0 {
			return int64(imm12 & 0xFF), true
		}
		return 0, false
	}
	return int64(bits.RotateLeft32(0x80|imm12&0x7F, -int(imm12>>7))), true
}

// thumbSPImm decodes the 32-bit `add/sub sp, rn, #imm` forms (T3 with a
// modified immediate, T4 with a plain 12-bit one): the base register, the
// immediate, and whether it is a subtraction.
func thumbSPImm(hw1, hw2 uint16) (rn uint16, imm int64, sub, ok bool) {
	if hw2&0x8F00 != 0x0D00 { // Rd = SP
		return 0, 0, false, false
	}
	imm12 := uint32(hw1>>10&1)<<11 | uint32(hw2>>12&7)<<8 | uint32(hw2&0xFF)
	rn = hw1 & 0xF
	switch hw1 & 0xFBF0 {
	case 0xF100: // ADD.W (T3), S = 0
		imm, ok = thumbExpandImm(imm12)
	case 0xF1A0: // SUB.W (T3)
		imm, ok = thumbExpandImm(imm12)
		sub = true
	case 0xF200: // ADDW (T4)
		imm, ok = int64(imm12), true
	case 0xF2A0: // SUBW (T4)
		imm, ok, sub = int64(imm12), true, true
	}
	return rn, imm, sub, ok
}

// thumbDecoder decodes the Thumb-2 shapes of armv7 frames, the same as
// armDecoder's in their 16- and 32-bit encodings: push {..., r7, lr}; add
// r7, sp, #n; push.w / str.w r8, [sp, #-4]!; vpush; sub sp; and add sp /
// sub sp, r7 / mov sp, r7 / vpop / pop.w / ldr.w rt, [sp], #4 / pop {...,
// pc}, bx lr or a tail branch.
func thumbDecoder(arch *archregs.Arch) *decoder {
	d := &decoder{arch: arch}
	isSaved := func(r unwind.Reg) bool {
		return arch.IsCalleeSaved(r) || r == armLR || r >= armDReg+8 && r <= armDReg+15
	}
	// list calls f for each register of a push/pop register mask, lowest
	// first, with its offset from SP, and returns the list's size.
	list := func(mask uint32, f func(r unwind.Reg, off int64)) int64 {
		var off int64
		for r := unwind.Reg(0); r < 16; r++ {
			if mask&(1<<r) != 0 {
				f(r, off)
				off += 4
			}
		}
		return off
	}
	vregs := func(hw1, hw2 uint16) (unwind.Reg, int) {
		return armDReg + unwind.Reg(hw1>>6&1)<<4 | unwind.Reg(hw2>>12&0xF), int(hw2&0xFF) / 2
	}
	halves := func(code []byte) (hw1, hw2 uint16, n int) {
		if len(code) < 2 {
			return 0, 0, 0
		}
		hw1 = binary.LittleEndian.Uint16(code)
		if hw1>>11 < 0x1D { // a 16-bit instruction
			return hw1, 0, 2
		}
		if len(code) < 4 {
			return 0, 0, 0
		}
		return hw1, binary.LittleEndian.Uint16(code[2:]), 4
	}
	d.prologue = func(s *frameState, code []byte) (int, bool) {
		hw1, hw2, n := halves(code)
		push := func(mask uint32) {
			s.depth += 4 * int64(bits.OnesCount32(mask))
			list(mask, func(r unwind.Reg, off int64) {
				if isSaved(r) {
					s.save(r, off)
				}
			})
		}
		switch {
		case n == 2 && hw1&0xFE00 == 0xB400: // push {rlist, lr}
			push(uint32(hw1&0xFF) | uint32(hw1>>8&1)<<armLR)
		case n == 2 && hw1&0xFF00 == 0xAF00: // add r7, sp, #imm8*4
			s.fpSet, s.fpOff = true, s.depth-4*int64(hw1&0xFF)
		case n == 2 && hw1 == 0x466F: // mov r7, sp
			s.fpSet, s.fpOff = true, s.depth
		case n == 2 && hw1&0xFF80 == 0xB080: // sub sp, #imm7*4
			s.depth += 4 * int64(hw1&0x7F)
		case n == 4 && hw1 == 0xE92D && hw2&0xA000 == 0: // push.w {list}
			push(uint32(hw2))
		case n == 4 && hw1 == 0xF84D && hw2&0x0FFF == 0x0D04: // str.w rt, [sp, #-4]!
			s.depth += 4
			if r := unwind.Reg(hw2 >> 12); isSaved(r) {
				s.save(r, 0)
			}
		case n == 4 && hw1&0xFFBF == 0xED2D && hw2&0x0F00 == 0x0B00: // vpush {dN-dM}
			first, count := vregs(hw1, hw2)
			s.depth += 8 * int64(count)
			for k := 0; k < count; k++ {
				if r := first + unwind.Reg(k); isSaved(r) {
					s.save(r, 8*int64(k))
				}
			}
		default:
			rn, imm, sub, ok := thumbSPImm(hw1, hw2)
			if n != 4 || !ok || rn != 13 || !sub { // sub.w sp, sp, #imm
				return 0, false
			}
			s.depth += imm
		}
		return n, true
	}
	d.epilogue = func(code []byte, pc uint32, e Entry) (unwind.Row, bool, bool) {
		var s epilogueState
		restoresSP := false
		pop := func(mask uint32) {
			size := list(mask, func(r unwind.Reg, off int64) {
				switch {
				case r == armPC: // the return address, popped into pc
					s.load(armLR, off)
				case isSaved(r):
					s.load(r, off)
				}
			})
			s.up += size
		}
		for at := 0; at < len(code); {
			hw1, hw2, n := halves(code[at:])
			switch {
			case n == 0:
				return unwind.Row{}, false, false
			case n == 2 && hw1 == 0x4770: // bx lr
				return d.armEpilogueRow(&s), true, restoresSP
			case n == 2 && hw1&0xFE00 == 0xBC00: // pop {rlist, pc}
				pop(uint32(hw1&0xFF) | uint32(hw1>>8&1)<<armPC)
				if hw1&0x100 != 0 {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 2 && hw1&0xFF80 == 0xB000: // add sp, #imm7*4
				s.up += 4 * int64(hw1&0x7F)
			case n == 2 && hw1 == 0x46BD: // mov sp, r7
				restoresSP = true
			case n == 4 && hw1 == 0xE8BD: // pop.w {list}
				pop(uint32(hw2))
				if hw2&0x8000 != 0 {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 4 && hw1 == 0xF85D && hw2&0x0FFF == 0x0B04: // ldr.w rt, [sp], #4
				r := unwind.Reg(hw2 >> 12)
				switch {
				case r == armPC:
					s.load(armLR, 0)
				case isSaved(r):
					s.load(r, 0)
				}
				s.up += 4
				if r == armPC {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 4 && hw1&0xFFBF == 0xECBD && hw2&0x0F00 == 0x0B00: // vpop
				first, count := vregs(hw1, hw2)
				for k := 0; k < count; k++ {
					if r := first + unwind.Reg(k); isSaved(r) {
						s.load(r, 8*int64(k))
					}
				}
				s.up += 8 * int64(count)
			case n == 4 && hw1&0xF800 == 0xF000 && hw2&0xD000 == 0x9000: // b.w: a tail call when it leaves the function
				sign := uint32(hw1 >> 10 & 1)
				i1, i2 := ^(uint32(hw2>>13&1)^sign)&1, ^(uint32(hw2>>11&1)^sign)&1
				imm := sign<<24 | i1<<23 | i2<<22 | uint32(hw1&0x3FF)<<12 | uint32(hw2&0x7FF)<<1
				target := int64(pc) + int64(at) + 4 + signExtend(imm, 25)
				if target < int64(e.FuncStart) || target >= int64(e.FuncEnd) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
				return unwind.Row{}, false, false
			default:
				rn, imm, sub, ok := thumbSPImm(hw1, hw2)
				switch {
				case n == 4 && ok && rn == 13 && !sub: // add.w sp, sp, #imm
					s.up += imm
				case n == 4 && ok && rn == 7 && sub: // sub.w sp, r7, #imm
					restoresSP = true
				default:
					return unwind.Row{}, false, false
				}
			}
			at += n
		}
		return unwind.Row{}, false, false
	}
	return d
}
