package walker

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/stackimage/stackimage/unwind"
)

// x86Inspect is the x86 decoder of the code inspection (x86_64, and
// i386 in 32-bit mode), after lldb's x86AssemblyInspectionEngine:
// instructions are decoded whole (golang.org/x/arch's x86asm gives their
// length and operands), and (rsp, rbp standing for esp, ebp on i386)
//
//	push reg / pop reg                 SP moves; a callee-saved register is saved or restored
//	sub/add rsp, imm; lea rsp, [rsp+d] SP moves
//	mov rbp, rsp                       FP points at the frame: the CFA follows RBP
//	mov rsp, rbp; lea rsp, [rbp+d]     SP recomputed from FP
//	leave                              both, and RBP restored
//	other writes of RSP                SP is lost (alloca, alignment): only an FP-based CFA holds
//	ret, jmp, jcc                      the flow
//	call to the next instruction       SP moves (i386's get-PC idiom: call 1f; 1: pop eax)
//
// Every other instruction is taken to change none of RSP, RBP and the
// stack slots the prologue saved.
func x86Inspect(w *walk, code []byte, at uint64, st *inspectState) (inspectStep, bool) {
	if len(code) >= 2 && code[0] == 0 && code[1] == 0 {
		// add [rax], al: zeros, where no code is (or not this function's)
		return inspectStep{}, false
	}
	mode, sp, fp := 64, x86asm.RSP, x86asm.RBP
	if w.ptrSize == 4 {
		mode, sp, fp = 32, x86asm.ESP, x86asm.EBP
	}
	word := int64(w.ptrSize)
	inst, err := x86asm.Decode(code, mode)
	if err != nil || inst.Len == 0 {
		return inspectStep{}, false
	}
	step := inspectStep{size: uint64(inst.Len)}
	a0, a1 := inst.Args[0], inst.Args[1]
	afterCall, getPC := st.afterCall, st.getPC
	st.afterCall, st.getPC = inst.Op == x86asm.CALL, false
	switch inst.Op {
	case x86asm.RET, x86asm.LRET, x86asm.UD2, x86asm.HLT:
		step.flow = flowEnd
		return step, true
	case x86asm.JMP:
		if rel, ok := a0.(x86asm.Rel); ok {
			step.flow, step.target = flowJump, at+step.size+uint64(int64(rel))
		} else {
			step.flow = flowEnd // through a register or memory: a jump table or a tail call
		}
		return step, true
	case x86asm.CALL:
		if rel, ok := a0.(x86asm.Rel); ok && rel == 0 && mode == 32 && len(code) > inst.Len && code[inst.Len]&0xf8 == 0x58 {
			// call 1f; 1: pop reg: i386 code reading its own address
			// (lldb's call_next_insn_pattern_p). The call pushes the
			// address, which the pop takes into a register: SP moves
			// and moves back, and the register saves nothing. An
			// object's unrelocated call also reads 0, but is followed
			// by no pop of the pushed word.
			st.moveSP(word)
			st.getPC = true
		}
		return step, true
	case x86asm.PUSH:
		// A push builds the frame where it saves a callee-saved register
		// for the first time, or continues a prologue. Elsewhere it
		// passes an argument (`push r15` of a value, `push [rsp+0x50]`)
		// that the caller takes back after the call: the state after an
		// unconditional jump must not keep it.
		r, isReg := x86DWARFReg(a0, mode)
		_, saved := st.savedAt(r)
		firstSave := isReg && w.arch.IsCalleeSaved(r) && !saved
		building := st.prevBuilds
		st.moveSP(word)
		if firstSave {
			st.save(r, -st.spOff)
		}
		step.builds = firstSave || isReg && building
		return step, true
	case x86asm.POP:
		if r, ok := x86DWARFReg(a0, mode); ok && !getPC {
			st.restore(r)
			if r == w.arch.DWARFFP {
				st.fpRestored()
			}
		}
		st.moveSP(-word)
		return step, true
	case x86asm.LEAVE:
		st.spFromFP(0)
		st.moveSP(-word)
		st.restore(w.arch.DWARFFP)
		st.fpRestored()
		return step, true
	}
	if _, ok := a0.(x86asm.Rel); ok {
		step.flow, step.target = flowBranch, at+step.size+uint64(int64(inst.Args[0].(x86asm.Rel)))
		return step, true
	}
	switch {
	case a0 == sp:
		switch imm, isImm := a1.(x86asm.Imm); {
		case inst.Op == x86asm.SUB && isImm && afterCall && int64(imm) == word:
			// A Swift async callee returns with `ret 8` (an i386 callee
			// returning a structure, `ret 4`), popping one word of its
			// caller's, which the caller takes back right after the
			// call: no move overall.
		case inst.Op == x86asm.SUB && isImm:
			st.moveSP(int64(imm))
			step.builds = true
		case inst.Op == x86asm.ADD && isImm:
			st.moveSP(-int64(imm))
		case inst.Op == x86asm.MOV && a1 == fp:
			st.spFromFP(0)
		case inst.Op == x86asm.LEA:
			m, _ := a1.(x86asm.Mem)
			switch {
			case m.Base == fp && m.Index == 0:
				st.spFromFP(m.Disp)
			case m.Base == sp && m.Index == 0:
				st.moveSP(-m.Disp)
			default:
				st.unknownSP()
			}
		default:
			st.unknownSP()
		}
		return step, true
	case a0 == fp && inst.Op == x86asm.MOV && a1 == sp:
		step.builds = true
		return step, st.setFP(0)
	case a0 == fp && inst.Op == x86asm.LEA && a1.(x86asm.Mem).Base == sp && a1.(x86asm.Mem).Index == 0:
		// lea rbp, [rsp+d]: a Swift async frame points RBP at its record,
		// above the async context it pushed.
		step.builds = true
		return step, st.setFP(a1.(x86asm.Mem).Disp)
	case a0 == fp && st.fpSet && x86Writes(inst.Op):
		// RBP takes another value while the CFA follows it: the frame
		// cannot be followed.
		return inspectStep{}, false
	}
	return step, true
}

// x86Writes reports whether an instruction writes its first operand (the
// common ones: moves and arithmetic).
func x86Writes(op x86asm.Op) bool {
	switch op {
	case x86asm.MOV, x86asm.LEA, x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR,
		x86asm.IMUL, x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT,
		x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.XCHG, x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB,
		x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVG, x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVNE,
		x86asm.BTS, x86asm.BTR:
		return true
	}
	return false
}

// x86DWARFReg returns the DWARF number of a general register operand of
// the mode's width (64: x86_64's numbering; 32: Darwin i386's __eh_frame
// numbering, which archregs.I386 uses).
func x86DWARFReg(a x86asm.Arg, mode int) (unwind.Reg, bool) {
	r, ok := a.(x86asm.Reg)
	if !ok {
		return 0, false
	}
	if mode == 32 {
		if r < x86asm.EAX || r > x86asm.EDI {
			return 0, false
		}
		// eax ecx edx ebx esp ebp esi edi, as instructions number them.
		dwarf := [8]unwind.Reg{0, 1, 2, 3, 5, 4, 6, 7}
		return dwarf[r-x86asm.EAX], true
	}
	if r < x86asm.RAX || r > x86asm.R15 {
		return 0, false
	}
	// rax rcx rdx rbx rsp rbp rsi rdi r8-r15, as instructions number them.
	dwarf := [16]unwind.Reg{0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15}
	return dwarf[r-x86asm.RAX], true
}
