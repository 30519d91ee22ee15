package crashreport

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
)

// TestDump checks that every field of the report reaches the common model.
func TestDump(t *testing.T) {
	regs := archregs.NewRegisters(archregs.ARM64)
	stack := &StackDump{Start: 0x1000, Data: make([]byte, 64)}
	r := &Report{
		Format: FormatKSCrash, Arch: archregs.ARM64, Process: "App", PID: 42, Path: "/App", Identifier: "com.x",
		Version: "1.0 (1)", OS: "iOS 17.0", Hardware: "iPhone15,2", Time: "now", IncidentID: "I", ReportVersion: "3.3.0",
		Exception: Exception{Type: "EXC_BAD_ACCESS", Signal: "SIGSEGV", Codes: "KERN_INVALID_ADDRESS", Address: 8},
		Images:    []Image{{Name: "App", Path: "/App", LoadAddress: 0x100000000, Size: 0x4000, Arch: "arm64"}},
		Threads: []Thread{{Index: 3, ID: 3, KernelID: 77, Name: "main", Queue: "q", Crashed: true, Registers: regs, Stack: stack,
			Frames: []Frame{{Address: 0x100000010, ImageIndex: 0, ImageOffset: 0x10, Symbol: "main"},
				{Address: 0x7fff61bc6c2a, ImageIndex: -1, ImageOffset: 3114, ImageName: "libsystem_kernel.dylib", ImageLoadAddress: 0x7fff61bc6000}},
			SkippedFrames: 2}},
		LastExceptionBacktrace: []Frame{{Address: 0x100000020, ImageIndex: 0}},
		RecrashThread:          &Thread{Index: 9, ID: 9},
		Warnings:               []string{"w"},
	}
	d := r.Dump()
	want := &dump.Dump{
		Format: dump.FormatKSCrash, Arch: archregs.ARM64,
		System:  dump.System{OS: "iOS 17.0", Hardware: "iPhone15,2"},
		Process: dump.Process{Name: "App", PID: 42, Path: "/App", Identifier: "com.x", Version: "1.0 (1)", Time: "now", IncidentID: "I"},
		Crash:   &dump.Crash{Type: "EXC_BAD_ACCESS", Signal: "SIGSEGV", Codes: "KERN_INVALID_ADDRESS", Address: 8, HasAddress: true},
		Images:  []dump.Image{{Name: "App", Path: "/App", LoadAddress: 0x100000000, Size: 0x4000, Arch: "arm64"}},
		Threads: []dump.Thread{{Index: 3, ID: 3, KernelID: 77, Name: "main", Queue: "q", Crashed: true, Registers: regs,
			StackLow: 0x1000, StackHigh: 0x1040, Stack: stack, SkippedFrames: 2,
			Frames: []dump.Frame{{Address: 0x100000010, ImageIndex: 0, ImageOffset: 0x10, ImageLoadAddress: 0x100000000, Symbol: "main"},
				{Address: 0x7fff61bc6c2a, ImageIndex: -1, ImageOffset: 3114, ImageName: "libsystem_kernel.dylib", ImageLoadAddress: 0x7fff61bc6000}}}},
		LastExceptionBacktrace: []dump.Frame{{Address: 0x100000020, ImageIndex: 0, ImageLoadAddress: 0x100000000}},
		RecrashThread:          &dump.Thread{Index: 9, ID: 9},
		ReporterVersion:        "3.3.0",
		Warnings:               []string{"w"},
	}
	opt := cmp.Comparer(func(a, b *archregs.Registers) bool { return a == b })
	stackOpt := cmp.Comparer(func(a, b dump.Memory) bool { return a == b })
	if diff := cmp.Diff(want, d, opt, stackOpt); diff != "" {
		t.Errorf("Dump() mismatch (-want +got):\n%s", diff)
	}
	if (&Report{}).Dump().Crash != nil {
		t.Error("a report without an exception has a Crash")
	}
}
