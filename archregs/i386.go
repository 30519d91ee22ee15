package archregs

import "github.com/stackimage/stackimage/unwind"

// I386 is 32-bit Intel. EBP is ≡ 8 mod 16 only in functions entered by an
// ABI-conforming call; start and thread_start push their zero end marker on
// the kernel's stack, and hand-written code need not keep 16-byte
// alignment. push/pop keep 4-byte alignment everywhere. Calls vary in
// length; minus 1 lands inside any of them.
var I386 = &Arch{Name: "i386", CPUType: CPUTypeX86, CPUSubtype: CPUSubtypeX86All, PtrSize: 4,
	RegNames: i386RegNames, PC: "eip", SP: "esp", FP: "ebp",
	FPAlign: 4, CallSize: 1,
	DWARF: i386DWARF, DWARFPC: 8, DWARFSP: 5, DWARFFP: 4, DWARFRA: 8,
	CalleeSaved: []unwind.Reg{3, 4, 6, 7},
	// UNWIND_X86_REG_EBX, ECX, EDX, EDI, ESI, EBP.
	CompactRegs:   []unwind.Reg{0, 3, 1, 2, 7, 6, 4},
	DebugFrameReg: I386DebugFrameReg,
	Exception:     i386Exception,
	MinidumpCPU:   minidumpCPUX86, MinidumpContext: minidumpContextX86,
	states: &i386States}

// i386_thread_state_t (x86_thread_state32_t).
var i386RegNames = []string{
	"eax", "ebx", "ecx", "edx", "edi", "esi", "ebp", "esp",
	"ss", "eflags", "eip", "cs", "ds", "es", "fs", "gs"}

// i386DWARF is the numbering Darwin's __eh_frame and compact unwind use,
// where EBP is 4 and ESP 5. The DWARF standard's numbering, which a dSYM's
// __debug_frame uses, swaps the two (I386DebugFrameReg converts).
var i386DWARF = []string{"eax", "ecx", "edx", "ebx", "ebp", "esp", "esi", "edi", "eip"}

// I386DebugFrameReg converts an i386 register number of __debug_frame (the
// DWARF standard's: ESP 4, EBP 5) to Darwin's __eh_frame numbering, which
// I386.DWARF uses. Other numbers are the same in both.
func I386DebugFrameReg(r unwind.Reg) unwind.Reg {
	switch r {
	case 4:
		return 5
	case 5:
		return 4
	}
	return r
}
