package compactunwind

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/arminsn"
	"github.com/stackimage/stackimage/unwind"
)

// The instruction shapes are package arminsn's, which the walker reads too.
var (
	signExtend     = arminsn.SignExtend
	arm64AddSubImm = arminsn.ARM64AddSubImm
)

func arm64Rt(insn uint32) unwind.Reg { return unwind.Reg(arminsn.ARM64Rt(insn)) }

// arm64Pair decodes STP (load false) or LDP (load true) of X or D
// registers with SP as base: the two registers' DWARF numbers (D
// registers as v0-v31, 64-95), the offset, and the addressing mode
// (arminsn.PairOffset, PairPostIndex or PairPreIndex).
func arm64Pair(insn uint32, load bool) (r1, r2 unwind.Reg, off int64, mode int, ok bool) {
	p, ok := arminsn.ARM64PairSP(insn)
	if !ok || p.Load != load {
		return 0, 0, 0, 0, false
	}
	var base unwind.Reg
	if p.SIMD {
		base = 64
	}
	return base + unwind.Reg(p.Rt), base + unwind.Reg(p.Rt2), p.Off, p.Mode, true
}

// The instructions a Swift async function's prologue and epilogue add
// around the frame record: set, and clear again, bit 60 of the caller's
// frame pointer, which marks an extended frame record.
const (
	arm64TagAsyncFrame   = 0xB24403BD // orr x29, x29, #0x1000000000000000
	arm64UntagAsyncFrame = 0x9243FBBD // and x29, x29, #0xefffffffffffffff
)

// arm64Decoder decodes the shapes clang emits for arm64: sub sp; stp
// pairs (the first with pre-index); stp x29, x30; add x29, sp; and ldp
// pairs, add sp, ret / retab or a tail branch.
func arm64Decoder(arch *archregs.Arch) *decoder {
	d := &decoder{arch: arch}
	isSaved := func(r unwind.Reg) bool {
		return arch.IsCalleeSaved(r) || r == arch.DWARFRA || r >= 72 && r <= 79 // d8-d15
	}
	d.prologue = func(s *frameState, code []byte) (int, bool) {
		if len(code) < 4 {
			return 0, false
		}
		insn := le32(code)
		switch {
		case insn == 0xD503237F || insn == 0xD503233F: // pacibsp, paciasp
			s.signed = true
			return 4, true
		case arminsn.ARM64IsHint(insn): // other hints: bti, nop
			return 4, true
		case insn == arm64TagAsyncFrame: // Swift async: tag the caller's FP before saving it
			return 4, true
		case arminsn.ARM64IsSubSP(insn): // sub sp, sp, #imm
			s.depth += arm64AddSubImm(insn)
			return 4, true
		case arminsn.ARM64IsAddFPSP(insn): // add x29, sp, #imm (mov x29, sp)
			s.fpSet, s.fpOff = true, s.depth-arm64AddSubImm(insn)
			return 4, true
		case arminsn.ARM64IsStrPreSP(insn): // str xt, [sp, #imm]!
			s.depth -= arminsn.ARM64StrPreImm(insn)
			if r := arm64Rt(insn); isSaved(r) {
				s.save(r, 0)
			}
			return 4, true
		case arminsn.ARM64IsStrSP(insn): // str xt, [sp, #uimm]
			if r := arm64Rt(insn); isSaved(r) {
				s.save(r, int64(insn>>10&0xFFF)*8)
			}
			return 4, true
		}
		r1, r2, off, mode, ok := arm64Pair(insn, false)
		if !ok || mode == arminsn.PairPostIndex {
			return 0, false
		}
		if mode == arminsn.PairPreIndex {
			s.depth -= off
			off = 0
		}
		if isSaved(r1) {
			s.save(r1, off)
		}
		if isSaved(r2) {
			s.save(r2, off+8)
		}
		return 4, true
	}
	// A shrink-wrapped prologue starts with a pre-indexed store of a pair
	// right after a ret.
	d.wrapped = func(code []byte, off int) (int, bool) {
		for _, p := range []int{off, off - 4} {
			if p < 4 || p+4 > len(code) || p%4 != 0 {
				continue
			}
			_, _, _, mode, ok := arm64Pair(le32(code[p:]), false)
			if ok && mode == arminsn.PairPreIndex && le32(code[p-4:]) == arminsn.ARM64Ret {
				return p, true
			}
		}
		return 0, false
	}
	d.epilogue = func(code []byte, pc uint32, e Entry) (unwind.Row, bool, bool) {
		var s epilogueState
		restoresSP, signed := false, false
		// Locals released ahead of a reload of x29 ahead: in a frame the
		// CFA stays FP-based until then, as clang's CFI says.
		addBeforeFP, loadedFP := false, false
		done := func(signed bool) (unwind.Row, bool, bool) {
			return d.arm64EpilogueRow(&s, signed), true, restoresSP || addBeforeFP && loadedFP
		}
		for at := 0; at+4 <= len(code); at += 4 {
			insn := le32(code[at:])
			switch {
			case insn == arminsn.ARM64Ret: // ret
				return done(signed)
			case insn == arminsn.ARM64RetAA || insn == arminsn.ARM64RetAB: // retaa, retab
				return done(true)
			case insn == 0xD50323BF || insn == 0xD50323FF: // autiasp, autibsp
				signed = true
				continue
			case arminsn.ARM64IsHint(insn): // other hints
				continue
			case insn == arm64UntagAsyncFrame: // Swift async: clear the restored FP's tag
				continue
			case arminsn.ARM64IsB(insn): // b: a tail call when it leaves the function
				target := int64(pc) + int64(at) + arminsn.ARM64Imm26(insn)
				if target < int64(e.FuncStart) || target >= int64(e.FuncEnd) {
					return done(signed)
				}
				return unwind.Row{}, false, false
			case arminsn.ARM64IsAddSP(insn): // add sp, sp, #imm
				s.up += arm64AddSubImm(insn)
				addBeforeFP = addBeforeFP || !loadedFP
				continue
			case insn&0xFF8003FF == 0xD10003BF, insn&0xFF8003FF == 0x910003BF: // sub/add sp, x29, #imm
				restoresSP = true
				continue
			case insn&0xFFE00C00 == 0xF8400400 && arminsn.ARM64RnIsSP(insn): // ldr xt, [sp], #imm
				if r := arm64Rt(insn); isSaved(r) {
					s.load(r, 0)
				}
				s.up += signExtend(insn>>12, 9)
				continue
			case insn&0xFFC00000 == 0xF9400000 && arminsn.ARM64RnIsSP(insn): // ldr xt, [sp, #uimm]
				if r := arm64Rt(insn); isSaved(r) {
					s.load(r, int64(insn>>10&0xFFF)*8)
				}
				continue
			}
			r1, r2, off, mode, ok := arm64Pair(insn, true)
			if !ok {
				return unwind.Row{}, false, false
			}
			step := int64(0)
			if mode != arminsn.PairOffset { // pre- or post-index: SP moves by off
				step = off
			}
			if mode == arminsn.PairPreIndex {
				s.up += step
			}
			if mode != arminsn.PairOffset {
				off = 0
			}
			if isSaved(r1) {
				s.load(r1, off)
			}
			if isSaved(r2) {
				s.load(r2, off+8)
			}
			loadedFP = loadedFP || r1 == arch.DWARFFP || r2 == arch.DWARFFP
			if mode == arminsn.PairPostIndex {
				s.up += step
			}
		}
		return unwind.Row{}, false, false
	}
	return d
}

// arm64EpilogueRow is the row in an epilogue: the return address is in
// LR unless LR is still to be loaded.
func (d *decoder) arm64EpilogueRow(s *epilogueState, signed bool) unwind.Row {
	row := s.row(d, 0, signed)
	if row.Rule(d.arch.DWARFRA).Kind == unwind.Unspecified {
		row.SetRule(d.arch.DWARFRA, unwind.Rule{Kind: unwind.SameValue})
	}
	return row
}
