package crashreport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// regsTransform lets cmp compare register sets by their known values.
var regsTransform = cmp.Transformer("regs", func(r *archregs.Registers) map[string]uint64 {
	if r == nil {
		return nil
	}
	m := map[string]uint64{}
	for _, n := range r.Known() {
		m[n], _ = r.Get(n)
	}
	return m
})

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("ParseUUID(%q): %v", s, err)
	}
	return u
}

func regs(t *testing.T, arch *archregs.Arch, vals map[string]uint64) *archregs.Registers {
	t.Helper()
	r := archregs.NewRegisters(arch)
	for n, v := range vals {
		if err := r.Set(n, v); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The hand-written samples in testdata exercise what the corpus does not:
// arm64 register arrays, source positions, inlined frames, names with
// spaces, last exception backtraces, a wrapped KSCrash report.
func TestSamples(t *testing.T) {
	appPath := "/private/var/containers/Bundle/Application/X/Sample.app/Sample"
	kernPath := "/usr/lib/system/libsystem_kernel.dylib"
	appUUID := mustUUID(t, "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE")
	kernUUID := mustUUID(t, "00112233-4455-6677-8899-AABBCCDDEEFF")
	arm64Regs := map[string]uint64{"x0": 1, "x1": 2, "fp": 6000, "lr": 4294984000, "sp": 5984, "pc": 4294983688, "cpsr": 1610612736}
	otherArm64 := map[string]uint64{"far": 16, "esr": 0x92000006}

	tests := []struct {
		name string
		file string
		want *Report
	}{
		{
			name: "ips",
			file: "arm64.ips",
			want: &Report{
				Format: FormatIPS, Arch: archregs.ARM64,
				Process: "Sample", PID: 42, Path: appPath, Identifier: "com.example.sample", Version: "1.2 (7)",
				OS: "iPhone OS 17.1 (21B80)", Hardware: "iPhone15,2", Time: "2024-01-02 03:04:05.00 +0000",
				IncidentID: "11111111-2222-3333-4444-555555555555", BugType: "309",
				Exception:     Exception{Type: "EXC_CRASH", Signal: "SIGABRT", Codes: "0x0000000000000000, 0x0000000000000000", Reason: "abort() called"},
				CrashedThread: 1,
				Threads: []Thread{
					{Index: 0, KernelID: 100, Queue: "com.apple.main-thread", Frames: []Frame{
						{Address: 7000000000 + 4096, ImageIndex: 1, ImageOffset: 4096, ImageName: "libsystem_kernel.dylib", Symbol: "mach_msg2_trap", SymbolOffset: 8, HasSymbolOffset: true},
					}},
					{Index: 1, ID: 1, KernelID: 101, Name: "worker", Crashed: true, Frames: []Frame{
						{Address: 0x100004008, ImageIndex: 0, ImageOffset: 0x4008, ImageName: "Sample", Symbol: "crash", SymbolOffset: 8, HasSymbolOffset: true, File: "main.c", Line: 12},
						{Address: 0x10000413c, ImageIndex: 0, ImageOffset: 0x413c, ImageName: "Sample", Inlined: true},
					}, Registers: regs(t, archregs.ARM64, arm64Regs), OtherRegisters: otherArm64},
				},
				LastExceptionBacktrace: []Frame{
					{Address: 7000000100, ImageIndex: 1, ImageOffset: 100, ImageName: "libsystem_kernel.dylib", Symbol: "__exceptionPreprocess", SymbolOffset: 4, HasSymbolOffset: true},
				},
				Images: []Image{
					{Name: "Sample", Path: appPath, UUID: appUUID, LoadAddress: 0x100000000, Size: 0x8000, Arch: "arm64"},
					{Name: "libsystem_kernel.dylib", Path: kernPath, UUID: kernUUID, LoadAddress: 7000000000, Size: 0x10000, Arch: "arm64e"},
				},
			},
		},
		{
			name: "crash",
			file: "arm64.crash",
			want: &Report{
				Format: FormatCrash, Arch: archregs.ARM64,
				Process: "Sample", PID: 42, Path: appPath, Identifier: "com.example.sample", Version: "1.2 (7)",
				OS: "iPhone OS 17.1 (21B80)", Hardware: "iPhone15,2", Time: "2024-01-02 03:04:05.000 +0000",
				IncidentID:    "11111111-2222-3333-4444-555555555555",
				Exception:     Exception{Type: "EXC_CRASH", Signal: "SIGABRT", Codes: "0x0000000000000000, 0x0000000000000000", Reason: "abort() called"},
				CrashedThread: 1,
				Threads: []Thread{
					{Index: 0, Queue: "com.apple.main-thread", Frames: []Frame{
						{Address: 0x1a0001000, ImageIndex: 1, ImageOffset: 4096, ImageName: "libsystem_kernel.dylib", Symbol: "mach_msg2_trap", SymbolOffset: 8, HasSymbolOffset: true},
					}},
					{Index: 1, ID: 1, Name: "worker", Crashed: true, Frames: []Frame{
						{Address: 0x100004008, ImageIndex: 0, ImageOffset: 0x4008, ImageName: "Sample", Symbol: "crash", SymbolOffset: 8, HasSymbolOffset: true, File: "main.c", Line: 12},
						{Address: 0x10000413c, ImageIndex: 0, ImageOffset: 0x413c, ImageName: "Sample", Symbol: "-[Sample run:]", File: "main.m", Line: 30, Inlined: true},
						{Address: 0x1a0000200, ImageIndex: 1, ImageOffset: 512, ImageName: "Google Chrome Framework"},
					}, Registers: regs(t, archregs.ARM64, map[string]uint64{"x0": 1, "x1": 2, "fp": 0x1770, "lr": 0x100004140, "sp": 0x1760, "pc": 0x100004008, "cpsr": 0x60000000}),
						OtherRegisters: otherArm64},
				},
				LastExceptionBacktrace: []Frame{
					{Address: 0x1a0000064, ImageIndex: 1, ImageOffset: 0x64, ImageName: "libsystem_kernel.dylib"},
					{Address: 0x100004008, ImageIndex: 0, ImageOffset: 0x4008, ImageName: "Sample"},
				},
				Images: []Image{
					{Name: "Sample", Path: appPath, UUID: appUUID, LoadAddress: 0x100000000, Size: 0x8000, Arch: "arm64"},
					{Name: "libsystem_kernel.dylib", Path: kernPath, UUID: kernUUID, LoadAddress: 0x1a0000000, Size: 0x10000, Arch: "arm64e"},
				},
			},
		},
		{
			name: "kscrash",
			file: "x86_64-kscrash.json",
			want: &Report{
				Format: FormatKSCrash, Arch: archregs.X86_64,
				Process: "Sample", PID: 42, Path: "/Applications/Sample.app/Contents/MacOS/Sample", Identifier: "com.example.sample", Version: "1.2 (7)",
				OS: "macOS 14.1 (23B74)", Hardware: "Macmini9,1", Time: "1700000000",
				IncidentID:    "11111111-2222-3333-4444-555555555555",
				Exception:     Exception{Type: "EXC_BAD_ACCESS", Signal: "SIGSEGV", Codes: "KERN_INVALID_ADDRESS at 0x0", Diagnosis: "Attempted to dereference null pointer."},
				CrashedThread: 0,
				Threads: []Thread{
					{Index: 0, Queue: "com.apple.main-thread", Crashed: true, Frames: []Frame{
						{Address: 4294971400, ImageIndex: 0, ImageOffset: 4104, ImageName: "Sample", Symbol: "crash", SymbolOffset: 8, HasSymbolOffset: true},
						{Address: 4294971500, ImageIndex: 0, ImageOffset: 4204, ImageName: "Sample"},
					},
						Registers:      regs(t, archregs.X86_64, map[string]uint64{"rip": 4294971400, "rsp": 140000000000016, "rbp": 140000000000032, "rax": ^uint64(0), "rflags": 514}),
						OtherRegisters: map[string]uint64{"trapno": 14, "err": 6, "faultvaddr": 0},
						StackLow:       140000000000000, StackHigh: 140000000000016,
						Stack: &StackDump{Start: 140000000000000, SP: 140000000000008, GrowsDown: true,
							Data: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
					},
					{Index: 1, ID: 1, Name: "worker", Frames: []Frame{
						{Address: 140703000000100, ImageIndex: 1, ImageOffset: 100, ImageName: "libsystem_kernel.dylib", Symbol: "__workq_kernreturn", SymbolOffset: 4, HasSymbolOffset: true},
					}},
				},
				Images: []Image{
					{Name: "Sample", Path: "/Applications/Sample.app/Contents/MacOS/Sample", UUID: appUUID, LoadAddress: 4294967296, Size: 16384, VMAddress: 4294967296, Arch: "x86_64"},
					{Name: "libsystem_kernel.dylib", Path: kernPath, UUID: kernUUID, LoadAddress: 140703000000000, Size: 8192, Arch: "x86_64"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("Parse(%s) error: %v", tt.file, err)
			}
			if diff := cmp.Diff(tt.want, got, regsTransform); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}
