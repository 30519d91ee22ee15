package archregs

import "github.com/stackimage/stackimage/unwind"

// ARMV7 is 32-bit ARM (armv7, v7s, v7k) as iOS and watchOS run it. The frame
// pointer is r7 on Apple platforms (not r11 as in AAPCS). The stack is kept
// 4-byte aligned. A return address into Thumb code has bit 0 set to tell the
// CPU the mode to return in; it is not part of the address. Calls are 4
// bytes (ARM bl, Thumb-2 bl) or 2 (Thumb blx reg): minus 2 lands inside
// either.
var ARMV7 = &Arch{Name: "armv7", CPUType: CPUTypeARM, CPUSubtype: CPUSubtypeARMV7, PtrSize: 4,
	RegNames: armRegNames, PC: "pc", SP: "sp", FP: "r7", LR: "lr",
	FPAlign: 4, CallSize: 2, CodeBits: 1, ThumbBit: 1, ThumbCPSR: 1 << 5,
	DWARF: armDWARF, DWARFPC: 15, DWARFSP: 13, DWARFFP: 7, DWARFRA: 14,
	CalleeSaved: []unwind.Reg{4, 5, 6, 7, 8, 10, 11},
	Exception:   armException,
	// Breakpad's and Crashpad's layout (MD_CONTEXT_ARM), not Windows'.
	MinidumpCPU: minidumpCPUARM, MinidumpContext: minidumpContextARM,
	// v7, v7f, v7s and v7k share the register set and frame layout.
	subtypes: []uint32{CPUSubtypeARMV7, cpuSubtypeARMV7F, cpuSubtypeARMV7S, cpuSubtypeARMV7K},
	states:   &armStates,
	aliases:  map[string]string{"r13": "sp", "r14": "lr", "r15": "pc"}}

// arm_thread_state_t: __r[13], __sp, __lr, __pc, __cpsr.
var armRegNames = []string{
	"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
	"sp", "lr", "pc", "cpsr"}

// The ARM DWARF numbering: r0-r15 are 0-15.
var armDWARF = []string{
	"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
	"sp", "lr", "pc"}
