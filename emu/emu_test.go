//go:build unicorn

package emu

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
)

// codeBase is where the hand-written code of these tests is mapped.
const codeBase = 0x10000

// newCodeMachine returns a machine with code mapped at codeBase and the
// entry state set to run it.
func newCodeMachine(t *testing.T, arch *archregs.Arch, code []byte) *Machine {
	t.Helper()
	m, err := New(arch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Engine.MapMemory(codeBase, PageSize, ProtRead|ProtExec); err != nil {
		t.Fatal(err)
	}
	if err := m.Engine.WriteMemory(codeBase, code); err != nil {
		t.Fatal(err)
	}
	if err := m.SetEntry(codeBase); err != nil {
		t.Fatal(err)
	}
	return m
}

func le32(words ...uint32) []byte {
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

func TestClassify(t *testing.T) {
	const pc = codeBase
	tests := []struct {
		name     string
		arch     *archregs.Arch
		cpsr     uint64 // armv7 only
		insn     []byte
		wantKind insnKind
		wantRet  uint64
	}{
		{"arm64 bl", archregs.ARM64, 0, le32(0x94000010), insnCall, pc + 4},
		{"arm64 blr x8", archregs.ARM64, 0, le32(0xD63F0100), insnCall, pc + 4},
		{"arm64 blraa x8, x9", archregs.ARM64, 0, le32(0xD73F0909), insnCall, pc + 4},
		{"arm64 blraaz x8", archregs.ARM64, 0, le32(0xD63F091F), insnCall, pc + 4},
		{"arm64 ret", archregs.ARM64, 0, le32(0xD65F03C0), insnRet, 0},
		{"arm64 retaa", archregs.ARM64, 0, le32(0xD65F0BFF), insnRet, 0},
		{"arm64 br x16 (tail call)", archregs.ARM64, 0, le32(0xD61F0200), insnOther, 0},
		{"arm64 b (tail call)", archregs.ARM64, 0, le32(0x14000010), insnOther, 0},
		{"arm64 nop", archregs.ARM64, 0, le32(0xD503201F), insnOther, 0},

		{"arm bl", archregs.ARMV7, 0x10, le32(0xEB000001), insnCall, pc + 4},
		{"arm blx r3", archregs.ARMV7, 0x10, le32(0xE12FFF33), insnCall, pc + 4},
		{"arm blx imm", archregs.ARMV7, 0x10, le32(0xFA000001), insnCall, pc + 4},
		{"arm bx lr", archregs.ARMV7, 0x10, le32(0xE12FFF1E), insnRet, 0},
		{"arm mov pc, lr", archregs.ARMV7, 0x10, le32(0xE1A0F00E), insnRet, 0},
		{"arm pop {r7, pc}", archregs.ARMV7, 0x10, le32(0xE8BD8080), insnRet, 0},
		{"arm ldr pc, [sp], #4", archregs.ARMV7, 0x10, le32(0xE49DF004), insnRet, 0},
		{"arm pop {r4, r7} (no pc)", archregs.ARMV7, 0x10, le32(0xE8BD0090), insnOther, 0},
		{"arm bx r3 (tail call)", archregs.ARMV7, 0x10, le32(0xE12FFF13), insnOther, 0},
		{"arm b (tail call)", archregs.ARMV7, 0x10, le32(0xEA000001), insnOther, 0},
		{"arm bleq, Z clear", archregs.ARMV7, 0x10, le32(0x0B000001), insnOther, 0},
		{"arm bleq, Z set", archregs.ARMV7, 0x10 | 1<<30, le32(0x0B000001), insnCall, pc + 4},
		{"arm bxne lr, Z set", archregs.ARMV7, 0x10 | 1<<30, le32(0x112FFF1E), insnOther, 0},
		{"thumb bx lr", archregs.ARMV7, 0x30, []byte{0x70, 0x47}, insnRet, 0},
		{"thumb pop {r7, pc}", archregs.ARMV7, 0x30, []byte{0x80, 0xBD}, insnRet, 0},
		{"thumb blx r3", archregs.ARMV7, 0x30, []byte{0x98, 0x47}, insnCall, pc + 2},
		{"thumb bl", archregs.ARMV7, 0x30, []byte{0x00, 0xF0, 0x00, 0xF8}, insnCall, pc + 4},
		{"thumb b.w (tail call)", archregs.ARMV7, 0x30, []byte{0x00, 0xF0, 0x00, 0xB8}, insnOther, 0},

		{"x86_64 call rel32", archregs.X86_64, 0, []byte{0xE8, 0x10, 0, 0, 0}, insnCall, pc + 5},
		{"x86_64 call *%rax", archregs.X86_64, 0, []byte{0xFF, 0xD0}, insnCall, pc + 2},
		{"x86_64 call *%r11", archregs.X86_64, 0, []byte{0x41, 0xFF, 0xD3}, insnCall, pc + 3},
		{"x86_64 notrack call *%rax", archregs.X86_64, 0, []byte{0x3E, 0xFF, 0xD0}, insnCall, pc + 3},
		{"x86_64 jmp *%rax (tail call)", archregs.X86_64, 0, []byte{0xFF, 0xE0}, insnOther, 0},
		{"x86_64 jmp rel32 (tail call)", archregs.X86_64, 0, []byte{0xE9, 0x10, 0, 0, 0}, insnOther, 0},
		{"x86_64 ret", archregs.X86_64, 0, []byte{0xC3}, insnRet, 0},
		{"x86_64 rep ret", archregs.X86_64, 0, []byte{0xF3, 0xC3}, insnRet, 0},
		{"x86_64 ret imm16", archregs.X86_64, 0, []byte{0xC2, 0x08, 0x00}, insnRet, 0},
		{"i386 get-PC call", archregs.I386, 0, []byte{0xE8, 0, 0, 0, 0}, insnOther, 0},
		{"i386 call *disp32", archregs.I386, 0, []byte{0xFF, 0x15, 0, 0x10, 0, 0}, insnCall, pc + 6},
		{"i386 inc eax (not REX)", archregs.I386, 0, []byte{0x40}, insnOther, 0},
		{"i386 ret", archregs.I386, 0, []byte{0xC3}, insnRet, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newCodeMachine(t, tt.arch, tt.insn)
			if tt.arch == archregs.ARMV7 {
				if err := m.Engine.RegWrite(regARMCPSR, tt.cpsr); err != nil {
					t.Fatal(err)
				}
			}
			kind, ret := m.info.classify(m, pc, tt.insn)
			if kind != tt.wantKind || ret != tt.wantRet {
				t.Errorf("classify(% x) = %d, %#x; want %d, %#x", tt.insn, kind, ret, tt.wantKind, tt.wantRet)
			}
		})
	}
}

func TestConditionPasses(t *testing.T) {
	const n, z, c, v = 1 << 31, 1 << 30, 1 << 29, 1 << 28
	tests := []struct {
		name string
		cond uint32
		cpsr uint32
		want bool
	}{
		{"EQ with Z", 0x0, z, true},
		{"EQ without Z", 0x0, 0, false},
		{"NE with Z", 0x1, z, false},
		{"CS with C", 0x2, c, true},
		{"HI with C and Z", 0x8, c | z, false},
		{"GE with N and V", 0xA, n | v, true},
		{"LT with N only", 0xB, n, true},
		{"GT with Z", 0xC, z, false},
		{"LE with Z", 0xD, z, true},
		{"AL", 0xE, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := conditionPasses(tt.cond, tt.cpsr); got != tt.want {
				t.Errorf("conditionPasses(%#x, %#x) = %v, want %v", tt.cond, tt.cpsr, got, tt.want)
			}
		})
	}
}

// TestRunErrors checks that a run that faults, loops or loses its shadow
// stack ends with an error that says where, not a hang.
func TestRunErrors(t *testing.T) {
	tests := []struct {
		name  string
		arch  *archregs.Arch
		code  []byte
		setup func(m *Machine) error
		check func(t *testing.T, err error)
	}{
		{
			name: "arm64 load from unmapped memory",
			arch: archregs.ARM64,
			code: le32(0xD503201F, 0xF9400020), // nop; ldr x0, [x1]
			setup: func(m *Machine) error {
				return m.Engine.RegWrite(infoARM64.regIDs[1], 0x1234_5000)
			},
			check: func(t *testing.T, err error) {
				var f *MemFault
				if !errors.As(err, &f) {
					t.Fatalf("Run error = %v, want a *MemFault", err)
				}
				want := MemFault{Access: AccessReadUnmapped, Addr: 0x1234_5000, Size: 8, PC: codeBase + 4}
				if diff := cmp.Diff(want, *f); diff != "" {
					t.Errorf("fault (-want +got):\n%s", diff)
				}
				for _, s := range []string{"0x12345000", "0x10004", "read of unmapped"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
			},
		},
		{
			name: "x86_64 store to unmapped memory",
			arch: archregs.X86_64,
			code: []byte{0x48, 0x89, 0x03}, // mov %rax, (%rbx)
			setup: func(m *Machine) error {
				return m.Engine.RegWrite(infoX86_64.regIDs[1], 0x40_0000)
			},
			check: func(t *testing.T, err error) {
				var f *MemFault
				if !errors.As(err, &f) {
					t.Fatalf("Run error = %v, want a *MemFault", err)
				}
				want := MemFault{Access: AccessWriteUnmapped, Addr: 0x40_0000, Size: 8, PC: codeBase}
				if diff := cmp.Diff(want, *f); diff != "" {
					t.Errorf("fault (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "arm64 infinite loop",
			arch: archregs.ARM64,
			code: le32(0x14000000), // b .
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "step budget of 1000") || !strings.Contains(err.Error(), "0x10000") {
					t.Errorf("Run error = %v, want the step budget exhausted at 0x10000", err)
				}
			},
		},
		{
			name: "x86_64 return to a forged address",
			arch: archregs.X86_64,
			code: []byte{0x68, 0x00, 0x00, 0x01, 0x00, 0xC3}, // push $0x10000; ret
			check: func(t *testing.T, err error) {
				var se *ShadowError
				if !errors.As(err, &se) {
					t.Fatalf("Run error = %v, want a *ShadowError", err)
				}
				if se.PC != codeBase || se.Expected != infoX86_64.sentinel {
					t.Errorf("ShadowError PC, Expected = %#x, %#x; want %#x, %#x", se.PC, se.Expected, codeBase, infoX86_64.sentinel)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newCodeMachine(t, tt.arch, tt.code)
			if tt.setup != nil {
				if err := tt.setup(m); err != nil {
					t.Fatal(err)
				}
			}
			_, err := m.Run(RunOptions{MaxSteps: 1000})
			tt.check(t, err)
		})
	}
}

// TestEntryState checks the ABI entry state: SP alignment, FP zero and the
// sentinel as the return address.
func TestEntryState(t *testing.T) {
	tests := []struct {
		name      string
		arch      *archregs.Arch
		spMod16   uint64
		retInLR   bool
		wantShape string
	}{
		{"arm64", archregs.ARM64, 0, true, "lr"},
		{"armv7", archregs.ARMV7, 0, true, "lr"},
		{"x86_64", archregs.X86_64, 8, false, "[sp]"},
		{"i386", archregs.I386, 12, false, "[sp]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newCodeMachine(t, tt.arch, []byte{0, 0, 0, 0})
			regs, err := m.Registers()
			if err != nil {
				t.Fatal(err)
			}
			sp, _ := regs.SP()
			fp, _ := regs.FP()
			pc, _ := regs.PC()
			if sp%16 != tt.spMod16 || sp < m.StackLow || sp > m.StackHigh {
				t.Errorf("SP = %#x, want ≡ %d mod 16 inside [%#x, %#x]", sp, tt.spMod16, m.StackLow, m.StackHigh)
			}
			if fp != 0 || pc != codeBase {
				t.Errorf("FP, PC = %#x, %#x; want 0, %#x", fp, pc, codeBase)
			}
			var ret uint64
			if tt.retInLR {
				ret, _ = regs.LR()
			} else {
				p := make([]byte, tt.arch.PtrSize)
				if _, err := m.ReadMemory(p, sp); err != nil {
					t.Fatal(err)
				}
				for i := len(p) - 1; i >= 0; i-- {
					ret = ret<<8 | uint64(p[i])
				}
			}
			if ret != m.Sentinel {
				t.Errorf("return address in %s = %#x, want the sentinel %#x", tt.wantShape, ret, m.Sentinel)
			}
			want := []Call{{CallSite: m.Sentinel, ReturnAddress: m.Sentinel}}
			if diff := cmp.Diff(want, m.Shadow.Calls); diff != "" {
				t.Errorf("shadow stack at entry (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadRefuses checks that the loader refuses what it cannot run
// faithfully, with an error that says why.
func TestLoadRefuses(t *testing.T) {
	root := repoRoot(t)
	fx := filepath.Join(root, "fixtures")
	corpus := filepath.Join(root, "..", "shared", "corpus")
	tests := []struct {
		name     string
		arch     *archregs.Arch
		path     string
		slide    uint64
		needs    string // "corpus" when the file is in the shared corpus
		wantText string
	}{
		{"wrong architecture", archregs.ARM64, filepath.Join(fx, "bin/chain-x86_64-O0"), 0, "", "is x86_64, the machine runs arm64"},
		{"slide not a page multiple", archregs.ARM64, filepath.Join(fx, "bin/chain-arm64-O0"), 0x800, "", "not a multiple"},
		{"arm64 object", archregs.ARM64, filepath.Join(fx, "obj/chain-arm64-O0.o"), 0, "", "only i386 objects"},
		{"dylib", archregs.ARM64, filepath.Join(corpus, "object-testfiles/macho/fixup-chains-arm64.dylib"), 0, "corpus", "file type 6"},
		{"fat file", archregs.I386, filepath.Join(corpus, "go-debug-macho/fat-gcc-386-amd64-darwin-exec"), 0, "corpus", "fat file"},
		{"binds from dylibs", archregs.X86_64, filepath.Join(corpus, "object-testfiles/macho/base-x86_64"), 0, "corpus", "needs dyld"},
		{"chained fixups", archregs.ARM64, filepath.Join(corpus, "object-testfiles/macho/base-aarch64"), 0, "corpus", "chained fixups"},
		{"object with external relocations", archregs.I386, filepath.Join(corpus, "object-testfiles/macho/reloc-i386.o"), 0, "corpus", "needs a linker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needs == "corpus" {
				if _, err := os.Stat(corpus); err != nil {
					t.Skipf("corpus not present at %s (../shared/corpus from the repo root): %v", corpus, err)
				}
			}
			m, err := New(tt.arch)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			l, err := m.LoadFile(tt.path, tt.slide)
			if err == nil {
				t.Fatalf("LoadFile(%s) = %+v, want an error mentioning %q", tt.path, l, tt.wantText)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("LoadFile(%s) error = %q, want it to mention %q", tt.path, err, tt.wantText)
			}
			if len(m.Images) != 0 {
				t.Errorf("after a refused load, Images = %d, want 0", len(m.Images))
			}
		})
	}
}

// TestLoadOverlap checks that loading an image where another already is
// fails with Unicorn's mapping error rather than overwriting it.
func TestLoadOverlap(t *testing.T) {
	path := filepath.Join(repoRoot(t), "fixtures", "bin", "chain-arm64-O0")
	m, err := New(archregs.ARM64)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.LoadFile(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = m.LoadFile(path, 0)
	var ue *Error
	if !errors.As(err, &ue) || ue.Op != "uc_mem_map" || ue.Msg == "" {
		t.Errorf("second LoadFile at the same slide: error = %v, want a uc_mem_map *Error with Unicorn's message", err)
	}
}

// TestCapture checks what a capture holds: the stack from SP less the red
// zone to the top, the image list, and registers equal to the emulator's.
func TestCapture(t *testing.T) {
	man, dir := readManifest(t)
	for _, out := range man.Outputs {
		if out.Opt != "O1" {
			continue
		}
		t.Run(filepath.Base(out.Path), func(t *testing.T) {
			arch, err := archregs.ByName(out.Arch)
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(arch)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			const slide = 0x8000
			l, err := m.LoadFile(filepath.Join(dir, out.Path), slide)
			if err != nil {
				t.Fatal(err)
			}
			entry, err := SymbolAddress(l.Image, "start")
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SetEntry(entry + l.Slide); err != nil {
				t.Fatal(err)
			}
			stop, err := SymbolAddress(l.Image, "deepest")
			if err != nil {
				t.Fatal(err)
			}
			stop = (stop + l.Slide) &^ 1
			if _, err := m.Run(RunOptions{StopAt: func(pc uint64) bool { return pc == stop }}); err != nil {
				t.Fatal(err)
			}
			snap, err := m.Capture()
			if err != nil {
				t.Fatal(err)
			}
			live, err := m.Registers()
			if err != nil {
				t.Fatal(err)
			}
			th := snap.Threads[0]
			for _, name := range arch.RegNames {
				want, _ := live.Get(name)
				got, ok := th.Registers.Get(name)
				if !ok || got != want {
					t.Errorf("captured %s = %#x (known %v), want %#x", name, got, ok, want)
				}
			}
			sp, _ := live.SP()
			regions := snap.Memory.All()
			if len(regions) != 1 {
				t.Fatalf("captured %d memory regions, want 1 (the stack)", len(regions))
			}
			r := regions[0]
			if r.Address != sp-m.RedZone() || r.Address+uint64(len(r.Data)) != m.StackHigh {
				t.Errorf("stack region [%#x, %#x), want [SP %#x − red zone %d, %#x)", r.Address, r.Address+uint64(len(r.Data)), sp, m.RedZone(), m.StackHigh)
			}
			if th.StackLow != m.StackLow || th.StackHigh != m.StackHigh {
				t.Errorf("thread stack bounds [%#x, %#x), want [%#x, %#x)", th.StackLow, th.StackHigh, m.StackLow, m.StackHigh)
			}
			text, _ := l.Image.TextSegment()
			if len(snap.Images) != 1 || snap.Images[0].UUID != l.Image.UUID || snap.Images[0].LoadAddress != text.Addr+l.Slide {
				t.Errorf("images = %+v, want one with UUID %v at %#x", snap.Images, l.Image.UUID, text.Addr+l.Slide)
			}
		})
	}
}
