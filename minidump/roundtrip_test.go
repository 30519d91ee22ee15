package minidump

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
)

// testRegisters returns registers of arch with every register known and a
// distinct value that fits the register's field in the minidump context:
// 16 bits for AMD64's segment registers, 32 for rflags, cpsr and every
// 32-bit architecture's registers.
func testRegisters(t testing.TB, arch *archregs.Arch, seed uint64) *archregs.Registers {
	t.Helper()
	r := archregs.NewRegisters(arch)
	for i, name := range arch.RegNames {
		v := seed<<40 | uint64(i+1)<<8 | 0x11
		switch {
		case arch == archregs.X86_64 && (name == "cs" || name == "fs" || name == "gs"):
			v &= 0xffff
		case arch.PtrSize == 4 || name == "rflags" || name == "cpsr":
			v &= 0xffffffff
		}
		if err := r.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func testUUID(seed byte) [16]byte {
	var u [16]byte
	for i := range u {
		u[i] = seed + byte(i)*0x11
	}
	return u
}

// testInput returns a dump of arch with two threads, three modules, extra
// memory, an exception and Crashpad annotations.
func testInput(t testing.TB, arch *archregs.Arch, mem64 bool) *WriterInput {
	stack1 := bytes.Repeat([]byte{0xa1, 0xb2, 0xc3, 0xd4}, 64)
	stack2 := bytes.Repeat([]byte{0x55}, 128)
	return &WriterInput{
		Arch: arch, Platform: PlatformMacOS, MajorVersion: 14, MinorVersion: 2, BuildNumber: 1,
		OSBuild: "23C71", CPUCount: 8, Time: time.Unix(1700000000, 0).UTC(), ProcessID: 4242,
		Threads: []WriterThread{
			{ID: 0x103, Name: "main", Registers: testRegisters(t, arch, 1), StackAddr: 0x7000_0000, Stack: stack1},
			{ID: 0x204, Name: "worker ✓", Registers: testRegisters(t, arch, 2), StackAddr: 0x7100_0000, Stack: stack2},
		},
		Modules: []WriterModule{
			{Base: 0x1_0000_0000, Size: 0x4000, Path: "/Applications/App.app/Contents/MacOS/App", UUID: testUUID(0x10)},
			{Base: 0x1_8000_0000, Size: 0x20000, Path: "/usr/lib/system/libsystem_c.dylib", UUID: testUUID(0x20)},
			{Base: 0x1_9000_0000, Size: 0x1000, Path: "/usr/lib/noid.dylib"},
		},
		Memory:   []WriterMemory{{Addr: 0x6000_0000, Data: []byte("heap bytes")}},
		Memory64: mem64,
		Exception: &WriterException{ThreadID: 0x204, Code: 1, Flags: 1, Address: 0x45,
			Registers: testRegisters(t, arch, 3)},
		CrashpadAnnotations: map[string]string{"hello": "world", "pid": "4242"},
		CrashpadModules: []CrashpadModuleInfo{{
			ModuleIndex:       1,
			ListAnnotations:   []string{"abort() called"},
			SimpleAnnotations: map[string]string{"k": "v"},
			Annotations:       []Annotation{{Name: "obj", Type: AnnotationString, Value: []byte("value")}},
		}},
	}
}

func writeDump(t testing.TB, in *WriterInput) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func parseBytes(t testing.TB, b []byte) *Dump {
	t.Helper()
	d, err := Parse(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

func TestRoundTrip(t *testing.T) {
	for _, arch := range []*archregs.Arch{archregs.X86_64, archregs.I386, archregs.ARMV7, archregs.ARM64} {
		for _, mem64 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/memory64=%v", arch.Name, mem64), func(t *testing.T) {
				in := testInput(t, arch, mem64)
				d := parseBytes(t, writeDump(t, in))
				if len(d.Errors) > 0 {
					t.Errorf("Errors = %v, want none", d.Errors)
				}
				if d.Arch != arch {
					t.Errorf("Arch = %v, want %v", d.Arch, arch)
				}
				type sys struct {
					OSName, OSVersion, OSBuild string
					CPUCount                   int
					Time                       time.Time
					PID                        uint32
				}
				gotSys := sys{d.OSName, d.OSVersion, d.OSBuild, d.CPUCount, d.Time, d.MiscInfo.ProcessID}
				wantSys := sys{"macOS", "14.2.1", "23C71", 8, in.Time, 4242}
				if diff := cmp.Diff(wantSys, gotSys); diff != "" {
					t.Errorf("system info (-want +got):\n%s", diff)
				}

				type thread struct {
					ID        uint32
					Name      string
					Regs      map[string]uint64
					StackAddr uint64
					Stack     []byte
				}
				var want, got []thread
				for _, th := range in.Threads {
					want = append(want, thread{th.ID, th.Name, th.Registers.Values(), th.StackAddr, th.Stack})
				}
				for _, th := range d.Threads {
					stack := make([]byte, th.Stack.Size)
					if _, err := d.Memory.ReadMemory(stack, th.Stack.Addr); err != nil {
						t.Errorf("thread %#x stack: ReadMemory: %v", th.ID, err)
					}
					var regs map[string]uint64
					if r := th.Registers(); r != nil {
						regs = r.Values()
					}
					got = append(got, thread{th.ID, th.Name, regs, th.Stack.Addr, stack})
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("threads (-want +got):\n%s", diff)
				}

				type module struct {
					Base, Size    uint64
					Path, Name    string
					UUID          [16]byte
					HasUUID       bool
					DebugID, Code string
				}
				var wantMods, gotMods []module
				for _, m := range in.Modules {
					var id, code string
					if m.UUID != ([16]byte{}) {
						id = fmt.Sprintf("%X0", m.UUID[:])
						code = fmt.Sprintf("%x", m.UUID[:])
					}
					wantMods = append(wantMods, module{m.Base, uint64(m.Size), m.Path, m.Path[bytes.LastIndexByte([]byte(m.Path), '/')+1:],
						m.UUID, m.UUID != [16]byte{}, id, code})
				}
				for _, m := range d.Modules {
					gotMods = append(gotMods, module{m.Base, m.Size, m.Path, m.Name, m.UUID, m.HasUUID, m.DebugID, m.CodeID})
				}
				if diff := cmp.Diff(wantMods, gotMods); diff != "" {
					t.Errorf("modules (-want +got):\n%s", diff)
				}

				heap := make([]byte, 10)
				if _, err := d.Memory.ReadMemory(heap, 0x6000_0000); err != nil || string(heap) != "heap bytes" {
					t.Errorf("ReadMemory(0x60000000) = %q, %v; want %q", heap, err, "heap bytes")
				}

				e := d.Exception
				if e == nil {
					t.Fatal("no exception")
				}
				if e.ThreadID != 0x204 || e.Address != 0x45 || e.Reason != "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS" {
					t.Errorf("exception = thread %#x address %#x reason %q; want 0x204, 0x45, EXC_BAD_ACCESS / KERN_INVALID_ADDRESS",
						e.ThreadID, e.Address, e.Reason)
				}
				if e.Context == nil {
					t.Fatal("exception has no context")
				}
				if diff := cmp.Diff(in.Exception.Registers.Values(), e.Context.Registers.Values()); diff != "" {
					t.Errorf("exception registers (-want +got):\n%s", diff)
				}
				if ct := d.CrashedThread(); ct == nil || ct.ID != 0x204 {
					t.Errorf("CrashedThread() = %v, want thread 0x204", ct)
				}

				wantCP := &CrashpadInfo{Version: 1, SimpleAnnotations: in.CrashpadAnnotations, Modules: in.CrashpadModules}
				if diff := cmp.Diff(wantCP, d.CrashpadInfo); diff != "" {
					t.Errorf("Crashpad info (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestContextOffsets checks the register offsets against the structure
// layouts of DbgHelp.h and Breakpad's minidump_cpu_*.h, written out here
// independently of the layout tables: each context is built by hand and
// the reader must find pc and sp where the headers put them.
func TestContextOffsets(t *testing.T) {
	tests := []struct {
		name            string
		cpu             CPU
		size            int
		flagsOff        int
		flags           uint32
		pcOff, spOff    int
		pcWidth, spSize int
		arch            *archregs.Arch
	}{
		// CONTEXT (AMD64): Rsp at 0x98, Rip at 0xF8, ContextFlags at 0x30.
		{"AMD64", CPUAMD64, 1232, 0x30, 0x0010000b, 0xf8, 0x98, 8, 8, archregs.X86_64},
		// CONTEXT (x86): Eip at 0xB8, Esp at 0xC4.
		{"x86", CPUX86, 716, 0, 0x0001000f, 0xb8, 0xc4, 4, 4, archregs.I386},
		// MDRawContextARM: iregs[13] (sp) at 0x38, iregs[15] (pc) at 0x40.
		{"ARM", CPUARM, 368, 0, 0x40000002, 0x40, 0x38, 4, 4, archregs.ARMV7},
		// CONTEXT (ARM, Windows): Sp at 0x38, Pc at 0x40, as Breakpad's.
		{"ARM Windows", CPUARM, 416, 0, 0x00200003, 0x40, 0x38, 4, 4, archregs.ARMV7},
		// CONTEXT (ARM64): Sp at 0x100, Pc at 0x108.
		{"ARM64", CPUARM64, 912, 0, 0x00400003, 0x108, 0x100, 8, 8, archregs.ARM64},
		// MDRawContextARM64_Old: iregs[31] (sp) at 0x100, iregs[32] (pc) at 0x108.
		{"ARM64 old", CPUARM64Old, 796, 0, 0x80000002, 0x108, 0x100, 8, 8, archregs.ARM64},
		// No system info: the layout comes from the flags and the size.
		{"ARM64 unknown CPU", CPUUnknown, 912, 0, 0x00400003, 0x108, 0x100, 8, 8, archregs.ARM64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, tt.size)
			le.PutUint32(b[tt.flagsOff:], tt.flags)
			put := func(off, width int, v uint64) {
				if width == 4 {
					le.PutUint32(b[off:], uint32(v))
				} else {
					le.PutUint64(b[off:], v)
				}
			}
			put(tt.pcOff, tt.pcWidth, 0x1234_5678)
			put(tt.spOff, tt.spSize, 0x7fff_0000)
			c, err := decodeContext(tt.cpu, tt.cpu != CPUUnknown, b)
			if err != nil {
				t.Fatalf("decodeContext: %v", err)
			}
			if c.Registers.Arch != tt.arch {
				t.Errorf("arch = %v, want %v", c.Registers.Arch, tt.arch)
			}
			if pc, ok := c.Registers.PC(); !ok || pc != 0x1234_5678 {
				t.Errorf("PC() = %#x, %v; want 0x12345678", pc, ok)
			}
			if sp, ok := c.Registers.SP(); !ok || sp != 0x7fff_0000 {
				t.Errorf("SP() = %#x, %v; want 0x7fff0000", sp, ok)
			}
		})
	}
}

// TestContextValidity checks that only the register groups the flags name
// are known, and that a context naming no group (as Breakpad's macOS writer
// leaves them) is read whole.
func TestContextValidity(t *testing.T) {
	ctx, err := encodeContext(testRegisters(t, archregs.X86_64, 1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		flags uint32
		want  []string
	}{
		{"control only", contextAMD64 | ctxControl, []string{"rsp", "rip", "rflags", "cs"}},
		{"integer only", contextAMD64 | ctxInteger, []string{"rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp",
			"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}},
		{"no group", contextAMD64, archregs.X86_64.RegNames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le.PutUint32(ctx[48:], tt.flags)
			c, err := decodeContext(CPUAMD64, true, ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, n := range c.Registers.Known() {
				got[n] = true
			}
			want := map[string]bool{}
			for _, n := range tt.want {
				want[n] = true
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("known registers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMacExceptionNames(t *testing.T) {
	tests := []struct {
		name        string
		cpu         CPU
		code, flags uint32
		params      []uint64
		want        string
	}{
		{"bad access kern", CPUAMD64, 1, 1, nil, "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS"},
		{"bad access arm", CPUARM64, 1, 0x101, nil, "EXC_BAD_ACCESS / EXC_ARM_DA_ALIGN"},
		{"bad access x86 gp", CPUAMD64, 1, 13, nil, "EXC_BAD_ACCESS / EXC_I386_GPFLT"},
		{"bad instruction x86", CPUAMD64, 2, 1, nil, "EXC_BAD_INSTRUCTION / EXC_I386_INVOP"},
		{"bad instruction arm", CPUARM64, 2, 1, nil, "EXC_BAD_INSTRUCTION / EXC_ARM_UNDEFINED"},
		{"arithmetic x86", CPUX86, 3, 1, nil, "EXC_ARITHMETIC / EXC_I386_DIV"},
		{"software abort", CPUARM64, 5, 0x10002, nil, "EXC_SOFTWARE / SIGABRT"},
		{"software unknown", CPUARM64, 5, 0x10003, nil, "EXC_SOFTWARE / 0x00010003"},
		{"breakpoint arm", CPUARM64, 6, 1, nil, "EXC_BREAKPOINT / EXC_ARM_BREAKPOINT"},
		{"breakpoint x86", CPUAMD64, 6, 2, nil, "EXC_BREAKPOINT / EXC_I386_BPT"},
		{"crash signal", CPUARM64, 10, 0x0b000000, nil, "EXC_CRASH / SIGSEGV"},
		// Crashpad's abort(): code 0, EXC_CRASH and its code in the parameters.
		{"crashpad abort", CPUAMD64, 0, 0, []uint64{10, 0x06000000, 0}, "EXC_CRASH / SIGABRT"},
		{"resource", CPUARM64, 11, 0, []uint64{11, 3<<61 | 1<<58, 0}, "EXC_RESOURCE / RESOURCE_TYPE_MEMORY / FLAVOR_HIGH_WATERMARK"},
		{"guard", CPUARM64, 12, 0, []uint64{12, 2 << 61, 0}, "EXC_GUARD / GUARD_TYPE_FD"},
		{"unknown type", CPUARM64, 0x99, 7, nil, "0x00000099 / 0x00000007"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Exception{Code: tt.code, Flags: tt.flags, Parameters: tt.params}
			e.name(PlatformMacOS, tt.cpu)
			if e.Reason != tt.want {
				t.Errorf("Reason for (%#x, %#x) = %q, want %q", tt.code, tt.flags, e.Reason, tt.want)
			}
		})
	}
}

// TestGUIDToUUID checks the byte order against the corpus dump's first
// module, whose RSDS record holds the bytes 7c24e967 4e81 2b39 a027...
// for the Mach-O UUID 67E9247C-814E-392B-A027-DBDE6748FCBF (the UUID
// symbolicator reports for it).
func TestGUIDToUUID(t *testing.T) {
	guid := [16]byte{0x7c, 0x24, 0xe9, 0x67, 0x4e, 0x81, 0x2b, 0x39, 0xa0, 0x27, 0xdb, 0xde, 0x67, 0x48, 0xfc, 0xbf}
	want := [16]byte{0x67, 0xe9, 0x24, 0x7c, 0x81, 0x4e, 0x39, 0x2b, 0xa0, 0x27, 0xdb, 0xde, 0x67, 0x48, 0xfc, 0xbf}
	if got := GUIDToUUID(guid); got != want {
		t.Errorf("GUIDToUUID(%x) = %x, want %x", guid, got, want)
	}
	if got := DebugID(want, 0); got != "67E9247C814E392BA027DBDE6748FCBF0" {
		t.Errorf("DebugID = %q, want 67E9247C814E392BA027DBDE6748FCBF0", got)
	}
	if got := DebugID(want, 0x1a); got != "67E9247C814E392BA027DBDE6748FCBF1A" {
		t.Errorf("DebugID age 0x1a = %q, want ...1A", got)
	}
}
