package walker

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/arminsn"
	"slices"
)

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
	x86PopRBP, x86Leave = 0x5d, 0xc9
	x86Ret, x86RetImm   = 0xc3, 0xc2
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

// arm64CallBefore decodes the instruction before the return address ra.
func arm64CallBefore(w *walk, ra uint64) callSite {
	at := ra - 4
	insn, ok := w.code32(at)
	switch {
	case !ok:
		return callSite{}
	case arminsn.ARM64IsBL(insn): // BL imm26, in words from the BL itself
		return callSite{kind: callDirect, target: at + uint64(arminsn.ARM64Imm26(insn))}
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
	ra := w.arch.CodeAddress(raw)
	if !w.arch.Thumb(raw) {
		at := ra - 4
		insn, ok := w.code32(at)
		switch {
		case !ok:
			return callSite{}
		case insn&0xfe000000 == 0xfa000000: // BLX imm24:H, to Thumb; PC reads 8 ahead
			off := arminsn.SignExtend(insn, 24)*4 + int64(insn>>24&1)*2
			return callSite{kind: callDirect, target: at + 8 + uint64(off)}
		case insn&0x0f000000 == 0x0b000000: // BL imm24 (any condition but 0b1111, BLX above)
			return callSite{kind: callDirect, target: at + 8 + uint64(arminsn.SignExtend(insn, 24)*4)}
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
	// PC reads 4 ahead.
	off := uint64(arminsn.ThumbBranchImm(hw1, hw2))
	if hw2&0x1000 != 0 { // BL: stays in Thumb
		return callSite{kind: callDirect, target: at + 4 + off}
	}
	// BLX imm: to ARM code, from the word-aligned PC.
	return callSite{kind: callDirect, target: (at+4)&^3 + off}
}

// frameState is what the code at the PC shows about frame 0's record.
type frameState int

const (
	stateUnknown frameState = iota
	// stateCallerRegs: frame 0 is in a straight-line prologue before it
	// sets FP, or in a straight-line epilogue after it restored FP and LR
	// (reaching a return or a tail branch without touching them): FP and
	// LR (or the word at SP) are the caller's.
	stateCallerRegs
	// stateOwnRecord: frame 0's prologue, straight from the function start,
	// set FP before the PC, and no epilogue restoring it is in sight: FP is
	// frame 0's own record.
	stateOwnRecord
)

// armISA holds the instruction shapes the arm64, ARM and Thumb frame-state
// scans need. Instructions are read as 32-bit words for arm64 and ARM; the
// Thumb scan reads half-words (see thumbFrameState).
type armISA struct {
	setsFP   func(insn uint32) bool // `add FP, sp, #n` or `mov FP, sp`
	prologue func(insn uint32) bool // saves registers, moves SP; writes neither FP nor LR
	epilogue func(insn uint32) bool // restores other registers, moves SP; writes neither FP nor LR
	restores func(insn uint32) bool // restores FP and LR and stays in the function (a tail branch may follow)
	ret      func(insn uint32) bool // returns to LR
	// branch decodes an unconditional direct branch at addr.
	branch func(insn uint32, addr uint64) (uint64, bool)
}

var arm64ISA = &armISA{
	setsFP:   arminsn.ARM64IsAddFPSP, // ADD X29, SP, #imm
	prologue: arm64PrologueInsn,
	epilogue: arm64EpilogueInsn,
	restores: func(insn uint32) bool { // LDP X29, X30, [SP...] in any addressing mode
		op := insn & 0xffc00000
		return (op == 0xa9400000 || op == 0xa8c00000 || op == 0xa9c00000) && insn&0x7fff == 0x7bfd // Rt x29, Rn sp, Rt2 x30
	},
	ret: func(insn uint32) bool { // RET, RETAA, RETAB (to x30)
		return insn == arminsn.ARM64Ret || insn == arminsn.ARM64RetAA || insn == arminsn.ARM64RetAB
	},
	branch: func(insn uint32, addr uint64) (uint64, bool) { // B imm26
		return addr + uint64(arminsn.ARM64Imm26(insn)), arminsn.ARM64IsB(insn)
	},
}

var armARMISA = &armISA{
	setsFP: func(insn uint32) bool { // ADD R7, SP, #imm / MOV R7, SP
		return insn&0xfffff000 == 0xe28d7000 || insn == 0xe1a0700d
	},
	prologue: armPrologueInsn,
	epilogue: armEpilogueInsn,
	restores: func(insn uint32) bool { // POP {..., r7, lr} without PC
		return insn&0xffff0000 == 0xe8bd0000 && insn&(1<<armFP|1<<armLR|1<<armPC) == 1<<armFP|1<<armLR
	},
	ret: func(insn uint32) bool { return insn == 0xe12fff1e }, // BX LR
	branch: func(insn uint32, addr uint64) (uint64, bool) { // B imm24; PC reads 8 ahead
		return addr + 8 + uint64(arminsn.SignExtend(insn, 24)*4), insn&0xff000000 == 0xea000000
	},
}

// arm64FrameState tells frame 0's state at pc from arm64 code.
func arm64FrameState(w *walk, _ *archregs.Registers, pc uint64) frameState {
	return w.wordFrameState(arm64ISA, pc)
}

// armFrameState is arm64FrameState for armv7, in ARM or Thumb code as
// CPSR.T says; without CPSR the instruction set is unknown and so is the
// state. A function returning with `pop {..., pc}` has no instruction
// after its epilogue restores r7, so only `pop {r7, lr}` epilogues (then
// `bx lr` or a tail branch) give stateCallerRegs there.
func armFrameState(w *walk, regs *archregs.Registers, pc uint64) frameState {
	cpsr, ok := regs.Get("cpsr")
	if !ok {
		return stateUnknown
	}
	if w.arch.ThumbState(cpsr) {
		return thumbFrameState(w, pc)
	}
	return w.wordFrameState(armARMISA, pc)
}

// wordFrameState scans fixed-size (4-byte) code: forward from the
// function start to pc for the prologue, and forward from pc to a return
// or tail branch for the epilogue.
func (w *walk) wordFrameState(isa *armISA, pc uint64) frameState {
	prologue := stateUnknown
	if start, ok := w.functionStart(pc); ok && pc >= start && (pc-start)%4 == 0 {
		prologue = stateCallerRegs
	scan:
		for at := start; at < pc; at += 4 {
			insn, ok := w.code32(at)
			switch {
			case !ok || at-start >= maxPrologueBytes:
				prologue = stateUnknown
				break scan
			case isa.setsFP(insn):
				prologue = stateOwnRecord
				break scan
			case !isa.prologue(insn):
				prologue = stateUnknown
				break scan
			}
		}
		if prologue == stateCallerRegs {
			return prologue
		}
	}
	for i := uint64(0); i < maxEpilogueInsns; i++ {
		at := pc + 4*i
		insn, ok := w.code32(at)
		switch {
		case !ok:
			return prologue
		case isa.ret(insn):
			return stateCallerRegs
		case isa.epilogue(insn):
			continue
		}
		// A tail branch to another function, after FP and LR were restored.
		if target, ok := isa.branch(insn, at); ok && w.otherFunction(target, pc) && w.restoredBefore(isa, pc) {
			return stateCallerRegs
		}
		return prologue
	}
	return prologue
}

// restoredBefore reports whether the instructions just before pc are the
// restoring of FP and LR followed only by epilogue instructions.
func (w *walk) restoredBefore(isa *armISA, pc uint64) bool {
	for i := uint64(1); i <= maxEpilogueInsns && pc >= 4*i; i++ {
		insn, ok := w.code32(pc - 4*i)
		switch {
		case !ok:
			return false
		case isa.restores(insn):
			return true
		case !isa.epilogue(insn):
			return false
		}
	}
	return false
}

// otherFunction reports whether target is a known function start other
// than that of pc's function: the target of a tail call.
func (w *walk) otherFunction(target, pc uint64) bool {
	start, ok := w.functionStart(target)
	if !ok || start != target {
		return false
	}
	pcStart, ok := w.functionStart(pc)
	return ok && pcStart != target
}

// arm64PrologueInsn reports whether insn is one a prologue runs before it
// sets FP, none of which writes x29 or x30 (stores write back only to SP).
func arm64PrologueInsn(insn uint32) bool {
	if p, ok := arminsn.ARM64PairSP(insn); ok { // STP Xt|Dt, Xt2|Dt2, [SP, #imm]{!}
		return !p.Load && p.Mode != arminsn.PairPostIndex
	}
	return arminsn.ARM64IsHint(insn) || // pacibsp, paciasp, bti, nop
		arminsn.ARM64IsSubSP(insn) || // SUB SP, SP, #imm
		arminsn.ARM64IsStrPreSP(insn) || arminsn.ARM64IsStrSP(insn) // STR Xt, [SP, #imm]! / [SP, #imm]
}

// arm64EpilogueInsn reports whether insn is one an epilogue runs after it
// restored x29 and x30, none of which writes them.
func arm64EpilogueInsn(insn uint32) bool {
	if p, ok := arminsn.ARM64PairSP(insn); ok { // LDP Xt|Dt, Xt2|Dt2, [SP...]
		frame := func(r uint32) bool { return r == arminsn.ARM64FP || r == arminsn.ARM64LR }
		return p.Load && (p.SIMD || !frame(p.Rt) && !frame(p.Rt2))
	}
	return arminsn.ARM64IsHint(insn) || // autibsp, autiasp, nop
		arminsn.ARM64IsAddSP(insn) // ADD SP, SP, #imm
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

// thumbFrameState is armFrameState for Thumb code, where instructions are
// 16 or 32 bits long. Its epilogue scan knows `bx lr` only (no tail
// branches).
func thumbFrameState(w *walk, pc uint64) frameState {
	prologue := stateUnknown
	if start, ok := w.functionStart(pc); ok && pc >= start && (pc-start)%2 == 0 {
		prologue = stateCallerRegs
	scan:
		for at := start; at < pc; {
			size, kind := w.thumbInsn(at, thumbPrologueKind)
			switch {
			case at-start >= maxPrologueBytes || kind == thumbOther:
				prologue = stateUnknown
				break scan
			case kind == thumbSetsFP:
				prologue = stateOwnRecord
				break scan
			}
			at += size
		}
		if prologue == stateCallerRegs {
			return prologue
		}
	}
	at := pc
	for i := 0; i < maxEpilogueInsns; i++ {
		hw, ok := w.code16(at)
		if !ok {
			return prologue
		}
		if hw == 0x4770 { // BX LR
			return stateCallerRegs
		}
		size, kind := w.thumbInsn(at, thumbEpilogueKind)
		if kind != thumbAccepted {
			return prologue
		}
		at += size
	}
	return prologue
}

// thumbKind classifies a Thumb instruction for a scan.
type thumbKind int

const (
	thumbOther thumbKind = iota // unreadable, or not what the scan allows
	thumbAccepted
	thumbSetsFP
)

// thumbInsn reads the Thumb instruction at addr and returns its size and
// what classify makes of it (hw2 is 0 for a 16-bit instruction).
func (w *walk) thumbInsn(addr uint64, classify func(hw1, hw2 uint32, wide bool) thumbKind) (uint64, thumbKind) {
	hw1, ok := w.code16(addr)
	if !ok {
		return 2, thumbOther
	}
	// 0b11101, 0b11110 and 0b11111 in the top five bits start a 32-bit
	// instruction.
	if hw1>>11 < 0x1d {
		return 2, classify(hw1, 0, false)
	}
	hw2, ok := w.code16(addr + 2)
	if !ok {
		return 4, thumbOther
	}
	return 4, classify(hw1, hw2, true)
}

func thumbPrologueKind(hw1, hw2 uint32, wide bool) thumbKind {
	switch {
	case !wide && (hw1&0xff00 == 0xaf00 || hw1 == 0x466f): // ADD R7, SP, #imm8 / MOV R7, SP
		return thumbSetsFP
	case wide && hw1 == 0xf10d && hw2&0x8f00 == 0x0700: // ADD.W R7, SP, #imm
		return thumbSetsFP
	case !wide && hw1 == 0xbf00, // NOP
		!wide && hw1&0xfe00 == 0xb400,                        // PUSH {reglist, LR?}
		!wide && hw1&0xff80 == 0xb080,                        // SUB SP, SP, #imm7
		wide && hw1 == 0xe92d,                                // PUSH.W {reglist}
		wide && hw1&0xffbf == 0xed2d && hw2&0x0f00 == 0x0b00, // VPUSH {Dn...}
		wide && hw1 == 0xf84d && hw2&0x0fff == 0x0d04:        // PUSH.W {Rt} (STR Rt, [SP, #-4]!)
		return thumbAccepted
	}
	return thumbOther
}

func thumbEpilogueKind(hw1, hw2 uint32, wide bool) thumbKind {
	const frameRegs = 1<<armFP | 1<<armLR | 1<<armPC
	switch {
	case !wide && hw1 == 0xbf00, // NOP
		!wide && hw1&0xff80 == 0xb000,                        // ADD SP, SP, #imm7
		!wide && hw1&0xfe00 == 0xbc00 && hw1&0x180 == 0,      // POP {reglist} without r7 and PC
		wide && hw1 == 0xe8bd && hw2&frameRegs == 0,          // POP.W {reglist}
		wide && hw1&0xffbf == 0xecbd && hw2&0x0f00 == 0x0b00: // VPOP {Dn...}
		return thumbAccepted
	}
	return thumbOther
}

// x86ReturnOnStack says where the return address is when the PC is at one
// of the instructions of a frame-pointer function where RBP/EBP is still
// (or again) the caller's and the return address is at a fixed offset from
// SP: just after `push rbp` at the function's start, or just before the
// `mov rbp, rsp` that follows `push rbp` anywhere (a shrink-wrapped
// prologue): one pointer up, as the frame record puts the return address
// right above the saved RBP; at `ret` (at SP, whatever popped the frame
// before it); and at a tail jump to another function's start right after
// `pop rbp` or `leave` (at SP).
func x86ReturnOnStack(w *walk, pc uint64) (uint64, bool) {
	var b [5]byte
	n, _ := w.opts.Instructions.ReadMemory(b[:], pc)
	if n >= 1 && (b[0] == x86Ret || b[0] == x86RetImm) {
		return 0, true
	}
	if x86MovFPSP(b[:n], w.ptrSize) && pc > 0 {
		var prev [1]byte
		if m, _ := w.opts.Instructions.ReadMemory(prev[:], pc-1); m == 1 && prev[0] == x86PushRBP {
			return w.ptrSize, true
		}
	}
	if target, ok := x86Jump(b[:n], pc); ok && w.otherFunction(target, pc) && pc > 0 {
		var prev [1]byte
		if m, _ := w.opts.Instructions.ReadMemory(prev[:], pc-1); m == 1 && (prev[0] == x86PopRBP || prev[0] == x86Leave) {
			return 0, true
		}
	}
	start, ok := w.functionStart(pc)
	if !ok || pc != start+1 {
		return 0, false
	}
	if n, _ := w.opts.Instructions.ReadMemory(b[:1], start); n == 1 && b[0] == x86PushRBP {
		return w.ptrSize, true
	}
	return 0, false
}

// x86MovFPSP reports whether b starts with `mov rbp, rsp` (x86_64, REX.W
// prefix) or `mov ebp, esp` (i386), in either of its two encodings.
func x86MovFPSP(b []byte, ptrSize uint64) bool {
	if ptrSize == 8 {
		if len(b) < 1 || b[0] != 0x48 {
			return false
		}
		b = b[1:]
	}
	return len(b) >= 2 && (b[0] == 0x89 && b[1] == 0xe5 || b[0] == 0x8b && b[1] == 0xec)
}

// x86Jump decodes `jmp rel32` (E9) or `jmp rel8` (EB) at pc; the offset
// counts from the end of the instruction.
func x86Jump(b []byte, pc uint64) (uint64, bool) {
	switch {
	case len(b) >= 5 && b[0] == 0xe9:
		rel := int32(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16 | uint32(b[4])<<24)
		return pc + 5 + uint64(int64(rel)), true
	case len(b) >= 2 && b[0] == 0xeb:
		return pc + 2 + uint64(int64(int8(b[1]))), true
	}
	return 0, false
}

// x86CallBefore decodes the call instruction that ends just before a
// return address: `call rel32` (E8), and the register and memory forms of
// `call r/m` (FF /2) with their prefixes. x86 cannot be decoded backwards
// with certainty; each shape is checked at the one place it would start,
// which is what Breakpad and rust-minidump do too.
func x86CallBefore(w *walk, ra uint64) callSite {
	var b [8]byte
	if ra < uint64(len(b)) {
		return callSite{}
	}
	n, _ := w.opts.Instructions.ReadMemory(b[:], ra-uint64(len(b)))
	if n < len(b) {
		return callSite{}
	}
	// call rel32: E8 and a 4-byte displacement from the return address.
	if b[3] == 0xe8 {
		rel := int32(uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24)
		return callSite{kind: callDirect, target: ra + uint64(int64(rel))}
	}
	// call r/m (FF /2): ModRM reg field 2, with the operand's length
	// deciding where FF starts: 2 bytes (register or [reg]), 3 (disp8),
	// 6 ([rip+disp32] or disp32), 7 (SIB and disp32), each perhaps behind
	// a REX prefix.
	for _, size := range []int{2, 3, 4, 6, 7} {
		at := len(b) - size
		if b[at] != 0xff {
			continue
		}
		modrm := b[at+1]
		if modrm>>3&7 != 2 {
			continue
		}
		if x86ModRMLength(modrm, b[min(at+2, len(b)-1)]) == size-1 {
			return callSite{kind: callIndirect}
		}
	}
	return callSite{kind: callNone}
}

// x86ModRMLength returns how many bytes a ModRM byte and what it implies
// (SIB, displacement) take, given the byte after it (the SIB, if any).
func x86ModRMLength(modrm, next byte) int {
	mod, rm := modrm>>6, modrm&7
	n := 1
	if mod != 3 && rm == 4 {
		n++ // SIB
		if mod == 0 && next&7 == 5 {
			return n + 4 // SIB with disp32 and no base
		}
	}
	switch mod {
	case 0:
		if rm == 5 {
			n += 4 // [rip+disp32] (x86_64) or [disp32] (i386)
		}
	case 1:
		n++
	case 2:
		n += 4
	}
	return n
}

// maxTailScanBytes bounds the code tailCalls reads of one function.
const maxTailScanBytes = 4 << 10

// getWord decodes a little-endian word of len(p) bytes (4 or 8).
func getWord(p []byte) uint64 {
	var v uint64
	for i := len(p) - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v
}

// jumpDecoder decodes an unconditional direct jump at the start of b (at
// least 8 bytes, at addr) and returns its target, Thumb bit clear.
type jumpDecoder func(b []byte, addr uint64) (uint64, bool)

// maxTailChain is how many tail calls in a row tailCalls follows: `start`
// calls f4, which jumps to f8, which jumps to f9, and f9 returns to
// `start` (a generated program, seed 1531985555). maxTailFunctions bounds
// how many functions' code one question reads.
const (
	maxTailChain     = 3
	maxTailFunctions = 16
)

// tailCalls reports whether the function starting at fn reaches callee's
// start by direct jumps (tail calls, up to maxTailChain in a row through
// other functions' starts: the callee then returns to fn's caller, whose
// call names fn). It reads at most maxTailScanBytes of each function,
// while Options.Functions still places the code in it: arm64 `b`, ARM
// `b`, Thumb `b.w`, x86 `jmp rel32`. Patterns are matched at every
// instruction alignment without decoding the instructions in between: a
// 24-, 26- or 32-bit displacement that lands exactly on a function's
// start is no accident.
func (w *walk) tailCalls(fn, callee uint64) bool {
	if fn == callee || w.ai.jumpTarget == nil {
		return false
	}
	// A jump's target has its Thumb bit clear; a function's start may not.
	thumbless := func(a uint64) uint64 {
		if w.ai.jumpAlign == 2 {
			return a &^ 1
		}
		return a
	}
	callee = thumbless(callee)
	level, seen := []uint64{fn}, []uint64{fn}
	for depth := 1; depth <= maxTailChain && len(level) > 0; depth++ {
		var next []uint64
		for _, f := range level {
			found := false
			w.jumpsFrom(f, func(target uint64) bool {
				if target == callee {
					found = true
					return false
				}
				if depth < maxTailChain && len(seen) < maxTailFunctions && !slices.Contains(seen, target) {
					if start, ok := w.functionStart(target); ok && thumbless(start) == target {
						seen = append(seen, target)
						next = append(next, start)
					}
				}
				return true
			})
			if found {
				return true
			}
		}
		level = next
	}
	return false
}

// jumpsFrom calls visit with the target of each direct jump in the
// function starting at fn, until visit returns false.
func (w *walk) jumpsFrom(fn uint64, visit func(target uint64) bool) {
	decode, step := w.ai.jumpTarget, w.ai.jumpAlign
	var buf [256]byte
	for at := fn; at-fn < maxTailScanBytes; {
		n, _ := w.opts.Instructions.ReadMemory(buf[:], at)
		if n < 8 {
			return
		}
		if start, ok := w.functionStart(at); !ok || start != fn {
			return // past fn's end
		}
		last := uint64(n) - 8
		for off := uint64(0); off <= last; off += step {
			target, ok := decode(buf[off:off+8], at+off)
			if !ok {
				continue
			}
			if start, ok := w.functionStart(at + off); !ok || start != fn {
				continue
			}
			if !visit(target) {
				return
			}
		}
		at += last + step
	}
}

func x86JumpTarget(b []byte, addr uint64) (uint64, bool) {
	if b[0] != 0xe9 { // jmp rel32; a rel8 reaches no other function's start in practice
		return 0, false
	}
	return x86Jump(b[:5], addr)
}

func arm64JumpTarget(b []byte, addr uint64) (uint64, bool) {
	return arm64ISA.branch(uint32(getWord(b[:4])), addr)
}

// armJumpTarget decodes ARM `b` (at a word) and Thumb `b.w` (T4: hw1
// 11110 S imm10, hw2 10 J1 1 J2 imm11, from PC + 4).
func armJumpTarget(b []byte, addr uint64) (uint64, bool) {
	insn := uint32(getWord(b[:4]))
	if addr%4 == 0 {
		if t, ok := armARMISA.branch(insn, addr); ok {
			return t, true
		}
	}
	hw1, hw2 := insn&0xffff, insn>>16
	if hw1&0xf800 != 0xf000 || hw2&0xd000 != 0x9000 {
		return 0, false
	}
	return addr + 4 + uint64(arminsn.ThumbBranchImm(hw1, hw2)), true
}

// lrSavedAt reports whether frame 0, at pc, may hold a copy of LR in its
// own frame, above SP: false at the function's first instruction, at a
// return to LR (the copy, if any, was popped), and in a straight-line
// prologue that has not stored LR yet (arm64 `stp`/`str` of x30, ARM
// `push` with LR); true otherwise, unknown included (Thumb code too).
func (w *walk) lrSavedAt(pc uint64) bool {
	if w.atFunctionStart(pc) {
		return false
	}
	isa, storesLR := w.ai.wordISA, w.ai.storesLR
	if w.opts.Instructions == nil || isa == nil || w.thumb {
		return true
	}
	if insn, ok := w.code32(pc); ok && isa.ret(insn) {
		return false
	}
	start, ok := w.functionStart(pc)
	if !ok || pc < start || pc-start > maxPrologueBytes || (pc-start)%4 != 0 {
		return true
	}
	for at := start; at < pc; at += 4 {
		insn, ok := w.code32(at)
		if !ok || !isa.prologue(insn) || storesLR(insn) {
			return true
		}
	}
	return false
}

// arm64StoresLR reports whether a prologue instruction (arm64PrologueInsn)
// stores x30: an STP with x30 as either register, or an STR of x30.
func arm64StoresLR(insn uint32) bool {
	switch {
	case insn&0x3e000000 == 0x28000000: // STP/LDP of general registers, any addressing mode
		return insn&31 == arminsn.ARM64LR || insn>>10&31 == arminsn.ARM64LR
	case insn&0xffe00c00 == 0xf8000c00, insn&0xffc00000 == 0xf9000000: // STR Xt, [SP, #imm]! / [SP, #imm]
		return insn&31 == arminsn.ARM64LR
	}
	return false
}

// armStoresLR reports whether an ARM prologue instruction pushes LR.
func armStoresLR(insn uint32) bool {
	return insn&0xffff0000 == 0xe92d0000 && insn&(1<<armLR) != 0 || // PUSH {..., lr}
		insn == 0xe52de004 // PUSH {lr} (STR LR, [SP, #-4]!)
}
