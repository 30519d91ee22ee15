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

// Minidump values of the architectures (DbgHelp.h's
// PROCESSOR_ARCHITECTURE_* and CONTEXT_*, Breakpad's MD_CONTEXT_ARM).
const (
	minidumpCPUX86       = 0          // PROCESSOR_ARCHITECTURE_INTEL
	minidumpCPUARM       = 5          // PROCESSOR_ARCHITECTURE_ARM
	minidumpCPUAMD64     = 9          // PROCESSOR_ARCHITECTURE_AMD64
	minidumpCPUARM64     = 12         // PROCESSOR_ARCHITECTURE_ARM64
	minidumpContextX86   = 0x00010000 // CONTEXT_i386
	minidumpContextAMD64 = 0x00100000 // CONTEXT_AMD64
	minidumpContextARM   = 0x40000000 // MD_CONTEXT_ARM (Breakpad and Crashpad)
	minidumpContextARM64 = 0x00400000 // CONTEXT_ARM64, MD_CONTEXT_ARM64
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
	// ThumbBit is the bit of a code address that says the code there is
	// Thumb (bit 0 on armv7: a BX to an odd address enters Thumb state, and
	// a call from Thumb code leaves it set in LR); 0 without Thumb. The
	// Thumb rule is the methods Thumb and WithThumb.
	ThumbBit uint64
	// ThumbCPSR is the CPSR bit that says the thread executes Thumb code
	// (T, bit 5, on armv7); 0 without Thumb. See ThumbState.
	ThumbCPSR uint64
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
	// DebugFrameReg converts a register number of __debug_frame (the DWARF
	// standard's numbering) to the numbering of DWARF above, which
	// __eh_frame and compact unwind use; nil where the two agree. Only
	// i386 differs (I386DebugFrameReg).
	DebugFrameReg func(unwind.Reg) unwind.Reg
	// NegateRAState says call frame instruction 0x2d is AArch64's
	// DW_CFA_AARCH64_negate_ra_state (toggle "the return address is
	// signed"); elsewhere 0x2d is SPARC's DW_CFA_GNU_window_save, which no
	// Apple architecture has.
	NegateRAState bool
	// CompactRegs maps compact unwind's register numbers (the x86
	// UNWIND_X86_REG_* and UNWIND_X86_64_REG_* values, 1 to 6) to DWARF
	// numbers; index 0 is unused. Empty on arm, whose compact encodings
	// name registers by fixed bit positions.
	CompactRegs []unwind.Reg

	// Exception is the exception state flavor a core's LC_THREAD holds
	// beside the general registers (ARM_EXCEPTION_STATE64, ...); nil when
	// the architecture has none here.
	Exception *ExceptionFormat
	// AddressingBits says a core records how many bits of a pointer are
	// address (the "addrable bits" LC_NOTE), which a debugger needs to
	// strip pointer-authentication bits: the arm64 family.
	AddressingBits bool

	// MinidumpCPU is the minidump system info's ProcessorArchitecture
	// (PROCESSOR_ARCHITECTURE_*) for this architecture, and
	// MinidumpContext the CPU flag (CONTEXT_* or Breakpad's MD_CONTEXT_*)
	// of the thread context layout a writer uses for it. MinidumpContext
	// is 0 for an architecture minidumps cannot hold (MinidumpCPU is then
	// meaningless: 0 is PROCESSOR_ARCHITECTURE_INTEL).
	MinidumpCPU     uint16
	MinidumpContext uint32

	// subtypes are the CPU subtypes ByCPU maps to this Arch; nil for any
	// subtype of CPUType.
	subtypes []uint32
	// states are the thread state flavors it decodes.
	states *archStates
	// aliases are other names of registers RegisterName accepts
	// (arm64's "x29"), beyond the role names.
	aliases map[string]string
}

// Thumb reports whether the code address addr (a return address, a
// function start from LC_FUNCTION_STARTS, a branch target) marks Thumb
// code: its ThumbBit is set. Always false without Thumb.
func (a *Arch) Thumb(addr uint64) bool { return addr&a.ThumbBit != 0 }

// ThumbState reports whether a CPSR value says the thread executes Thumb
// code. Always false without Thumb.
func (a *Arch) ThumbState(cpsr uint64) bool { return cpsr&a.ThumbCPSR != 0 }

// WithThumb returns addr with its ThumbBit set when thumb is true: the
// address a BX (or an emulator's start) needs to run Thumb code there.
// Without Thumb it returns addr.
func (a *Arch) WithThumb(addr uint64, thumb bool) uint64 {
	if thumb {
		return addr | a.ThumbBit
	}
	return addr
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
	for _, a := range All {
		if a.CPUType != cpuType {
			continue
		}
		if a.subtypes == nil {
			return a, nil
		}
		for _, s := range a.subtypes {
			if s == sub {
				return a, nil
			}
		}
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
	alias, ok := a.aliases[name]
	if !ok {
		alias = roles[name]
	}
	if alias == "" || a.regIndex(alias) < 0 {
		return "", false
	}
	return alias, true
}

func (a *Arch) String() string { return a.Name }

// Equal reports whether a and b are the same architecture. Arch values
// are shared, so this is identity; it is what go-cmp uses to compare
// values holding an *Arch, which has function and unexported fields.
func (a *Arch) Equal(b *Arch) bool { return a == b }

// regIndex returns the index of the named register in RegNames, or -1.
func (a *Arch) regIndex(name string) int {
	for i, n := range a.RegNames {
		if n == name {
			return i
		}
	}
	return -1
}
