//go:build unicorn

package emu

import (
	"encoding/binary"
	"fmt"
)

// insnKind is what an instruction does to the call stack.
type insnKind int

const (
	insnOther insnKind = iota // anything else, including jumps and tail calls
	insnCall                  // pushes a return address and enters a callee
	insnRet                   // returns to the caller
)

// Call is one active call on the shadow stack.
type Call struct {
	// CallSite is the address of the call instruction: the true location
	// in the caller, free of any return-address adjustment.
	CallSite uint64
	// ReturnAddress is where the callee will return (Thumb bit cleared).
	ReturnAddress uint64
}

// ShadowStack is the true call stack, kept by code hooks on call and return
// instructions independently of frames and frame pointers.
//
// The hooks run before an instruction executes, so at a stop before the
// instruction at PC the shadow stack reflects every instruction executed
// so far: a call at PC is not on it yet; a return at PC has not popped yet.
// Tail calls are jumps and change nothing, as on hardware.
type ShadowStack struct {
	// Calls are the active calls, outermost first. Calls[0] is the
	// pseudo-call that entered the program: its CallSite and ReturnAddress
	// are the sentinel.
	Calls []Call
}

// Chain returns the true call chain at a stop with the given PC, innermost
// first: the PC, then each active call site. Symbolized, it names the
// functions a perfect stack walker would report.
func (s *ShadowStack) Chain(pc uint64) []uint64 {
	chain := make([]uint64, 0, len(s.Calls)+1)
	chain = append(chain, pc)
	for i := len(s.Calls) - 1; i >= 0; i-- {
		chain = append(chain, s.Calls[i].CallSite)
	}
	return chain
}

// Depth returns the number of active calls, the entry pseudo-call included.
func (s *ShadowStack) Depth() int { return len(s.Calls) }

// classifyARM64 recognizes BL, BLR and BLRAA/BLRAB(Z) as calls and RET and
// RETAA/RETAB as returns.
func classifyARM64(_ *Machine, pc uint64, insn []byte) (insnKind, uint64) {
	if len(insn) != 4 {
		return insnOther, 0
	}
	w := binary.LittleEndian.Uint32(insn)
	if w&0xFC000000 == 0x94000000 { // BL imm26
		return insnCall, pc + 4
	}
	// Unconditional branch (register): 1101011 opc:4 11111 op3:6 Rn op4.
	if w&0xFE1F0000 == 0xD61F0000 {
		switch (w >> 21) & 0xF {
		case 1, 9: // BLR, BLRAAZ, BLRABZ; BLRAA, BLRAB
			return insnCall, pc + 4
		case 2: // RET, RETAA, RETAB
			return insnRet, 0
		}
	}
	return insnOther, 0
}

// classifyARM recognizes calls and returns in ARM and Thumb state. ARM
// instructions are conditional: one whose condition fails is nothing.
// Thumb IT blocks are not evaluated (the fixtures are ARM code).
func classifyARM(m *Machine, pc uint64, insn []byte) (insnKind, uint64) {
	cpsr, err := m.Engine.RegRead(regARMCPSR)
	if err != nil {
		return insnOther, 0
	}
	if m.Arch.ThumbState(cpsr) {
		return classifyThumb(pc, insn)
	}
	if len(insn) != 4 {
		return insnOther, 0
	}
	w := binary.LittleEndian.Uint32(insn)
	cond := w >> 28
	if cond == 0xF { // the unconditional space: BLX imm24 switches to Thumb
		if w&0xFE000000 == 0xFA000000 {
			return insnCall, pc + 4
		}
		return insnOther, 0
	}
	if !conditionPasses(cond, uint32(cpsr)) {
		return insnOther, 0
	}
	switch {
	case w&0x0F000000 == 0x0B000000: // BL imm24
		return insnCall, pc + 4
	case w&0x0FFFFFF0 == 0x012FFF30: // BLX Rm
		return insnCall, pc + 4
	case w&0x0FFFFFFF == 0x012FFF1E: // BX LR
		return insnRet, 0
	case w&0x0FFFFFFF == 0x01A0F00E: // MOV PC, LR
		return insnRet, 0
	case w&0x0FFF8000 == 0x08BD8000: // LDMIA SP!, {..., PC} (POP)
		return insnRet, 0
	case w&0x0FFFFFFF == 0x049DF004: // LDR PC, [SP], #4 (POP {PC})
		return insnRet, 0
	}
	return insnOther, 0
}

func classifyThumb(pc uint64, insn []byte) (insnKind, uint64) {
	if len(insn) < 2 {
		return insnOther, 0
	}
	h1 := binary.LittleEndian.Uint16(insn)
	if len(insn) == 2 {
		switch {
		case h1&0xFF87 == 0x4780: // BLX Rm
			return insnCall, pc + 2
		case h1 == 0x4770: // BX LR
			return insnRet, 0
		case h1&0xFF00 == 0xBD00: // POP {..., PC}
			return insnRet, 0
		}
		return insnOther, 0
	}
	h2 := binary.LittleEndian.Uint16(insn[2:])
	switch {
	case h1&0xF800 == 0xF000 && h2&0xC000 == 0xC000: // BL, BLX imm
		return insnCall, pc + 4
	case h1 == 0xE8BD && h2&0x8000 != 0: // POP.W {..., PC}
		return insnRet, 0
	case h1 == 0xF85D && h2 == 0xFB04: // LDR.W PC, [SP], #4
		return insnRet, 0
	}
	return insnOther, 0
}

// conditionPasses evaluates an ARM condition code against CPSR's NZCV.
func conditionPasses(cond, cpsr uint32) bool {
	n, z, c, v := cpsr>>31&1 == 1, cpsr>>30&1 == 1, cpsr>>29&1 == 1, cpsr>>28&1 == 1
	var r bool
	switch cond >> 1 {
	case 0:
		r = z // EQ
	case 1:
		r = c // CS
	case 2:
		r = n // MI
	case 3:
		r = v // VS
	case 4:
		r = c && !z // HI
	case 5:
		r = n == v // GE
	case 6:
		r = n == v && !z // GT
	case 7:
		return true // AL
	}
	if cond&1 == 1 {
		return !r
	}
	return r
}

// classifyX86 recognizes CALL rel32 and CALL r/m (FF /2) as calls and RET
// and RET imm16 as returns, after legacy prefixes and, in 64-bit mode, REX.
// A CALL to the next instruction is the i386 get-PC idiom (call 1f; 1: pop):
// it pushes no frame anyone returns through, so it is not a call.
func classifyX86(m *Machine, pc uint64, insn []byte) (insnKind, uint64) {
	i := 0
	for i < len(insn) {
		b := insn[i]
		switch b {
		case 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3:
			i++
			continue
		}
		if m.info.ptrSize == 8 && b&0xF0 == 0x40 {
			i++
			continue
		}
		break
	}
	if i >= len(insn) {
		return insnOther, 0
	}
	next := pc + uint64(len(insn))
	switch insn[i] {
	case 0xE8:
		if i+5 <= len(insn) && binary.LittleEndian.Uint32(insn[i+1:]) == 0 {
			return insnOther, 0
		}
		return insnCall, next
	case 0xFF:
		if i+1 < len(insn) && (insn[i+1]>>3)&7 == 2 {
			return insnCall, next
		}
	case 0xC3, 0xC2:
		return insnRet, 0
	}
	return insnOther, 0
}

// ShadowError says the shadow stack lost track of the program: a return
// went somewhere other than where the matching call said, or popped an
// empty stack. Ground truth can no longer be trusted after it.
type ShadowError struct {
	PC       uint64 // where the return landed, or the return instruction
	Expected uint64 // where the innermost call said it would return
	Detail   string
}

func (e *ShadowError) Error() string {
	return fmt.Sprintf("emu: shadow stack out of sync at PC %#x (expected %#x): %s", e.PC, e.Expected, e.Detail)
}
