package minidump

import (
	"fmt"

	"github.com/stackimage/stackimage/archregs"
)

// A contextLayout describes one thread context structure: where its flags
// are, which flag names it, and which registers each flag group holds.
// Offsets are those of DbgHelp.h's CONTEXT and Breakpad's MDRawContext*.
type contextLayout struct {
	name     string
	arch     *archregs.Arch
	cpuFlag  uint32 // the flag bit that names this layout
	flagsOff int    // where ContextFlags is
	size     int    // bytes of the fixed structure
	groups   []regGroup
}

// A regGroup is the set of registers one flag bit makes valid.
type regGroup struct {
	flag uint32
	regs []regField
}

// A regField is one register in the context: its archregs name, offset
// and width in bytes.
type regField struct {
	name  string
	off   int
	width int
}

func fields64(names []string, off int) []regField {
	fs := make([]regField, len(names))
	for i, n := range names {
		fs[i] = regField{n, off + 8*i, 8}
	}
	return fs
}

func fields32(names []string, off int) []regField {
	fs := make([]regField, len(names))
	for i, n := range names {
		fs[i] = regField{n, off + 4*i, 4}
	}
	return fs
}

var arm64X = []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
	"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19",
	"x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28"}

var (
	// CONTEXT (AMD64): P1Home..P6Home, ContextFlags at 48, MxCsr, then the
	// 16-bit segment registers at 56 (cs, ds, es, fs, gs, ss), EFlags at
	// 68, six debug registers, Rax..R15 at 120 in Rax, Rcx, Rdx, Rbx, Rsp,
	// Rbp, Rsi, Rdi, R8..R15 order, Rip at 248, then the FP/vector state.
	layoutAMD64 = &contextLayout{name: "AMD64", arch: archregs.X86_64, cpuFlag: contextAMD64,
		flagsOff: 48, size: contextAMD64Size, groups: []regGroup{
			{ctxControl, []regField{{"cs", 56, 2}, {"rflags", 68, 4}, {"rsp", 152, 8}, {"rip", 248, 8}}},
			{ctxInteger, []regField{{"rax", 120, 8}, {"rcx", 128, 8}, {"rdx", 136, 8}, {"rbx", 144, 8},
				{"rbp", 160, 8}, {"rsi", 168, 8}, {"rdi", 176, 8},
				{"r8", 184, 8}, {"r9", 192, 8}, {"r10", 200, 8}, {"r11", 208, 8},
				{"r12", 216, 8}, {"r13", 224, 8}, {"r14", 232, 8}, {"r15", 240, 8}}},
			{ctxSegments, []regField{{"fs", 62, 2}, {"gs", 64, 2}}},
		}}
	// CONTEXT (x86): ContextFlags, six debug registers, the 112-byte
	// FLOATING_SAVE_AREA, then SegGs at 140 .. SegSs at 200.
	layoutX86 = &contextLayout{name: "x86", arch: archregs.I386, cpuFlag: contextX86,
		flagsOff: 0, size: contextX86Size, groups: []regGroup{
			{ctxControl, []regField{{"ebp", 180, 4}, {"eip", 184, 4}, {"cs", 188, 4},
				{"eflags", 192, 4}, {"esp", 196, 4}, {"ss", 200, 4}}},
			{ctxInteger, []regField{{"edi", 156, 4}, {"esi", 160, 4}, {"ebx", 164, 4},
				{"edx", 168, 4}, {"ecx", 172, 4}, {"eax", 176, 4}}},
			{ctxSegments, []regField{{"gs", 140, 4}, {"fs", 144, 4}, {"es", 148, 4}, {"ds", 152, 4}}},
		}}
	// MDRawContextARM (Breakpad, Crashpad): context_flags, iregs[16]
	// (r0..r12, sp, lr, pc), cpsr, then the VFP state. One flag, INTEGER,
	// covers every general register.
	layoutARM = &contextLayout{name: "ARM", arch: archregs.ARMV7, cpuFlag: contextARM,
		flagsOff: 0, size: contextARMSize, groups: []regGroup{
			{ctxInteger, fields32([]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9",
				"r10", "r11", "r12", "sp", "lr", "pc", "cpsr"}, 4)},
		}}
	// CONTEXT (ARM, Windows): the same first 17 words as Breakpad's, but
	// CONTROL holds sp, lr, pc and cpsr and INTEGER r0..r12.
	layoutARMWindows = &contextLayout{name: "ARM (Windows)", arch: archregs.ARMV7, cpuFlag: contextARMMS,
		flagsOff: 0, size: contextARMMSSize, groups: []regGroup{
			{ctxControl, fields32([]string{"sp", "lr", "pc", "cpsr"}, 56)},
			{ctxInteger, fields32([]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9",
				"r10", "r11", "r12"}, 4)},
		}}
	// CONTEXT (ARM64) and MDRawContextARM64: ContextFlags, Cpsr, X0..X28,
	// Fp, Lr, Sp, Pc at 8..272, then the vector and debug registers.
	layoutARM64 = &contextLayout{name: "ARM64", arch: archregs.ARM64, cpuFlag: contextARM64,
		flagsOff: 0, size: contextARM64Size, groups: []regGroup{
			{ctxControl, append(fields64([]string{"fp", "lr", "sp", "pc"}, 240), regField{"cpsr", 4, 4})},
			{ctxInteger, fields64(arm64X, 8)},
		}}
	// MDRawContextARM64_Old (Breakpad before Windows defined ARM64): 64-bit
	// context_flags, iregs[33] (x0..x28, fp, lr, sp, pc), then cpsr at 272.
	// INTEGER covers them all.
	layoutARM64Old = &contextLayout{name: "ARM64 (old Breakpad)", arch: archregs.ARM64, cpuFlag: contextARM64Old,
		flagsOff: 0, size: contextARM64OldSize, groups: []regGroup{
			{ctxInteger, append(fields64(append(append([]string{}, arm64X...), "fp", "lr", "sp", "pc"), 8),
				regField{"cpsr", 272, 4})},
		}}
)

// layoutsFor lists the layouts a context of the given CPU may have, in the
// order they are tried. For an unknown CPU every layout is tried, and the
// context's size must then match exactly.
func layoutsFor(cpu CPU, known bool) []*contextLayout {
	if !known {
		return []*contextLayout{layoutARM64, layoutARMWindows, layoutAMD64, layoutX86, layoutARM, layoutARM64Old}
	}
	switch cpu {
	case CPUAMD64:
		return []*contextLayout{layoutAMD64}
	case CPUX86, CPUX86Win64:
		return []*contextLayout{layoutX86}
	case CPUARM:
		return []*contextLayout{layoutARMWindows, layoutARM}
	case CPUARM64, CPUARM64Old:
		return []*contextLayout{layoutARM64, layoutARM64Old}
	}
	return nil
}

// writerLayouts are the layouts the writer chooses from, by the CPU flag
// archregs gives each architecture (Arch.MinidumpContext).
var writerLayouts = []*contextLayout{layoutAMD64, layoutX86, layoutARM, layoutARM64}

// layoutForArch returns the layout the writer uses for arch.
func layoutForArch(arch *archregs.Arch) *contextLayout {
	if arch == nil || arch.MinidumpContext == 0 {
		return nil
	}
	for _, l := range writerLayouts {
		if l.cpuFlag == arch.MinidumpContext {
			return l
		}
	}
	return nil
}

// A Context is a decoded thread context.
type Context struct {
	Layout    string // "AMD64", "x86", "ARM", "ARM (Windows)", "ARM64", "ARM64 (old Breakpad)"
	Flags     uint32 // ContextFlags (the low 32 bits for the old ARM64 layout)
	Registers *archregs.Registers
}

// decodeContext decodes a thread context of a dump whose CPU is cpu
// (known is false when the dump has no system info). Only the register
// groups the flags name are known in the result.
func decodeContext(cpu CPU, known bool, data []byte) (*Context, error) {
	layouts := layoutsFor(cpu, known)
	if len(layouts) == 0 {
		return nil, fmt.Errorf("no thread context layout for CPU %s", cpu)
	}
	for _, l := range layouts {
		if len(data) < l.flagsOff+4 {
			continue
		}
		flags := le.Uint32(data[l.flagsOff:])
		if flags&l.cpuFlag == 0 {
			continue
		}
		if l == layoutARM64Old && flags&contextARM64 != 0 {
			continue
		}
		if !known && len(data) != l.size && !(l == layoutAMD64 && len(data) > l.size) {
			continue
		}
		if len(data) < l.size {
			return nil, fmt.Errorf("%s context flags %#x need %d bytes, the context has %d", l.name, flags, l.size, len(data))
		}
		// Breakpad's macOS writer sets only the layout's flag, with every
		// register filled in; a context naming no group is read whole.
		groups := flags
		if !l.namesGroup(flags) {
			groups = ^uint32(0)
		}
		regs := archregs.NewRegisters(l.arch)
		for _, g := range l.groups {
			if groups&g.flag == 0 {
				continue
			}
			for _, r := range g.regs {
				var v uint64
				switch r.width {
				case 2:
					v = uint64(le.Uint16(data[r.off:]))
				case 4:
					v = uint64(le.Uint32(data[r.off:]))
				default:
					v = le.Uint64(data[r.off:])
				}
				if err := regs.Set(r.name, v); err != nil {
					return nil, err // a table error: the name is not the arch's
				}
			}
		}
		return &Context{Layout: l.name, Flags: flags, Registers: regs}, nil
	}
	var first uint32
	if len(data) >= 4 {
		first = le.Uint32(data)
	}
	return nil, fmt.Errorf("context of %d bytes (first word %#x) has no flags naming a %s layout", len(data), first, cpuLayoutsName(cpu, known))
}

// namesGroup reports whether flags name any of the layout's groups.
func (l *contextLayout) namesGroup(flags uint32) bool {
	for _, g := range l.groups {
		if flags&g.flag != 0 {
			return true
		}
	}
	return false
}

func cpuLayoutsName(cpu CPU, known bool) string {
	if !known {
		return "known"
	}
	return cpu.String()
}

// encodeContext writes regs in the layout for its architecture. A flag
// group is written when any of its registers is known; its unknown
// registers are written as zero.
func encodeContext(regs *archregs.Registers) ([]byte, error) {
	l := layoutForArch(regs.Arch)
	if l == nil {
		return nil, fmt.Errorf("minidump: no thread context layout for %s", regs.Arch)
	}
	b := make([]byte, l.size)
	flags := l.cpuFlag
	for _, g := range l.groups {
		for _, r := range g.regs {
			v, ok := regs.Get(r.name)
			if !ok {
				continue
			}
			flags |= g.flag
			switch r.width {
			case 2:
				if v > 0xffff {
					return nil, fmt.Errorf("minidump: %s register %s = %#x does not fit in 16 bits", l.name, r.name, v)
				}
				le.PutUint16(b[r.off:], uint16(v))
			case 4:
				if v > 0xffffffff {
					return nil, fmt.Errorf("minidump: %s register %s = %#x does not fit in 32 bits", l.name, r.name, v)
				}
				le.PutUint32(b[r.off:], uint32(v))
			default:
				le.PutUint64(b[r.off:], v)
			}
		}
	}
	le.PutUint32(b[l.flagsOff:], flags)
	return b, nil
}
