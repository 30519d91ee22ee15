package compactunwind

import (
	"encoding/binary"
	"math/bits"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/arminsn"
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
	a := armFrame{arch}
	word := func(hw1, hw2 uint16) uint32 { return uint32(hw1)<<16 | uint32(hw2) }
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
		switch {
		case n == 2 && hw1&0xFE00 == 0xB400: // push {rlist, lr}
			a.push(s, uint32(hw1&0xFF)|uint32(hw1>>8&1)<<armLR)
		case n == 2 && hw1&0xFF00 == 0xAF00: // add r7, sp, #imm8*4
			s.fpSet, s.fpOff = true, s.depth-4*int64(hw1&0xFF)
		case n == 2 && hw1 == 0x466F: // mov r7, sp
			s.fpSet, s.fpOff = true, s.depth
		case n == 2 && hw1&0xFF80 == 0xB080: // sub sp, #imm7*4
			s.depth += 4 * int64(hw1&0x7F)
		case n == 4 && hw1 == 0xE92D && hw2&0xA000 == 0: // push.w {list}
			a.push(s, uint32(hw2))
		case n == 4 && hw1 == 0xF84D && hw2&0x0FFF == 0x0D04: // str.w rt, [sp, #-4]!
			a.pushOne(s, unwind.Reg(hw2>>12))
		case n == 4 && hw1&0xFFBF == 0xED2D && hw2&0x0F00 == 0x0B00: // vpush {dN-dM}
			a.vpush(s, word(hw1, hw2))
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
		for at := 0; at < len(code); {
			hw1, hw2, n := halves(code[at:])
			switch {
			case n == 0:
				return unwind.Row{}, false, false
			case n == 2 && hw1 == 0x4770: // bx lr
				return d.armEpilogueRow(&s), true, restoresSP
			case n == 2 && hw1&0xFE00 == 0xBC00: // pop {rlist, pc}
				if a.pop(&s, uint32(hw1&0xFF)|uint32(hw1>>8&1)<<armPC) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 2 && hw1&0xFF80 == 0xB000: // add sp, #imm7*4
				s.up += 4 * int64(hw1&0x7F)
			case n == 2 && hw1 == 0x46BD: // mov sp, r7
				restoresSP = true
			case n == 4 && hw1 == 0xE8BD: // pop.w {list}
				if a.pop(&s, uint32(hw2)) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 4 && hw1 == 0xF85D && hw2&0x0FFF == 0x0B04: // ldr.w rt, [sp], #4
				if a.popOne(&s, unwind.Reg(hw2>>12)) {
					return d.armEpilogueRow(&s), true, restoresSP
				}
			case n == 4 && hw1&0xFFBF == 0xECBD && hw2&0x0F00 == 0x0B00: // vpop
				a.vpop(&s, word(hw1, hw2))
			case n == 4 && hw1&0xF800 == 0xF000 && hw2&0xD000 == 0x9000: // b.w: a tail call when it leaves the function
				target := int64(pc) + int64(at) + 4 + arminsn.ThumbBranchImm(uint32(hw1), uint32(hw2))
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
