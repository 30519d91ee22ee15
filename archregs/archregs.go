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
	CPUSubtypeX86All    uint32 = 3 // CPU_SUBTYPE_X86_ALL (also CPU_SUBTYPE_I386_ALL)
	CPUSubtypeX86_64All uint32 = 3 // CPU_SUBTYPE_X86_64_ALL
	CPUSubtypeARMV7     uint32 = 9 // CPU_SUBTYPE_ARM_V7
	CPUSubtypeARM64All  uint32 = 0 // CPU_SUBTYPE_ARM64_ALL
	CPUSubtypeARM64E    uint32 = 2 // CPU_SUBTYPE_ARM64E
	cpuSubtypeMask      uint32 = 0xff000000
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
	ARM64  = &Arch{} // filled in by arch tables
	ARM64E = &Arch{}
	ARMV7  = &Arch{}
	X86_64 = &Arch{}
	I386   = &Arch{}
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
func ByCPU(cpuType, cpuSubtype uint32) (*Arch, error) {
	return nil, fmt.Errorf("archregs: unimplemented")
}

func (a *Arch) String() string { return a.Name }
