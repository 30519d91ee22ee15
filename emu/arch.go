//go:build unicorn

package emu

/*
#include <unicorn/unicorn.h>
*/
import "C"

import (
	"fmt"

	"github.com/stackimage/stackimage/archregs"
)

// archInfo is everything the harness needs to know about one architecture,
// chosen once per Machine.
type archInfo struct {
	arch *archregs.Arch
	cpu  CPU
	// regIDs are the Unicorn ids of arch.RegNames, in the same order.
	regIDs []int
	pc, sp int // Unicorn ids of the PC and SP

	// The stack region [stackTop-stackSize, stackTop) and the sentinel
	// return address, far from where images load (0x1000..~0x2_0000_0000).
	stackTop  uint64
	sentinel  uint64
	redZone   uint64 // bytes below SP a leaf may use without moving SP
	ptrSize   int
	pushesRet bool // x86: the return address is pushed, not held in LR
	// objects says object files (MH_OBJECT) load: i386 only, which
	// ld64.lld cannot link, so its fixtures are objects.
	objects bool
	fp      int // Unicorn id of the frame pointer, zeroed at entry to end the chain
	// lr is the Unicorn id of the link register that holds the sentinel at
	// entry, -1 on x86, whose call pushes the return address; cpsr the
	// id of the CPSR on armv7 (its T bit), -1 elsewhere.
	lr, cpsr int

	// classify says what the instruction at pc (of size bytes, already
	// read into insn) does to the call stack.
	classify func(m *Machine, pc uint64, insn []byte) (k insnKind, ret uint64)
}

const defaultStackSize = 1 << 20

var (
	infoARM64 = &archInfo{
		arch: archregs.ARM64, cpu: CPUARM64,
		regIDs: append(seq(C.UC_ARM64_REG_X0, 29),
			C.UC_ARM64_REG_FP, C.UC_ARM64_REG_LR, C.UC_ARM64_REG_SP, C.UC_ARM64_REG_PC, C.UC_ARM64_REG_NZCV),
		pc: C.UC_ARM64_REG_PC, sp: C.UC_ARM64_REG_SP,
		stackTop: 0x7ff0_0000_0000, sentinel: 0x7fff_dead_0000,
		// Apple's arm64 ABI gives leaf functions a 128-byte red zone
		// ("Writing ARM64 code for Apple platforms").
		redZone: 128, ptrSize: 8,
		fp: C.UC_ARM64_REG_FP, lr: C.UC_ARM64_REG_LR, cpsr: -1,
		classify: classifyARM64,
	}
	infoARMV7 = &archInfo{
		arch: archregs.ARMV7, cpu: CPUARM,
		regIDs: append(seq(C.UC_ARM_REG_R0, 13),
			C.UC_ARM_REG_SP, C.UC_ARM_REG_LR, C.UC_ARM_REG_PC, C.UC_ARM_REG_CPSR),
		pc: C.UC_ARM_REG_PC, sp: C.UC_ARM_REG_SP,
		stackTop: 0xb000_0000, sentinel: 0xdead_0000,
		// The 32-bit iOS ABI has no red zone: nothing lives below SP.
		redZone: 0, ptrSize: 4,
		fp: C.UC_ARM_REG_R7, lr: C.UC_ARM_REG_LR, cpsr: C.UC_ARM_REG_CPSR,
		classify: classifyARM,
	}
	infoX86_64 = &archInfo{
		arch: archregs.X86_64, cpu: CPUX86_64,
		regIDs: []int{
			C.UC_X86_REG_RAX, C.UC_X86_REG_RBX, C.UC_X86_REG_RCX, C.UC_X86_REG_RDX,
			C.UC_X86_REG_RDI, C.UC_X86_REG_RSI, C.UC_X86_REG_RBP, C.UC_X86_REG_RSP,
			C.UC_X86_REG_R8, C.UC_X86_REG_R9, C.UC_X86_REG_R10, C.UC_X86_REG_R11,
			C.UC_X86_REG_R12, C.UC_X86_REG_R13, C.UC_X86_REG_R14, C.UC_X86_REG_R15,
			C.UC_X86_REG_RIP, C.UC_X86_REG_RFLAGS, C.UC_X86_REG_CS, C.UC_X86_REG_FS, C.UC_X86_REG_GS},
		pc: C.UC_X86_REG_RIP, sp: C.UC_X86_REG_RSP,
		stackTop: 0x7ff0_0000_0000, sentinel: 0x7fff_dead_0000,
		// The System V x86-64 ABI, which Darwin follows, has a 128-byte red
		// zone.
		redZone: 128, ptrSize: 8, pushesRet: true,
		fp: C.UC_X86_REG_RBP, lr: -1, cpsr: -1,
		classify: classifyX86,
	}
	infoI386 = &archInfo{
		arch: archregs.I386, cpu: CPUX86_32,
		regIDs: []int{
			C.UC_X86_REG_EAX, C.UC_X86_REG_EBX, C.UC_X86_REG_ECX, C.UC_X86_REG_EDX,
			C.UC_X86_REG_EDI, C.UC_X86_REG_ESI, C.UC_X86_REG_EBP, C.UC_X86_REG_ESP,
			C.UC_X86_REG_SS, C.UC_X86_REG_EFLAGS, C.UC_X86_REG_EIP, C.UC_X86_REG_CS,
			C.UC_X86_REG_DS, C.UC_X86_REG_ES, C.UC_X86_REG_FS, C.UC_X86_REG_GS},
		pc: C.UC_X86_REG_EIP, sp: C.UC_X86_REG_ESP,
		stackTop: 0xb000_0000, sentinel: 0xdead_0000,
		// The i386 Darwin ABI has no red zone.
		redZone: 0, ptrSize: 4, pushesRet: true, objects: true,
		fp: C.UC_X86_REG_EBP, lr: -1, cpsr: -1,
		classify: classifyX86,
	}
)

// seq returns n consecutive register ids from first.
func seq(first, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = first + i
	}
	return ids
}

func infoFor(arch *archregs.Arch) (*archInfo, error) {
	if arch == nil {
		return nil, fmt.Errorf("emu: no architecture given")
	}
	for _, in := range []*archInfo{infoARM64, infoARMV7, infoX86_64, infoI386} {
		if in.arch.Name == arch.Name {
			return in, nil
		}
	}
	return nil, fmt.Errorf("emu: cannot emulate %s (supported: arm64, armv7, x86_64, i386)", arch.Name)
}

// regARMCPSR is the Unicorn id of armv7's CPSR, which the call-stack
// classifier reads for the instruction set.
const regARMCPSR = C.UC_ARM_REG_CPSR
