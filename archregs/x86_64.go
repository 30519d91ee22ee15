package archregs

import "github.com/stackimage/stackimage/unwind"

// X86_64 is 64-bit Intel. x86 calls vary in length; minus 1 lands inside
// any of them. The ABI would give RBP ≡ 0 mod 16, but Go's amd64 frames are
// only 8-aligned.
var X86_64 = &Arch{Name: "x86_64", CPUType: CPUTypeX86_64, CPUSubtype: CPUSubtypeX86_64All, PtrSize: 8,
	RegNames: x86_64RegNames, PC: "rip", SP: "rsp", FP: "rbp",
	FPAlign: 8, CallSize: 1,
	DWARF: x86_64DWARF, DWARFPC: 16, DWARFSP: 7, DWARFFP: 6, DWARFRA: 16,
	// System V: rbx, rbp and r12-r15.
	CalleeSaved: []unwind.Reg{3, 6, 12, 13, 14, 15},
	// UNWIND_X86_64_REG_RBX, R12, R13, R14, R15, RBP.
	CompactRegs: []unwind.Reg{0, 3, 12, 13, 14, 15, 6},
	Exception:   x86_64Exception,
	MinidumpCPU: minidumpCPUAMD64, MinidumpContext: minidumpContextAMD64,
	// Any subtype: x86_64h is a scheduling hint, not a register set.
	states: &x86_64States}

// x86_thread_state64_t.
var x86_64RegNames = []string{
	"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	"rip", "rflags", "cs", "fs", "gs"}

// The System V x86-64 DWARF numbering; 16 is the return address column,
// which holds the caller's RIP.
var x86_64DWARF = []string{
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}
