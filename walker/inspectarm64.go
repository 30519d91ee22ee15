package walker

import (
	"encoding/binary"

	"github.com/stackimage/stackimage/internal/arminsn"
	"github.com/stackimage/stackimage/unwind"
)

// arm64Inspect is the arm64 decoder of the code inspection: what one
// instruction does to SP, FP (x29) and the saved registers, and where
// control goes. The shapes are those compilers emit in prologues and
// epilogues (UnwindAssemblyInstEmulation emulates the same ones):
//
//	sub/add sp, sp, #imm             SP moves
//	stp/ldp Xt, Xt2, [sp, #imm]{!}   saves and restores, pre-indexed (SP moves first)
//	stp/ldp Xt, Xt2, [sp], #imm      post-indexed (SP moves after)
//	str/ldr Xt, [sp, #imm]{!}, [sp], #imm
//	add x29, sp, #imm                FP points at the frame: the CFA follows FP
//	add/sub sp, x29, #imm            SP recomputed from FP (an epilogue after alloca)
//	other writes of SP               SP is lost (alloca): only an FP-based CFA holds
//	ret, br, b, b.cond, cbz, tbz     the flow
//
// Every other instruction is taken to change none of SP, x29 and the
// stack slots the prologue saved.
func arm64Inspect(w *walk, code []byte, at uint64, st *inspectState) (inspectStep, bool) {
	if len(code) < 4 {
		return inspectStep{}, false
	}
	insn := binary.LittleEndian.Uint32(code)
	step := inspectStep{size: 4}
	switch {
	case insn&0xffff0000 == 0: // UDF: no code here, or not this function's
		return inspectStep{}, false
	case insn == arminsn.ARM64Ret || insn == arminsn.ARM64RetAA || insn == arminsn.ARM64RetAB,
		insn&0xfffffc1f == 0xd61f0000, // BR Xn: an indirect jump (a jump table, or a tail call)
		insn&0xfefff800 == 0xd61f0800: // BRAA, BRAB, ... (arm64e)
		step.flow = flowEnd
		return step, true
	case arminsn.ARM64IsB(insn):
		step.flow, step.target = flowJump, at+uint64(arminsn.ARM64Imm26(insn))
		return step, true
	case insn&0xff000010 == 0x54000000: // B.cond imm19
		step.flow, step.target = flowBranch, at+uint64(arminsn.SignExtend(insn>>5, 19)*4)
		return step, true
	case insn&0x7e000000 == 0x34000000: // CBZ, CBNZ imm19
		step.flow, step.target = flowBranch, at+uint64(arminsn.SignExtend(insn>>5, 19)*4)
		return step, true
	case insn&0x7e000000 == 0x36000000: // TBZ, TBNZ imm14
		step.flow, step.target = flowBranch, at+uint64(arminsn.SignExtend(insn>>5, 14)*4)
		return step, true
	case arminsn.ARM64IsSubSP(insn):
		st.moveSP(arminsn.ARM64AddSubImm(insn))
		step.builds = true
		return step, true
	case arminsn.ARM64IsAddSP(insn):
		st.moveSP(-arminsn.ARM64AddSubImm(insn))
		return step, true
	case arminsn.ARM64IsAddFPSP(insn): // add x29, sp, #imm
		step.builds = true
		return step, st.setFP(arminsn.ARM64AddSubImm(insn))
	case insn&0xff8003ff == 0x910003bf: // add sp, x29, #imm
		st.spFromFP(arminsn.ARM64AddSubImm(insn))
		return step, true
	case insn&0xff8003ff == 0xd10003bf: // sub sp, x29, #imm
		st.spFromFP(-arminsn.ARM64AddSubImm(insn))
		return step, true
	}
	if p, ok := arminsn.ARM64PairSP(insn); ok {
		arm64Pair(st, p)
		step.builds = !p.Load
		return step, true
	}
	if ok, builds := arm64SingleSP(st, insn); ok {
		step.builds = builds
		return step, true
	}
	if d, ok := arm64Writeback(insn); ok {
		// A load or store of another size or register file that moves
		// SP (str w8, [sp, #-16]!; stp q0, q1, [sp, #-32]!): SP moves,
		// and nothing the walk needs is saved.
		st.moveSP(-d)
		step.builds = d < 0
		return step, true
	}
	if arm64WritesSP(insn) {
		st.unknownSP()
		return step, true
	}
	if insn&0x1f == arminsn.ARM64FP && arm64WritesRd(insn) && st.fpSet {
		// x29 takes another value while the CFA follows it: the frame
		// cannot be followed.
		return inspectStep{}, false
	}
	return step, true
}

// arm64Pair applies an STP or LDP of two registers with SP as base.
func arm64Pair(st *inspectState, p arminsn.ARM64Pair) {
	if p.Mode == arminsn.PairPreIndex {
		st.moveSP(-p.Off)
	}
	at := -st.spOff
	if p.Mode == arminsn.PairOffset {
		at += p.Off
	}
	if !p.SIMD {
		for i, r := range []uint32{p.Rt, p.Rt2} {
			reg := unwind.Reg(r)
			switch {
			case p.Load:
				st.restore(reg)
				if r == arminsn.ARM64FP {
					st.fpRestored()
				}
			case r != 31: // xzr saves nothing
				st.save(reg, at+int64(i)*8)
			}
		}
	}
	if p.Mode == arminsn.PairPostIndex {
		st.moveSP(-p.Off)
	}
}

// arm64SingleSP applies STR or LDR of one X register with SP as base:
// unsigned offset, pre-index or post-index. builds says it saved one.
func arm64SingleSP(st *inspectState, insn uint32) (ok, builds bool) {
	if !arminsn.ARM64RnIsSP(insn) {
		return false, false
	}
	reg := unwind.Reg(arminsn.ARM64Rt(insn))
	switch {
	case insn&0xffc00000 == 0xf9000000: // STR Xt, [SP, #uimm12*8]
		st.save(reg, -st.spOff+int64(insn>>10&0xfff)*8)
		return true, true
	case insn&0xffc00000 == 0xf9400000: // LDR Xt, [SP, #uimm12*8]
		arm64Restore(st, reg)
		return true, false
	case insn&0xffe00c00 == 0xf8000c00: // STR Xt, [SP, #simm9]!
		st.moveSP(-arminsn.SignExtend(insn>>12, 9))
		st.save(reg, -st.spOff)
		return true, true
	case insn&0xffe00c00 == 0xf8000400: // STR Xt, [SP], #simm9
		st.save(reg, -st.spOff)
		st.moveSP(-arminsn.SignExtend(insn>>12, 9))
		return true, true
	case insn&0xffe00c00 == 0xf8400c00: // LDR Xt, [SP, #simm9]!
		st.moveSP(-arminsn.SignExtend(insn>>12, 9))
		arm64Restore(st, reg)
		return true, false
	case insn&0xffe00c00 == 0xf8400400: // LDR Xt, [SP], #simm9
		arm64Restore(st, reg)
		st.moveSP(-arminsn.SignExtend(insn>>12, 9))
		return true, false
	}
	return false, false
}

func arm64Restore(st *inspectState, reg unwind.Reg) {
	st.restore(reg)
	if reg == arminsn.ARM64FP {
		st.fpRestored()
	}
}

// arm64WritesSP reports the ADD and SUB forms that can write SP besides
// those decoded above (their Rd 31 is SP; in other forms it is XZR): the
// immediate form from another register (mov sp, x9) and the extended
// register form (sub sp, sp, x8, as alloca at -O0).
func arm64WritesSP(insn uint32) bool {
	if insn&0x1f != 31 || insn&0x20000000 != 0 { // Rd SP, and not ADDS/SUBS (whose Rd 31 is XZR)
		return false
	}
	return insn&0x1f000000 == 0x11000000 || insn&0x1f200000 == 0x0b200000
}

// arm64WritesRd reports the common data-processing and load shapes that
// write their Rd (bits 0-4): ADD/SUB, logical and move immediates, ADD/SUB
// and logical (register), and single loads of a register.
func arm64WritesRd(insn uint32) bool {
	switch {
	case insn&0x1c000000 == 0x10000000: // data processing (immediate)
		return true
	case insn&0x0e000000 == 0x0a000000: // data processing (register)
		return true
	case insn&0x3b000000 == 0x39000000 && insn&0x00400000 != 0: // LDR (unsigned offset)
		return true
	}
	return false
}

// arm64Writeback decodes the loads and stores with SP as base that write
// the address back to SP, of every size and register file: pairs
// (pre- and post-indexed, imm7 scaled by the register size) and single
// registers (imm9, unscaled). It returns how far SP moves.
func arm64Writeback(insn uint32) (int64, bool) {
	if !arminsn.ARM64RnIsSP(insn) {
		return 0, false
	}
	switch {
	case insn&0x3a800000 == 0x28800000: // LDP/STP (pre- or post-indexed)
		opc, simd := insn>>30, insn&(1<<26) != 0
		scale := int64(4)
		switch {
		case !simd && opc == 2, simd && opc == 1:
			scale = 8
		case simd && opc == 2:
			scale = 16
		}
		return arminsn.SignExtend(insn>>15, 7) * scale, true
	case insn&0x3b200400 == 0x38000400: // LDR/STR (immediate, pre- or post-indexed)
		return arminsn.SignExtend(insn>>12, 9), true
	}
	return 0, false
}
