package walker

import "github.com/stackimage/stackimage/archregs"

// This file reads the few instruction shapes the walker needs from
// Options.Instructions: the call before a return address, and, at frame 0,
// whether the PC is in a prologue or epilogue where FP and LR (or the word
// at SP) are still the caller's. Everything else is left undecoded. When
// the code cannot be read, every function here answers "unknown" and the
// walk goes on exactly as without code.

// callKind says what the instruction before a return address is.
type callKind int

const (
	callUnknown  callKind = iota // code unreadable, or no decoder for the architecture
	callNone                     // readable, and not a call: the value is no return address
	callIndirect                 // a call through a register: the target is not in the code
	callDirect                   // a call whose target is encoded in the instruction
)

// callSite is the decoded instruction before a return address.
type callSite struct {
	kind   callKind
	target uint64 // callDirect only; Thumb bit clear
}

// Limits of the straight-line scans. Apple's prologues save at most ten
// general and eight vector registers around the frame record, in pairs
// on arm64; these bounds leave room and keep a scan from wandering through
// a function body when a function start is wrong.
const (
	maxPrologueBytes    = 96 // from the function start to the PC
	maxEpilogueInsns    = 12 // from the PC to the return
	x86PushRBP          = 0x55
	x86Ret, x86RetImm   = 0xc3, 0xc2
	thumbCPSR           = 1 << 5 // CPSR.T: the thread executes Thumb code
	arm64LR, arm64FP    = 30, 29
	armLR, armFP, armPC = 14, 7, 15
)

// code16 and code32 read one little-endian instruction (or half) at addr
// from Options.Instructions.
func (w *walk) code16(addr uint64) (uint32, bool) {
	v, err := readPtr(w.opts.Instructions, w.buf[:2], addr)
	return uint32(v), err == nil
}

func (w *walk) code32(addr uint64) (uint32, bool) {
	v, err := readPtr(w.opts.Instructions, w.buf[:4], addr)
	return uint32(v), err == nil
}

// signExtend returns the low n bits of v as a signed value.
func signExtend(v uint32, n uint) int64 {
	return int64(int32(v<<(32-n)) >> (32 - n))
}

// arm64CallBefore decodes the instruction before the return address ra.
func arm64CallBefore(w *walk, ra uint64) callSite {
	at := ra - 4
	insn, ok := w.code32(at)
	switch {
	case !ok:
		return callSite{}
	case insn&0xfc000000 == 0x94000000: // BL imm26, in words from the BL itself
		return callSite{kind: callDirect, target: at + uint64(signExtend(insn, 26)*4)}
	case insn&0xfffffc1f == 0xd63f0000, // BLR Xn
		insn&0xfefff800 == 0xd63f0800: // BLRAA, BLRAB, BLRAAZ, BLRABZ (arm64e)
		return callSite{kind: callIndirect}
	}
	return callSite{kind: callNone}
}

// armCallBefore decodes the instruction before an armv7 return address. A
// call from Thumb code sets bit 0 of LR (so that the return switches back
// to Thumb); a call from ARM code leaves it clear. That bit, kept in raw,
// says which instruction set the call was in.
func armCallBefore(w *walk, raw uint64) callSite {
	ra := raw &^ 1
	if raw&1 == 0 {
		at := ra - 4
		insn, ok := w.code32(at)
		switch {
		case !ok:
			return callSite{}
		case insn&0xfe000000 == 0xfa000000: // BLX imm24:H, to Thumb; PC reads 8 ahead
			off := signExtend(insn, 24)*4 + int64(insn>>24&1)*2
			return callSite{kind: callDirect, target: at + 8 + uint64(off)}
		case insn&0x0f000000 == 0x0b000000: // BL imm24 (any condition but 0b1111, BLX above)
			return callSite{kind: callDirect, target: at + 8 + uint64(signExtend(insn, 24)*4)}
		case insn&0x0ffffff0 == 0x012fff30: // BLX Rm
			return callSite{kind: callIndirect}
		}
		return callSite{kind: callNone}
	}
	// Thumb: a 16-bit BLX Rm ends at ra, or a 32-bit BL/BLX imm does. The
	// second half of a BL starts 0b11x1 and can never pass for a BLX Rm.
	hw, ok := w.code16(ra - 2)
	if !ok {
		return callSite{}
	}
	if hw&0xff87 == 0x4780 { // BLX Rm
		return callSite{kind: callIndirect}
	}
	at := ra - 4
	hw1, ok := w.code16(at)
	if !ok {
		return callSite{}
	}
	hw2 := hw
	if hw1&0xf800 != 0xf000 || hw2&0xc000 != 0xc000 {
		return callSite{kind: callNone}
	}
	// imm32 = S:I1:I2:imm10:imm11:0 with I = NOT(J XOR S); PC reads 4 ahead.
	s := hw1 >> 10 & 1
	j1, j2 := hw2>>13&1, hw2>>11&1
	i1, i2 := ^(j1^s)&1, ^(j2^s)&1
	imm := s<<24 | i1<<23 | i2<<22 | (hw1&0x3ff)<<12 | (hw2&0x7ff)<<1
	off := uint64(signExtend(imm, 25))
	if hw2&0x1000 != 0 { // BL: stays in Thumb
		return callSite{kind: callDirect, target: at + 4 + off}
	}
	// BLX imm: to ARM code, from the word-aligned PC.
	return callSite{kind: callDirect, target: (at+4)&^3 + off}
}

// arm64CallerInRegisters reports whether the code shows that at pc frame 0
// has not set FP to its own record, or has restored the caller's FP and LR:
// in a straight-line prologue before `add x29, sp, #n`, or in a straight-
// line epilogue that reaches `ret` without touching x29 or x30.
func arm64CallerInRegisters(w *walk, _ *archregs.Registers, pc uint64) bool {
	if start, ok := w.functionStart(pc); ok && pc >= start && pc-start <= maxPrologueBytes && (pc-start)%4 == 0 {
		prologue := true
		for at := start; at < pc && prologue; at += 4 {
			insn, ok := w.code32(at)
			prologue = ok && arm64PrologueInsn(insn)
		}
		if prologue {
			return true
		}
	}
	for i := uint64(0); i < maxEpilogueInsns; i++ {
		insn, ok := w.code32(pc + 4*i)
		switch {
		case !ok:
			return false
		case insn == 0xd65f03c0, insn == 0xd65f0bff, insn == 0xd65f0fff: // RET, RETAA, RETAB (to x30)
			return true
		case !arm64EpilogueInsn(insn):
			return false
		}
	}
	return false
}

// arm64PrologueInsn reports whether insn is one a prologue runs before it
// sets FP, none of which writes x29 or x30 (stores write back only to SP).
func arm64PrologueInsn(insn uint32) bool {
	rnSP := insn>>5&31 == 31
	switch {
	case insn&0xfffff01f == 0xd503201f: // HINT: pacibsp, paciasp, bti, nop
		return true
	case insn&0xff8003ff == 0xd10003ff: // SUB SP, SP, #imm
		return true
	case insn&0xffc00000 == 0xa9000000, insn&0xffc00000 == 0xa9800000: // STP Xt, Xt2, [SP, #imm]{!}
		return rnSP
	case insn&0xffc00000 == 0x6d000000, insn&0xffc00000 == 0x6d800000: // STP Dt, Dt2, [SP, #imm]{!}
		return rnSP
	case insn&0xffe00c00 == 0xf8000c00, insn&0xffc00000 == 0xf9000000: // STR Xt, [SP, #imm]! / [SP, #imm]
		return rnSP
	}
	return false
}

// arm64EpilogueInsn reports whether insn is one an epilogue runs after it
// restored x29 and x30, none of which writes them.
func arm64EpilogueInsn(insn uint32) bool {
	rnSP := insn>>5&31 == 31
	rt, rt2 := insn&31, insn>>10&31
	notFrame := rt != arm64FP && rt != arm64LR && rt2 != arm64FP && rt2 != arm64LR
	switch {
	case insn&0xfffff01f == 0xd503201f: // HINT: autibsp, autiasp, nop
		return true
	case insn&0xff8003ff == 0x910003ff: // ADD SP, SP, #imm
		return true
	case insn&0xffc00000 == 0xa9400000, insn&0xffc00000 == 0xa8c00000, insn&0xffc00000 == 0xa9c00000: // LDP Xt, Xt2, [SP...]
		return rnSP && notFrame
	case insn&0xffc00000 == 0x6d400000, insn&0xffc00000 == 0x6cc00000, insn&0xffc00000 == 0x6dc00000: // LDP Dt, Dt2, [SP...]
		return rnSP
	}
	return false
}

// armCallerInRegisters is arm64CallerInRegisters for armv7, in ARM or
// Thumb code as CPSR.T says; without CPSR the instruction set is unknown
// and so is the answer. The prologue ends at `add r7, sp, #n` (or `mov r7,
// sp`); an epilogue that returns with `pop {..., pc}` has no instruction
// after the pop, so only `bx lr` epilogues count.
func armCallerInRegisters(w *walk, regs *archregs.Registers, pc uint64) bool {
	cpsr, ok := regs.Get("cpsr")
	if !ok {
		return false
	}
	if cpsr&thumbCPSR != 0 {
		return thumbCallerInRegisters(w, pc)
	}
	if start, ok := w.functionStart(pc); ok && pc >= start && pc-start <= maxPrologueBytes && (pc-start)%4 == 0 {
		prologue := true
		for at := start; at < pc && prologue; at += 4 {
			insn, ok := w.code32(at)
			prologue = ok && armPrologueInsn(insn)
		}
		if prologue {
			return true
		}
	}
	for i := uint64(0); i < maxEpilogueInsns; i++ {
		insn, ok := w.code32(pc + 4*i)
		switch {
		case !ok:
			return false
		case insn == 0xe12fff1e: // BX LR
			return true
		case !armEpilogueInsn(insn):
			return false
		}
	}
	return false
}

// armPrologueInsn: ARM-mode instructions a prologue runs before it sets r7.
// Conditional forms are not prologue code.
func armPrologueInsn(insn uint32) bool {
	switch {
	case insn&0xffff0000 == 0xe92d0000: // PUSH {reglist} (STMDB SP!)
		return true
	case insn&0xffff0fff == 0xe52d0004: // PUSH {Rt} (STR Rt, [SP, #-4]!)
		return true
	case insn&0xfffff000 == 0xe24dd000: // SUB SP, SP, #imm
		return true
	case insn&0xffbf0f00 == 0xed2d0b00: // VPUSH {Dn...}
		return true
	}
	return false
}

// armEpilogueInsn: ARM-mode instructions an epilogue runs after restoring
// r7 and LR, none of which writes r7, LR or PC.
func armEpilogueInsn(insn uint32) bool {
	const frameRegs = 1<<armFP | 1<<armLR | 1<<armPC
	switch {
	case insn&0xfffff000 == 0xe28dd000: // ADD SP, SP, #imm
		return true
	case insn&0xffbf0f00 == 0xecbd0b00: // VPOP {Dn...}
		return true
	case insn&0xffff0000 == 0xe8bd0000: // POP {reglist} (LDMIA SP!)
		return insn&frameRegs == 0
	case insn&0xffff0fff == 0xe49d0004: // POP {Rt} (LDR Rt, [SP], #4)
		rt := insn >> 12 & 15
		return rt != armFP && rt != armLR && rt != armPC
	}
	return false
}

// thumbCallerInRegisters is armCallerInRegisters for Thumb code, where
// instructions are 16 or 32 bits long.
func thumbCallerInRegisters(w *walk, pc uint64) bool {
	if start, ok := w.functionStart(pc); ok && pc >= start && pc-start <= maxPrologueBytes && (pc-start)%2 == 0 {
		prologue := true
		for at := start; at < pc && prologue; {
			var size uint64
			size, prologue = w.thumbInsn(at, thumbPrologueInsn)
			at += size
		}
		if prologue {
			return true
		}
	}
	at := pc
	for i := 0; i < maxEpilogueInsns; i++ {
		hw, ok := w.code16(at)
		if !ok {
			return false
		}
		if hw == 0x4770 { // BX LR
			return true
		}
		size, ok := w.thumbInsn(at, thumbEpilogueInsn)
		if !ok {
			return false
		}
		at += size
	}
	return false
}

// thumbInsn reads the Thumb instruction at addr and returns its size and
// whether accept takes it (hw2 is 0 for a 16-bit instruction).
func (w *walk) thumbInsn(addr uint64, accept func(hw1, hw2 uint32, wide bool) bool) (uint64, bool) {
	hw1, ok := w.code16(addr)
	if !ok {
		return 0, false
	}
	// 0b11101, 0b11110 and 0b11111 in the top five bits start a 32-bit
	// instruction.
	if hw1>>11 < 0x1d {
		return 2, accept(hw1, 0, false)
	}
	hw2, ok := w.code16(addr + 2)
	if !ok {
		return 0, false
	}
	return 4, accept(hw1, hw2, true)
}

func thumbPrologueInsn(hw1, hw2 uint32, wide bool) bool {
	if !wide {
		return hw1&0xfe00 == 0xb400 || // PUSH {reglist, LR?}
			hw1&0xff80 == 0xb080 // SUB SP, SP, #imm7
	}
	return hw1 == 0xe92d || // PUSH.W {reglist}
		hw1&0xffbf == 0xed2d && hw2&0x0f00 == 0x0b00 || // VPUSH {Dn...}
		hw1 == 0xf84d && hw2&0x0fff == 0x0d04 // PUSH.W {Rt} (STR Rt, [SP, #-4]!)
}

func thumbEpilogueInsn(hw1, hw2 uint32, wide bool) bool {
	if !wide {
		return hw1&0xff80 == 0xb000 || // ADD SP, SP, #imm7
			hw1&0xfe00 == 0xbc00 && hw1&0x180 == 0 // POP {reglist} without r7 and PC
	}
	const frameRegs = 1<<armFP | 1<<armLR | 1<<armPC
	return hw1 == 0xe8bd && hw2&frameRegs == 0 || // POP.W {reglist}
		hw1&0xffbf == 0xecbd && hw2&0x0f00 == 0x0b00 // VPOP {Dn...}
}

// x86ReturnOnStack says where the return address is when the PC is at one
// of the two instructions of a frame-pointer function where RBP/EBP is
// still (or again) the caller's and the return address is at a fixed
// offset from SP: just after `push rbp` at the function's start (offset one
// pointer), and at `ret` (offset 0, whatever popped the frame before it).
func x86ReturnOnStack(w *walk, pc uint64) (uint64, bool) {
	var b [1]byte
	if n, _ := w.opts.Instructions.ReadMemory(b[:], pc); n == 1 && (b[0] == x86Ret || b[0] == x86RetImm) {
		return 0, true
	}
	start, ok := w.functionStart(pc)
	if !ok || pc != start+1 {
		return 0, false
	}
	if n, _ := w.opts.Instructions.ReadMemory(b[:], start); n == 1 && b[0] == x86PushRBP {
		return w.ai.ptrSize, true
	}
	return 0, false
}
