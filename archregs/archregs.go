// Package archregs describes the CPU architectures of Apple platforms and
// decodes their register state from the exact bytes thread_get_state(2) or a
// core file's LC_THREAD command holds.
package archregs

import (
	"fmt"
	"strings"

	"github.com/stackimage/stackimage/unwind"
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

	// FPAlign is the alignment every frame pointer keeps in real compiled
	// code: the weakest guarantee seen, not what the C ABI promises
	// (docs/walker.md gives the evidence for each value).
	FPAlign uint64
	// CallSize is subtracted from a return address to land inside the call
	// instruction that pushed it.
	CallSize uint64
	// CodeBits are bits of a code pointer that are not part of the address
	// (armv7's Thumb bit); CodeAddress clears them.
	CodeBits uint64
	// PAC says return addresses and saved frame pointers may carry
	// pointer-authentication bits above the address.
	PAC bool

	// DWARF names, for each DWARF register number, the register of RegNames
	// it is ("" for numbers the thread state does not hold). Unwind tables
	// (package unwind) name registers by these numbers.
	DWARF []string
	// DWARFPC, DWARFSP, DWARFFP and DWARFRA are the DWARF numbers of the
	// registers with those roles. DWARFRA is the return-address column
	// unwind tables use: LR on arm, the PC itself on x86.
	DWARFPC, DWARFSP, DWARFFP, DWARFRA unwind.Reg
	// CalleeSaved lists the DWARF numbers of the registers a function must
	// preserve for its caller; without an unwind rule they keep their value
	// across a frame, and every other register is lost.
	CalleeSaved []unwind.Reg
	// CompactRegs maps compact unwind's register numbers (the x86
	// UNWIND_X86_REG_* and UNWIND_X86_64_REG_* values, 1 to 6) to DWARF
	// numbers; index 0 is unused. Empty on arm, whose compact encodings
	// name registers by fixed bit positions.
	CompactRegs []unwind.Reg
}

// CodeAddress returns a code pointer without the bits that are not part of
// the address (the armv7 Thumb bit).
func (a *Arch) CodeAddress(v uint64) uint64 { return v &^ a.CodeBits }

// CallSite returns the address inside the call instruction that pushed a
// return address: the address to symbolize for a caller.
func (a *Arch) CallSite(returnAddress uint64) uint64 {
	return a.CodeAddress(returnAddress) - a.CallSize
}

// DWARFNumber returns the DWARF number of the named register (a name of
// RegNames or an alias RegisterName accepts).
func (a *Arch) DWARFNumber(name string) (unwind.Reg, bool) {
	name, ok := a.RegisterName(name)
	if !ok {
		return 0, false
	}
	for i, n := range a.DWARF {
		if n == name {
			return unwind.Reg(i), true
		}
	}
	return 0, false
}

// IsCalleeSaved reports whether the register with DWARF number r keeps its
// value across a call.
func (a *Arch) IsCalleeSaved(r unwind.Reg) bool {
	for _, c := range a.CalleeSaved {
		if c == r {
			return true
		}
	}
	return false
}

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
	return nil, &UnknownArchError{Name: name}
}

// UnknownArchError is ByName's error for a name no supported architecture
// has.
type UnknownArchError struct{ Name string }

func (e *UnknownArchError) Error() string {
	return fmt.Sprintf("archregs: unknown architecture %q", e.Name)
}

// UnknownCPUError is ByCPU's error for a CPU type and subtype no supported
// architecture has.
type UnknownCPUError struct{ CPUType, CPUSubtype uint32 }

func (e *UnknownCPUError) Error() string {
	return fmt.Sprintf("archregs: unsupported CPU type %#x subtype %#x", e.CPUType, e.CPUSubtype)
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
	return nil, &UnknownCPUError{CPUType: cpuType, CPUSubtype: cpuSubtype}
}

// ByCPUType returns the first architecture of All with the CPU type,
// whatever the subtype: what a report that names an unknown subtype of a
// known CPU (armv6, say) is read as, since the register layout is the
// type's.
func ByCPUType(cpuType uint32) (*Arch, bool) {
	for _, a := range All {
		if a.CPUType == cpuType {
			return a, true
		}
	}
	return nil, false
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
