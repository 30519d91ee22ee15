package arminsn

// SignExtend returns the low n bits of v as a signed value.
func SignExtend(v uint32, n uint) int64 {
	return int64(int32(v<<(32-n)) >> (32 - n))
}

// arm64 register numbers with a role in frames.
const (
	ARM64FP = 29 // x29
	ARM64LR = 30 // x30
	ARM64SP = 31 // as a base register (Rn)
)

// arm64 instructions matched whole.
const (
	ARM64Ret   = 0xD65F03C0 // RET (x30)
	ARM64RetAA = 0xD65F0BFF // RETAA (arm64e)
	ARM64RetAB = 0xD65F0FFF // RETAB (arm64e)
)

// ARM64Rt, ARM64Rt2 and ARM64Rn are the register fields of a load or
// store (Rt2 of a pair).
func ARM64Rt(insn uint32) uint32  { return insn & 31 }
func ARM64Rt2(insn uint32) uint32 { return insn >> 10 & 31 }
func ARM64Rn(insn uint32) uint32  { return insn >> 5 & 31 }

// ARM64RnIsSP reports whether a load or store addresses from SP.
func ARM64RnIsSP(insn uint32) bool { return ARM64Rn(insn) == ARM64SP }

// ARM64IsHint reports whether insn is in the HINT space: NOP, BTI, and
// the pointer-authentication hints (PACIBSP, AUTIBSP, ...), none of which
// changes a register a frame needs.
func ARM64IsHint(insn uint32) bool { return insn&0xFFFFF01F == 0xD503201F }

// ARM64IsSubSP reports SUB SP, SP, #imm; ARM64IsAddSP reports
// ADD SP, SP, #imm; ARM64IsAddFPSP reports ADD X29, SP, #imm (MOV X29, SP
// when imm is 0). ARM64AddSubImm is their immediate.
func ARM64IsSubSP(insn uint32) bool   { return insn&0xFF8003FF == 0xD10003FF }
func ARM64IsAddSP(insn uint32) bool   { return insn&0xFF8003FF == 0x910003FF }
func ARM64IsAddFPSP(insn uint32) bool { return insn&0xFF8003FF == 0x910003FD }

// ARM64AddSubImm is the immediate of ADD/SUB (immediate), with its
// optional shift by 12.
func ARM64AddSubImm(insn uint32) int64 {
	imm := int64(insn >> 10 & 0xFFF)
	if insn&(1<<22) != 0 {
		imm <<= 12
	}
	return imm
}

// ARM64IsStrPreSP reports STR Xt, [SP, #simm9]! (ARM64StrPreImm is the
// pre-index); ARM64IsStrSP reports STR Xt, [SP, #uimm12*8].
func ARM64IsStrPreSP(insn uint32) bool { return insn&0xFFE00C00 == 0xF8000C00 && ARM64RnIsSP(insn) }
func ARM64IsStrSP(insn uint32) bool    { return insn&0xFFC00000 == 0xF9000000 && ARM64RnIsSP(insn) }
func ARM64StrPreImm(insn uint32) int64 { return SignExtend(insn>>12, 9) }

// ARM64IsB and ARM64IsBL report B imm26 and BL imm26; ARM64Imm26 is their
// offset in bytes from the instruction.
func ARM64IsB(insn uint32) bool    { return insn&0xFC000000 == 0x14000000 }
func ARM64IsBL(insn uint32) bool   { return insn&0xFC000000 == 0x94000000 }
func ARM64Imm26(insn uint32) int64 { return SignExtend(insn, 26) * 4 }

// Addressing modes of a load/store pair.
const (
	PairOffset    = 0 // [SP, #imm]
	PairPostIndex = 1 // [SP], #imm
	PairPreIndex  = 2 // [SP, #imm]!
)

// An ARM64Pair is a decoded STP or LDP of 64-bit general (X) or SIMD&FP
// (D) registers.
type ARM64Pair struct {
	Rt, Rt2 uint32 // register numbers, 0-31 in the X or D file
	SIMD    bool   // D registers
	Load    bool   // LDP rather than STP
	Off     int64  // the scaled offset, in bytes
	Mode    int    // PairOffset, PairPostIndex or PairPreIndex
}

// ARM64PairSP decodes insn when it is an STP or LDP of X or D registers
// with SP as base, in any addressing mode.
func ARM64PairSP(insn uint32) (ARM64Pair, bool) {
	if !ARM64RnIsSP(insn) {
		return ARM64Pair{}, false
	}
	var p ARM64Pair
	switch insn & 0xFC000000 {
	case 0xA8000000: // 64-bit general registers
	case 0x6C000000: // 64-bit SIMD&FP registers
		p.SIMD = true
	default:
		return ARM64Pair{}, false
	}
	p.Load = insn&(1<<22) != 0
	switch insn & 0x03800000 {
	case 0x01000000:
		p.Mode = PairOffset
	case 0x00800000:
		p.Mode = PairPostIndex
	case 0x01800000:
		p.Mode = PairPreIndex
	default:
		return ARM64Pair{}, false
	}
	p.Rt, p.Rt2 = ARM64Rt(insn), ARM64Rt2(insn)
	p.Off = SignExtend(insn>>15, 7) * 8
	return p, true
}

// ThumbBranchImm is the offset of a Thumb-2 BL, BLX or B.W (encoding T4):
// S:I1:I2:imm10:imm11:0 with I = NOT(J XOR S), sign-extended, counted from
// the instruction's address plus 4.
func ThumbBranchImm(hw1, hw2 uint32) int64 {
	s := hw1 >> 10 & 1
	i1, i2 := ^(hw2>>13&1^s)&1, ^(hw2>>11&1^s)&1
	imm := s<<24 | i1<<23 | i2<<22 | (hw1&0x3FF)<<12 | (hw2&0x7FF)<<1
	return SignExtend(imm, 25)
}
