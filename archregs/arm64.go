package archregs

import "github.com/stackimage/stackimage/unwind"

// ARM64 is 64-bit ARM as Apple platforms run it.
//
// arm64 code never signs pointers itself, but on arm64e hardware the system
// libraries an arm64 app calls are arm64e and their frame records hold
// signed values; stripping is a no-op on an unsigned user address. Frame
// records are 8-byte aligned: clang keeps them 16-byte aligned but Go's
// arm64 frames put the record at SP-8 (8 mod 16).
var ARM64 = &Arch{Name: "arm64", CPUType: CPUTypeARM64, CPUSubtype: CPUSubtypeARM64All, PtrSize: 8,
	RegNames: arm64RegNames, PC: "pc", SP: "sp", FP: "fp", LR: "lr",
	FPAlign: 8, CallSize: 4, PAC: true,
	DWARF: arm64DWARF, DWARFPC: 32, DWARFSP: 31, DWARFFP: 29, DWARFRA: 30,
	CalleeSaved: arm64CalleeSaved, NegateRAState: true,
	Exception: arm64Exception, AddressingBits: true,
	MinidumpCPU: minidumpCPUARM64, MinidumpContext: minidumpContextARM64,
	subtypes: []uint32{CPUSubtypeARM64All, cpuSubtypeARM64V8},
	states:   &arm64States, aliases: arm64Aliases}

// ARM64E is arm64 with pointer authentication: return addresses and saved
// frame pointers carry a signature in their upper bits.
var ARM64E = &Arch{Name: "arm64e", CPUType: CPUTypeARM64, CPUSubtype: CPUSubtypeARM64E, PtrSize: 8,
	RegNames: arm64RegNames, PC: "pc", SP: "sp", FP: "fp", LR: "lr",
	FPAlign: 8, CallSize: 4, PAC: true,
	DWARF: arm64DWARF, DWARFPC: 32, DWARFSP: 31, DWARFFP: 29, DWARFRA: 30,
	CalleeSaved: arm64CalleeSaved, NegateRAState: true,
	Exception: arm64Exception, AddressingBits: true,
	// A minidump has no arm64e: it records the CPU, not the ABI.
	MinidumpCPU: minidumpCPUARM64, MinidumpContext: minidumpContextARM64,
	// Pointer authentication changes register values, not the layout.
	subtypes: []uint32{CPUSubtypeARM64E},
	states:   &arm64States, aliases: arm64Aliases}

// arm64Aliases: x29 and x30 are the frame pointer and link register.
var arm64Aliases = map[string]string{"x29": "fp", "x30": "lr"}

// arm_thread_state64_t: __x[29], __fp, __lr, __sp, __pc, __cpsr.
var arm64RegNames = []string{
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
	"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19",
	"x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
	"fp", "lr", "sp", "pc", "cpsr"}

// AADWARF64: x0-x30 are 0-30, SP is 31, PC is 32.
var arm64DWARF = []string{
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
	"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19",
	"x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
	"fp", "lr", "sp", "pc"}

// AAPCS64: x19-x28 and the frame pointer are preserved across calls.
var arm64CalleeSaved = []unwind.Reg{19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}
