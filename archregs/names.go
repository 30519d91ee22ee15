package archregs

import (
	"fmt"
	"strings"
)

// CPUName names a Mach-O CPU type and subtype as Apple's tools do (lipo,
// -arch), including subtypes this package folds together (armv7s and
// armv7k are armv7 here) or does not support (arm64_32, ppc), so that
// slices can be told apart and errors can list every slice. The
// capability bits of the subtype are ignored. An unknown pair reads
// "cputype 0x... subtype 0x...".
func CPUName(cpuType, cpuSubtype uint32) string {
	sub := cpuSubtype &^ cpuSubtypeMask
	if n, ok := cpuNames[cpuType][sub]; ok {
		return n
	}
	if a, err := ByCPU(cpuType, cpuSubtype); err == nil {
		return a.Name
	}
	return fmt.Sprintf("cputype %#x subtype %#x", cpuType, sub)
}

// cpuNames maps CPU type and subtype (<mach/machine.h>) to names.
var cpuNames = map[uint32]map[uint32]string{
	CPUTypeARM: {5: "armv4t", 6: "armv6", 7: "armv5", 8: "xscale", 9: "armv7",
		10: "armv7f", 11: "armv7s", 12: "armv7k", 13: "armv8", 14: "armv6m", 15: "armv7m", 16: "armv7em"},
	CPUTypeARM64:  {0: "arm64", 1: "arm64v8", 2: "arm64e"},
	0x0200000c:    {0: "arm64_32", 1: "arm64_32"}, // CPU_TYPE_ARM64_32
	CPUTypeX86:    {3: "i386"},
	CPUTypeX86_64: {3: "x86_64", 8: "x86_64h"},
	18:            {0: "ppc"},   // CPU_TYPE_POWERPC
	0x01000012:    {0: "ppc64"}, // CPU_TYPE_POWERPC64
}

// FlavorArches returns the architectures that have a general register
// flavor of the given name ("ARM_THREAD_STATE64", "x86_THREAD_STATE"), in
// the order of All; names are matched case-insensitively, and
// "ARM_THREAD_STATE32" is read as ARM_THREAD_STATE (the same struct). A
// unified flavor belongs to every architecture whose state it carries
// (x86_THREAD_STATE to x86_64 and i386).
func FlavorArches(name string) []*Arch {
	if strings.EqualFold(name, "ARM_THREAD_STATE32") {
		name = "ARM_THREAD_STATE"
	}
	var out []*Arch
	for _, a := range All {
		s, err := statesOf(a)
		if err != nil {
			continue
		}
		if strings.EqualFold(s.native.name, name) || s.unified != nil && strings.EqualFold(s.unified.name, name) {
			out = append(out, a)
		}
	}
	return out
}
