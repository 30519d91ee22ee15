package walker

import (
	"encoding/binary"
	"math/bits"

	"github.com/stackimage/stackimage/internal/arminsn"
	"github.com/stackimage/stackimage/unwind"
)

// armInspect is the armv7 decoder of the code inspection, in ARM or Thumb
// code as the frame's return address (or frame 0's CPSR.T) says. The
// shapes are those Apple's compilers emit in prologues and epilogues, r7
// being the frame pointer:
//
//	push {reglist}, str Rt, [sp, #-4]!      SP moves; callee-saved registers and LR are saved
//	sub/add sp, sp, #imm; vpush/vpop        SP moves
//	add r7, sp, #imm; mov r7, sp            FP points at the frame: the CFA follows r7
//	sub sp, r7, #imm; mov sp, r7            SP recomputed from FP (an epilogue after alloca)
//	pop {reglist}, ldr Rt, [sp], #4         SP moves; registers restored; with PC, a return
//	other writes of SP                      SP is lost (alloca, alignment): only an FP-based CFA holds
//	bx, b, b<cond>, cbz, ldr pc, tbb, tbh   the flow
//
// ARM instructions with a condition other than "always" change nothing
// on the path that falls through, and are taken so (a conditional return
// `popne {..., pc}` leaves the frame as it was). Every other instruction
// is taken to change none of SP, r7 and the stack slots the prologue
// saved.
func armInspect(w *walk, code []byte, at uint64, st *inspectState) (inspectStep, bool) {
	if w.inspectThumb {
		return thumbInspect(w, code, at, st)
	}
	if len(code) < 4 {
		return inspectStep{}, false
	}
	insn := binary.LittleEndian.Uint32(code)
	step := inspectStep{size: 4}
	cond := insn >> 28
	switch {
	case insn == 0: // andeq r0, r0, r0: zeros, where no code is
		return inspectStep{}, false
	case cond == 0xf && insn&0x0e000000 != 0x0a000000:
		// The unconditional space holds no prologue or epilogue
		// instruction (BLX imm is below).
		return step, armUnconditionalOK(insn)
	case insn&0x0e000000 == 0x0a000000: // B, BL, BLX imm
		if cond == 0xf || insn&(1<<24) != 0 { // BLX imm, BL: a call
			return step, true
		}
		target := at + 8 + uint64(arminsn.SignExtend(insn, 24)*4)
		step.flow, step.target = flowJump, target
		if cond != 0xe {
			step.flow = flowBranch
		}
		return step, true
	case insn&0x0ffffff0 == 0x012fff10: // BX Rm
		if cond == 0xe {
			step.flow = flowEnd
		}
		return step, true
	case insn&0x0ffffff0 == 0x012fff30: // BLX Rm: a call
		return step, true
	}
	if cond != 0xe {
		// A conditional write of PC leaves the function on one path only.
		return step, true
	}
	switch {
	case insn&0xffff0000 == 0xe92d0000: // PUSH {reglist} (STMDB SP!)
		armPush(w, st, insn&0xffff)
		step.builds = true
		return step, true
	case insn&0xffff0000 == 0xe8bd0000: // POP {reglist} (LDMIA SP!)
		step.flow = armPop(w, st, insn&0xffff)
		return step, true
	case insn&0xffff0fff == 0xe52d0004: // PUSH {Rt} (STR Rt, [SP, #-4]!)
		armPush(w, st, 1<<(insn>>12&15))
		step.builds = true
		return step, true
	case insn&0xffff0fff == 0xe49d0004: // POP {Rt} (LDR Rt, [SP], #4)
		step.flow = armPop(w, st, 1<<(insn>>12&15))
		return step, true
	case insn&0xfffff000 == 0xe24dd000: // SUB SP, SP, #imm
		st.moveSP(armModifiedImm(insn))
		step.builds = true
		return step, true
	case insn&0xfffff000 == 0xe28dd000: // ADD SP, SP, #imm
		st.moveSP(-armModifiedImm(insn))
		return step, true
	case insn&0xffbf0e00 == 0xed2d0a00: // VPUSH {Dn...} / {Sn...} (VSTMDB SP!)
		st.moveSP(int64(insn&0xff) * 4)
		step.builds = true
		return step, true
	case insn&0xffbf0e00 == 0xecbd0a00: // VPOP (VLDMIA SP!)
		st.moveSP(-int64(insn&0xff) * 4)
		return step, true
	case insn&0xfffff000 == 0xe28d7000: // ADD R7, SP, #imm
		step.builds = true
		return step, st.setFP(armModifiedImm(insn))
	case insn == 0xe1a0700d: // MOV R7, SP
		step.builds = true
		return step, st.setFP(0)
	case insn&0xfffff000 == 0xe247d000: // SUB SP, R7, #imm
		st.spFromFP(-armModifiedImm(insn))
		return step, true
	case insn == 0xe1a0d007: // MOV SP, R7
		st.spFromFP(0)
		return step, true
	}
	return step, armOtherWrites(st, insn, &step)
}

// armUnconditionalOK reports the instructions of the unconditional space
// the inspection passes over (PLD, barriers, CLREX): none writes SP or r7.
func armUnconditionalOK(insn uint32) bool {
	return insn&0xfe000000 == 0xf4000000 || insn&0xff000000 == 0xf5000000 || insn&0xff000000 == 0xf7000000 ||
		insn&0xfffffff0 == 0xf57ff040 || insn&0xfffffff0 == 0xf57ff050 || insn&0xfffffff0 == 0xf57ff060 || insn == 0xf57ff01f
}

// armOtherWrites handles an unconditional ARM instruction of no shape
// above by the register it writes: PC (a jump table's `ldr pc, [...]`,
// `add pc, pc, r0, lsl #2`: the flow leaves), SP (lost), r7 while the
// CFA follows it (the frame cannot be followed).
func armOtherWrites(st *inspectState, insn uint32, step *inspectStep) bool {
	if armWritesBackSP(insn) {
		st.unknownSP() // a load or store with SP written back, of no shape above
	}
	rd, writes := armWrittenReg(insn)
	if !writes {
		return true
	}
	switch rd {
	case 15:
		step.flow = flowEnd
	case 13:
		st.unknownSP()
	case 7:
		if st.fpSet {
			return false
		}
	}
	if insn&0x0e000000 == 0x08000000 && insn&(1<<21) != 0 && insn>>16&15 == 13 {
		st.unknownSP() // LDM/STM with SP written back, of no shape above
	}
	return true
}

// armWritesBackSP reports a single or dual load or store (LDR, STR,
// LDRD, STRD, ...) with SP as base that writes the address back: pre-
// indexed with W, or post-indexed.
func armWritesBackSP(insn uint32) bool {
	if insn>>16&15 != 13 || insn&(1<<24) != 0 && insn&(1<<21) == 0 {
		return false
	}
	single := insn&0x0c000000 == 0x04000000
	extra := insn&0x0e000000 == 0 && insn&0x90 == 0x90 && insn&0x60 != 0
	return single || extra
}

// armWrittenReg returns the register an ARM data-processing instruction
// or single load writes (bits 12-15), or that a load-multiple writes
// PC. Compares, stores and the other classes write none of interest.
func armWrittenReg(insn uint32) (uint32, bool) {
	rd := insn >> 12 & 15
	switch {
	case insn&0x0c000000 == 0: // data processing, multiplies, extra loads and stores
		op, s := insn>>21&15, insn>>20&1
		if op >= 8 && op <= 11 && s == 0 && insn&(1<<25) == 0 {
			return 0, false // miscellaneous (MRS, MSR, CLZ, ...) and halfword multiplies
		}
		if op >= 8 && op <= 11 && s == 1 || (op == 9 || op == 11) && s == 0 {
			return 0, false // TST, TEQ, CMP, CMN; MSR (immediate) and hints
		}
		if insn&(1<<25) == 0 && insn&0x90 == 0x90 {
			// Multiplies and extra loads/stores: only loads write Rt.
			if insn&0xf0 == 0x90 || insn&(1<<20) == 0 {
				return 0, false
			}
		}
		return rd, true
	case insn&0x0c000000 == 0x04000000: // LDR/STR (single)
		if insn&(1<<20) != 0 {
			return rd, true
		}
		return 0, false
	case insn&0x0e000000 == 0x08000000: // LDM/STM
		if insn&(1<<20) != 0 && insn&(1<<15) != 0 {
			return 15, true
		}
		return 0, false
	}
	return 0, false
}

// armModifiedImm decodes an ARM data-processing immediate: 8 bits rotated
// right by twice the 4-bit rotation.
func armModifiedImm(insn uint32) int64 {
	return int64(bits.RotateLeft32(insn&0xff, -int(insn>>8&15)*2))
}

// armPush applies a push of the registers in list (bit n: rn): SP moves
// down by 4 per register, the lowest register at the new SP. Callee-saved
// registers and LR are recorded as saved.
func armPush(w *walk, st *inspectState, list uint32) {
	st.moveSP(4 * int64(bits.OnesCount32(list)))
	at := -st.spOff
	for r := uint32(0); r < 16; r++ {
		if list&(1<<r) == 0 {
			continue
		}
		if reg := unwind.Reg(r); w.arch.IsCalleeSaved(reg) || reg == w.arch.DWARFRA {
			st.save(reg, at)
		}
		at += 4
	}
}

// armPop applies a pop of the registers in list: they are restored and SP
// moves up; popping PC returns.
func armPop(w *walk, st *inspectState, list uint32) inspectFlow {
	for r := uint32(0); r < 16; r++ {
		if list&(1<<r) != 0 {
			st.restore(unwind.Reg(r))
			if unwind.Reg(r) == w.arch.DWARFFP {
				st.fpRestored()
			}
		}
	}
	st.moveSP(-4 * int64(bits.OnesCount32(list)))
	if list&(1<<15) != 0 {
		return flowEnd
	}
	return flowNext
}

// thumbInspect is armInspect for Thumb code: 16-bit instructions and the
// Thumb-2 32-bit ones a prologue or epilogue uses.
//
//	push {reglist, lr}; push.w; str.w Rt, [sp, #-4]!   saves
//	pop {reglist, pc}; pop.w; ldr.w Rt, [sp], #4       restores, returns with PC
//	sub/add sp, #imm7; sub.w/add.w sp, sp, #imm; vpush/vpop
//	add r7, sp, #imm8; add.w r7, sp, #imm; mov r7, sp
//	mov sp, r7; sub.w sp, r7, #imm
//	bx, b, b<cond>, b.w, cbz/cbnz, tbb/tbh, ldr.w pc    the flow
//
// An instruction in an IT block changes nothing on the path that falls
// through, as a conditional ARM instruction.
func thumbInspect(w *walk, code []byte, at uint64, st *inspectState) (inspectStep, bool) {
	if len(code) < 2 {
		return inspectStep{}, false
	}
	hw1 := uint32(binary.LittleEndian.Uint16(code))
	if st.itLeft > 0 {
		// In an IT block: the instruction runs on one path only, and
		// the other falls through with the frame as it was (`it eq;
		// popeq {r7, pc}`). Its effects are decoded on a copy and
		// dropped; leaving the function becomes a branch out of it.
		st.itLeft--
		scratch := *st
		scratch.itLeft = 0
		step, ok := thumbInspectOne(w, code, hw1, at, &scratch)
		if step.flow == flowEnd || step.flow == flowJump {
			step.flow = flowBranch
		}
		return step, ok
	}
	if hw1&0xff00 == 0xbf00 && hw1&0xf != 0 { // IT{x{y{z}}}: mask's lowest set bit says how many follow
		st.itLeft = uint8(4 - bits.TrailingZeros32(hw1&0xf))
		return inspectStep{size: 2}, true
	}
	return thumbInspectOne(w, code, hw1, at, st)
}

// thumbInspectOne is thumbInspect for one instruction outside an IT block.
func thumbInspectOne(w *walk, code []byte, hw1 uint32, at uint64, st *inspectState) (inspectStep, bool) {
	if hw1>>11 >= 0x1d {
		if len(code) < 4 {
			return inspectStep{}, false
		}
		return thumbInspect32(w, hw1, uint32(binary.LittleEndian.Uint16(code[2:])), at, st)
	}
	step := inspectStep{size: 2}
	switch {
	case hw1 == 0:
		return inspectStep{}, false // movs r0, r0 as zeros: no code here
	case hw1&0xfe00 == 0xb400: // PUSH {reglist, LR?}
		armPush(w, st, hw1&0xff|(hw1>>8&1)<<14)
		step.builds = true
	case hw1&0xfe00 == 0xbc00: // POP {reglist, PC?}
		step.flow = armPop(w, st, hw1&0xff|(hw1>>8&1)<<15)
	case hw1&0xff80 == 0xb080: // SUB SP, SP, #imm7*4
		st.moveSP(int64(hw1&0x7f) * 4)
		step.builds = true
	case hw1&0xff80 == 0xb000: // ADD SP, SP, #imm7*4
		st.moveSP(-int64(hw1&0x7f) * 4)
	case hw1&0xff00 == 0xaf00: // ADD R7, SP, #imm8*4
		step.builds = true
		return step, st.setFP(int64(hw1&0xff) * 4)
	case hw1 == 0x466f: // MOV R7, SP
		step.builds = true
		return step, st.setFP(0)
	case hw1 == 0x46bd: // MOV SP, R7
		st.spFromFP(0)
	case hw1&0xff87 == 0x4700: // BX Rm
		step.flow = flowEnd
	case hw1&0xf800 == 0xe000: // B imm11
		step.flow, step.target = flowJump, at+4+uint64(arminsn.SignExtend(hw1, 11)*2)
	case hw1&0xf000 == 0xd000 && hw1&0x0e00 != 0x0e00: // B<cond> imm8
		step.flow, step.target = flowBranch, at+4+uint64(arminsn.SignExtend(hw1, 8)*2)
	case hw1&0xf500 == 0xb100: // CBZ, CBNZ
		step.flow, step.target = flowBranch, at+4+uint64(hw1>>9&1<<6|hw1>>3&0x1f<<1)
	case hw1&0xff00 == 0xde00: // UDF
		return inspectStep{}, false
	case hw1&0xff00 == 0x4400 && (hw1&7|hw1>>4&8) == 15: // ADD PC, Rm (a jump table)
		step.flow = flowEnd
	case hw1&0xff00 == 0x4600 && (hw1&7|hw1>>4&8) == 15: // MOV PC, Rm
		step.flow = flowEnd
	case hw1&0xfd00 == 0x4400 && (hw1&7|hw1>>4&8) == 13: // ADD/MOV SP, Rm
		st.unknownSP()
	case hw1&0xfd00 == 0x4400 && (hw1&7|hw1>>4&8) == 7 && st.fpSet: // ADD/MOV R7, Rm
		return inspectStep{}, false
	case thumb16WritesR7(hw1) && st.fpSet:
		return inspectStep{}, false
	}
	return step, true
}

// thumb16WritesR7 reports the 16-bit data-processing and load shapes whose
// destination (bits 0-2, or 8-10) is r7.
func thumb16WritesR7(hw uint32) bool {
	switch {
	case hw>>14 == 0 && hw>>11 != 5: // shifts, add/sub, mov/add/sub immediate (not CMP imm)
		if hw>>13 == 1 { // MOV, CMP, ADD, SUB (8-bit immediate): Rd in bits 8-10
			return hw>>8&7 == 7
		}
		return hw&7 == 7
	case hw&0xfc00 == 0x4000: // data processing (register)
		op := hw >> 6 & 15
		return hw&7 == 7 && op != 8 && op != 10 && op != 11 // not TST, CMP, CMN
	case hw&0xf800 == 0x6800, hw&0xf800 == 0x9800, hw&0xf800 == 0x4800: // LDR: imm, SP-relative, literal
		if hw&0xf800 == 0x6800 {
			return hw&7 == 7
		}
		return hw>>8&7 == 7
	case hw&0xf800 == 0xa800: // ADD Rd, SP, #imm (r7 handled above)
		return hw>>8&7 == 7
	}
	return false
}

// thumbInspect32 is thumbInspect for a 32-bit Thumb-2 instruction.
func thumbInspect32(w *walk, hw1, hw2 uint32, at uint64, st *inspectState) (inspectStep, bool) {
	step := inspectStep{size: 4}
	rd := hw2 >> 8 & 15
	switch {
	case hw1 == 0xe92d: // PUSH.W {reglist} (STMDB SP!)
		armPush(w, st, hw2&0x5fff)
		step.builds = true
	case hw1 == 0xe8bd: // POP.W {reglist} (LDMIA SP!)
		step.flow = armPop(w, st, hw2&0xdfff)
	case hw1 == 0xf84d && hw2&0x0fff == 0x0d04: // STR.W Rt, [SP, #-4]! (PUSH.W {Rt})
		armPush(w, st, 1<<(hw2>>12))
		step.builds = true
	case hw1 == 0xf85d && hw2&0x0fff == 0x0b04: // LDR.W Rt, [SP], #4 (POP.W {Rt})
		step.flow = armPop(w, st, 1<<(hw2>>12))
	case hw1&0xffbf == 0xed2d && hw2&0x0e00 == 0x0a00: // VPUSH
		st.moveSP(int64(hw2&0xff) * 4)
		step.builds = true
	case hw1&0xffbf == 0xecbd && hw2&0x0e00 == 0x0a00: // VPOP
		st.moveSP(-int64(hw2&0xff) * 4)
	case hw1&0xfbef == 0xf1ad && hw2&0x8000 == 0 && rd == 13: // SUB.W SP, SP, #imm
		st.moveSP(thumbModifiedImm(hw1, hw2))
		step.builds = true
	case hw1&0xfbff == 0xf2ad && hw2&0x8000 == 0 && rd == 13: // SUBW SP, SP, #imm12
		st.moveSP(thumbImm12(hw1, hw2))
		step.builds = true
	case hw1&0xfbef == 0xf10d && hw2&0x8000 == 0 && rd == 13: // ADD.W SP, SP, #imm
		st.moveSP(-thumbModifiedImm(hw1, hw2))
	case hw1&0xfbff == 0xf20d && hw2&0x8000 == 0 && rd == 13: // ADDW SP, SP, #imm12
		st.moveSP(-thumbImm12(hw1, hw2))
	case hw1&0xfbef == 0xf10d && hw2&0x8000 == 0 && rd == 7: // ADD.W R7, SP, #imm
		step.builds = true
		return step, st.setFP(thumbModifiedImm(hw1, hw2))
	case hw1&0xfbef == 0xf1a7 && hw2&0x8000 == 0 && rd == 13: // SUB.W SP, R7, #imm
		st.spFromFP(-thumbModifiedImm(hw1, hw2))
	case hw1&0xf800 == 0xf000 && hw2&0xd000 == 0xd000, // BL
		hw1&0xf800 == 0xf000 && hw2&0xd001 == 0xc000: // BLX imm
		return step, true
	case hw1&0xf800 == 0xf000 && hw2&0xd000 == 0x9000: // B.W (T4)
		step.flow, step.target = flowJump, at+4+uint64(arminsn.ThumbBranchImm(hw1, hw2))
	case hw1&0xf800 == 0xf000 && hw2&0xd000 == 0x8000 && hw1&0x0380 != 0x0380: // B<cond>.W (T3)
		imm := hw1>>10&1<<20 | hw2>>11&1<<19 | hw2>>13&1<<18 | hw1&0x3f<<12 | hw2&0x7ff<<1
		step.flow, step.target = flowBranch, at+4+uint64(arminsn.SignExtend(imm, 21))
	case hw1&0xfff0 == 0xe8d0 && hw2&0xffe0 == 0xf000: // TBB, TBH: a jump table
		step.flow = flowEnd
	case hw1&0xfff0 == 0xf8d0 && hw2>>12 == 15, hw1&0xfff0 == 0xf850 && hw2>>12 == 15: // LDR.W PC, [...]
		step.flow = flowEnd
	case hw1&0xffd0 == 0xe890 && hw2&0x8000 != 0: // LDM.W with PC
		step.flow = flowEnd
	case hw1&0xfe00 == 0xea00 || hw1&0xf800 == 0xf000 && hw2&0x8000 == 0 || hw1&0xfe00 == 0xfa00:
		// Data processing (shifted register, modified or plain
		// immediate, register), multiplies: Rd in bits 8-11.
		switch {
		case rd == 13:
			st.unknownSP()
		case rd == 7 && st.fpSet:
			return inspectStep{}, false
		}
	case hw1&0xfe00 == 0xf800 && hw1&0x0010 != 0 && hw2>>12 == 7 && st.fpSet: // LDR.W R7, ...
		return inspectStep{}, false
	}
	return step, true
}

// thumbModifiedImm decodes a Thumb-2 modified immediate (i:imm3:imm8) as
// ADD.W/SUB.W with small values use it: the constants stack frames need.
func thumbModifiedImm(hw1, hw2 uint32) int64 {
	imm12 := hw1>>10&1<<11 | hw2>>12&7<<8 | hw2&0xff
	if imm12>>10 == 0 {
		v := imm12 & 0xff
		switch imm12 >> 8 & 3 {
		case 0:
			return int64(v)
		case 1:
			return int64(v<<16 | v)
		case 2:
			return int64(v<<24 | v<<8)
		default:
			return int64(v<<24 | v<<16 | v<<8 | v)
		}
	}
	return int64(bits.RotateLeft32(0x80|imm12&0x7f, -int(imm12>>7)))
}

// thumbImm12 decodes ADDW/SUBW's plain 12-bit immediate (i:imm3:imm8).
func thumbImm12(hw1, hw2 uint32) int64 {
	return int64(hw1>>10&1<<11 | hw2>>12&7<<8 | hw2&0xff)
}
