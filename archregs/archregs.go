// Package archregs describes the CPU architectures of Apple platforms and
// decodes their register state from the exact bytes thread_get_state(2) or a
// core file's LC_THREAD command holds.
package archregs

import (
	"fmt"
	"strings"
)

// Mach-O CPU types, as <mach/machine.h> defines them.
const (
	CPUTypeX86    uint32 = 7              // CPU_TYPE_X86 (also CPU_TYPE_I386)
	CPUTypeX86_64 uint32 = 7 | 0x1000000  // CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64
	CPUTypeARM    uint32 = 12             // CPU_TYPE_ARM
	CPUTypeARM64  uint32 = 12 | 0x1000000 // CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64
)

// Mach-O CPU subtypes used here, as <mach/machine.h> defines them.
const (
	CPUSubtypeX86All    uint32 = 3          // CPU_SUBTYPE_X86_ALL (also CPU_SUBTYPE_I386_ALL)
	CPUSubtypeX86_64All uint32 = 3          // CPU_SUBTYPE_X86_64_ALL
	CPUSubtypeARMV7     uint32 = 9          // CPU_SUBTYPE_ARM_V7
	CPUSubtypeARM64All  uint32 = 0          // CPU_SUBTYPE_ARM64_ALL
	CPUSubtypeARM64E    uint32 = 2          // CPU_SUBTYPE_ARM64E
	cpuSubtypeMask      uint32 = 0xff000000 // CPU_SUBTYPE_MASK: capability bits such as CPU_SUBTYPE_PTRAUTH_ABI

	cpuSubtypeARM64V8 uint32 = 1  // CPU_SUBTYPE_ARM64_V8
	cpuSubtypeARMV7F  uint32 = 10 // CPU_SUBTYPE_ARM_V7F
	cpuSubtypeARMV7S  uint32 = 11 // CPU_SUBTYPE_ARM_V7S
	cpuSubtypeARMV7K  uint32 = 12 // CPU_SUBTYPE_ARM_V7K
)

// An Arch is one CPU architecture: how Mach-O headers name it and which of
// its registers play which role. Arch values are shared; do not modify them.
type Arch struct {
	Name       string // "arm64", "arm64e", "armv7", "x86_64", "i386"
	CPUType    uint32
	CPUSubtype uint32 // without the capability bits (CPU_SUBTYPE_MASK)
	PtrSize    int    // bytes in a pointer: 8 or 4

	// RegNames lists the general registers in the order the thread state
	// flavor stores them. Registers values are indexed the same way.
	RegNames []string

	// The names of the registers with a special role. LR is empty on x86,
	// which keeps its return address on the stack.
	PC, SP, FP, LR string
}

// The supported architectures.
var (
	ARM64 = &Arch{Name: "arm64", CPUType: CPUTypeARM64, CPUSubtype: CPUSubtypeARM64All, PtrSize: 8,
		RegNames: arm64RegNames, PC: "pc", SP: "sp", FP: "fp", LR: "lr"}
	// ARM64E is arm64 with pointer authentication: return addresses and
	// saved frame pointers carry a signature in their upper bits.
	ARM64E = &Arch{Name: "arm64e", CPUType: CPUTypeARM64, CPUSubtype: CPUSubtypeARM64E, PtrSize: 8,
		RegNames: arm64RegNames, PC: "pc", SP: "sp", FP: "fp", LR: "lr"}
	// ARMV7's frame pointer is r7 on Apple platforms (not r11 as in AAPCS).
	ARMV7 = &Arch{Name: "armv7", CPUType: CPUTypeARM, CPUSubtype: CPUSubtypeARMV7, PtrSize: 4,
		RegNames: armRegNames, PC: "pc", SP: "sp", FP: "r7", LR: "lr"}
	X86_64 = &Arch{Name: "x86_64", CPUType: CPUTypeX86_64, CPUSubtype: CPUSubtypeX86_64All, PtrSize: 8,
		RegNames: x86_64RegNames, PC: "rip", SP: "rsp", FP: "rbp"}
	I386 = &Arch{Name: "i386", CPUType: CPUTypeX86, CPUSubtype: CPUSubtypeX86All, PtrSize: 4,
		RegNames: i386RegNames, PC: "eip", SP: "esp", FP: "ebp"}
)

// Register names in the order of each architecture's thread state struct.
var (
	// arm_thread_state64_t: __x[29], __fp, __lr, __sp, __pc, __cpsr.
	arm64RegNames = []string{
		"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
		"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19",
		"x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
		"fp", "lr", "sp", "pc", "cpsr"}
	// arm_thread_state_t: __r[13], __sp, __lr, __pc, __cpsr.
	armRegNames = []string{
		"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
		"sp", "lr", "pc", "cpsr"}
	// x86_thread_state64_t.
	x86_64RegNames = []string{
		"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		"rip", "rflags", "cs", "fs", "gs"}
	// i386_thread_state_t (x86_thread_state32_t).
	i386RegNames = []string{
		"eax", "ebx", "ecx", "edx", "edi", "esi", "ebp", "esp",
		"ss", "eflags", "eip", "cs", "ds", "es", "fs", "gs"}
)

// All lists the supported architectures.
var All = []*Arch{ARM64, ARM64E, ARMV7, X86_64, I386}

// ByName returns the architecture with the given name ("arm64", "x86_64",
// ...). Names are matched case-insensitively.
func ByName(name string) (*Arch, error) {
	for _, a := range All {
		if strings.EqualFold(a.Name, name) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("archregs: unknown architecture %q", name)
}

// ByCPU returns the architecture a Mach-O header's cputype and cpusubtype
// name. The capability bits of the subtype are ignored.
//
// Subtypes that share a register set and frame layout map to one Arch:
// CPU_SUBTYPE_ARM64_ALL and _V8 to arm64; the ARM v7 variants (v7, v7f,
// v7s, v7k) to armv7; any x86 subtype to i386 or x86_64 (x86_64h is a
// scheduling hint, not a different register set).
func ByCPU(cpuType, cpuSubtype uint32) (*Arch, error) {
	sub := cpuSubtype &^ cpuSubtypeMask
	switch cpuType {
	case CPUTypeARM64:
		switch sub {
		case CPUSubtypeARM64All, cpuSubtypeARM64V8:
			return ARM64, nil
		case CPUSubtypeARM64E:
			return ARM64E, nil
		}
	case CPUTypeARM:
		switch sub {
		case CPUSubtypeARMV7, cpuSubtypeARMV7F, cpuSubtypeARMV7S, cpuSubtypeARMV7K:
			return ARMV7, nil
		}
	case CPUTypeX86_64:
		return X86_64, nil
	case CPUTypeX86:
		return I386, nil
	}
	return nil, fmt.Errorf("archregs: unsupported CPU type %#x subtype %#x", cpuType, cpuSubtype)
}

// RegisterName returns the name under which Registers knows the register
// called name: one of RegNames, or an alias. The aliases are the role names
// "pc", "sp", "fp" and "lr" (for the architecture's PC, SP, FP and LR
// registers), arm64's "x29" and "x30" (fp and lr), and armv7's "r13", "r14"
// and "r15" (sp, lr and pc). Names are matched case-insensitively.
func (a *Arch) RegisterName(name string) (string, bool) {
	name = strings.ToLower(name)
	if a.regIndex(name) >= 0 {
		return name, true
	}
	roles := map[string]string{"pc": a.PC, "sp": a.SP, "fp": a.FP, "lr": a.LR}
	switch a.CPUType {
	case CPUTypeARM64:
		roles["x29"], roles["x30"] = a.FP, a.LR
	case CPUTypeARM:
		roles["r13"], roles["r14"], roles["r15"] = a.SP, a.LR, a.PC
	}
	alias := roles[name]
	if alias == "" || a.regIndex(alias) < 0 {
		return "", false
	}
	return alias, true
}

func (a *Arch) String() string { return a.Name }

// regIndex returns the index of the named register in RegNames, or -1.
func (a *Arch) regIndex(name string) int {
	for i, n := range a.RegNames {
		if n == name {
			return i
		}
	}
	return -1
}
