package walker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stackimage/stackimage/archregs"
)

// testArch describes an architecture from the ISA's side, independently of
// the package's table: the length of a call instruction (or, for x86, 1)
// and a stack and code address typical of the platform.
type testArch struct {
	arch     *archregs.Arch
	ptr      int
	callSize uint64 // what a caller's lookup address is below its return address
	align    uint64 // the frame-pointer alignment the walker must accept
	stack    uint64 // stack base, 16-aligned
	code     uint64 // start of a code region of 0x10000 bytes
}

var testArchs = []testArch{
	{archregs.ARM64, 8, 4, 8, 0x16fdf0000, 0x100004000},
	{archregs.ARM64E, 8, 4, 8, 0x16fdf0000, 0x100004000},
	{archregs.ARMV7, 4, 2, 4, 0x27df0000, 0x4000},
	{archregs.X86_64, 8, 1, 8, 0x7ff7bfef0000, 0x100003000},
	{archregs.I386, 4, 1, 4, 0xbff00000, 0x2000},
}

func (ta testArch) hasLR() bool { return ta.arch.LR != "" }

func (ta testArch) isARM64() bool { return ta.arch == archregs.ARM64 || ta.arch == archregs.ARM64E }

// pc returns an address in the test code region.
func (ta testArch) pc(off uint64) uint64 { return ta.code + off }

// codeRanges returns the test code region as a CodeChecker.
func (ta testArch) codeRanges() codeRanges { return codeRanges{{ta.code, ta.code + 0x10000}} }

// regs builds registers from role names: "pc", "sp", "fp", "lr". Missing
// roles stay unknown.
func (ta testArch) regs(t testing.TB, vals map[string]uint64) *archregs.Registers {
	t.Helper()
	r := archregs.NewRegisters(ta.arch)
	names := map[string]string{"pc": ta.arch.PC, "sp": ta.arch.SP, "fp": ta.arch.FP, "lr": ta.arch.LR}
	for role, v := range vals {
		if names[role] == "" {
			t.Fatalf("%s has no %s register", ta.arch.Name, role)
		}
		if err := r.Set(names[role], v); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// Frame constructors for the expected results.
func ctxFrame(pc, fp uint64) Frame {
	return Frame{Index: 0, ReturnAddress: pc, LookupAddress: pc, FP: fp, FoundBy: FoundByContext}
}

func (ta testArch) lrFrame(i int, ra, fp uint64) Frame {
	return Frame{Index: i, ReturnAddress: ra, LookupAddress: ra - ta.callSize, FP: fp, FoundBy: FoundByLinkRegister}
}

func (ta testArch) fpFrame(i int, ra, fp uint64) Frame {
	return Frame{Index: i, ReturnAddress: ra, LookupAddress: ra - ta.callSize, FP: fp, FoundBy: FoundByFramePointer}
}

func (ta testArch) spFrame(i int, ra, fp uint64) Frame {
	return Frame{Index: i, ReturnAddress: ra, LookupAddress: ra - ta.callSize, FP: fp, FoundBy: FoundByStackPointer}
}

// scenario is one synthetic stack. build returns the walk's inputs, the
// expected frames and stop, and a string StopDetail must contain.
type scenario struct {
	name  string
	only  func(testArch) bool // nil: every architecture
	build func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string)
}

func withLR(ta testArch) bool    { return ta.hasLR() }
func arm64Only(ta testArch) bool { return ta.isARM64() }

// threeRecords lays out the usual stack: frame 0's record at f0 holding ra1,
// then records at f1 (ra2) and f2 (ra3, saved FP 0: the outermost frame),
// with locals between them.
func threeRecords(t testing.TB, ta testArch, f0, f1, f2 *label, ra1, ra2, ra3 uint64) *stack {
	p := ta.ptr
	return newStack(t, ta.stack, p).
		Skip(2*p).Mark(f0).Record(f1, ra1).
		Skip(4*p).Mark(f1).Record(f2, ra2).
		Skip(2 * p).Mark(f2).Ptr(0).Ptr(ra3).
		Skip(2 * p)
}

var scenarios = []scenario{
	{
		name: "normal chain ends at saved FP 0",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			r := map[string]uint64{"pc": pc, "sp": ta.stack, "fp": f0.addr}
			if ta.hasLR() {
				r["lr"] = ra1 // frame 0 has pushed its record: LR is in it
			}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return ta.regs(t, r), mem, Options{}, want, "frame 3"
		},
	},
	{
		name: "start's marker record (saved FP 0, argc) ends the chain",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, 1).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", f2.addr)
		},
	},
	{
		name: "bounded stack: outermost record exactly at the top",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			opts := Options{StackLow: ta.stack, StackHigh: f2.addr + 2*uint64(ta.ptr)}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, opts, want, "frame 3"
		},
	},
	{
		name: "bounded stack: outermost record straddles the top",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			opts := Options{StackLow: ta.stack, StackHigh: f2.addr + uint64(ta.ptr)}
			want := Result{Stop: StopOutsideStack, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, opts, want, fmt.Sprintf("%#x", f2.addr)
		},
	},
	{
		name: "bounded stack: FP below the bottom",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			mem := threeRecords(t, ta, &f0, &f1, &f2, ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)).Memory()
			pc := ta.pc(0x100)
			opts := Options{StackLow: f0.addr + 16, StackHigh: ta.stack + 0x1000}
			want := Result{Stop: StopOutsideStack, Frames: []Frame{ctxFrame(pc, f0.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, opts, want, fmt.Sprintf("%#x", f0.addr)
		},
	},
	{
		name: "FP register zero",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{ctxFrame(pc, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": 0}), mem, Options{}, want, "frame 0"
		},
	},
	{
		name: "FP register misaligned",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc, fp := ta.pc(0x100), ta.stack+16+ta.align/2
			want := Result{Stop: StopFramePointerMisaligned, Frames: []Frame{ctxFrame(pc, fp)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": fp}), mem, Options{}, want, fmt.Sprintf("%#x", fp)
		},
	},
	{
		name: "FP register below SP",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc, fp := ta.pc(0x100), ta.stack+16
			want := Result{Stop: StopFramePointerNotAbove, Frames: []Frame{ctxFrame(pc, fp)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": fp, "sp": fp + 32}), mem, Options{}, want, fmt.Sprintf("%#x", fp)
		},
	},
	{
		name: "saved FP misaligned",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			p := ta.ptr
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			s := newStack(t, ta.stack, p).
				Skip(2*p).Mark(&f0).Record(&f1, ra1).
				Skip(2*p).Mark(&f1).PtrToOr(&f2, ta.align/2).Ptr(ra2).
				Skip(2 * p).Mark(&f2).Ptr(0).Ptr(ta.pc(0x400)).Skip(4 * p)
			mem := s.Memory()
			pc, bad := ta.pc(0x100), f2.addr|ta.align/2
			want := Result{Stop: StopFramePointerMisaligned, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, bad)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", bad)
		},
	},
	{
		name: "saved FP points backwards",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1 label
			p := ta.ptr
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			mem := newStack(t, ta.stack, p).
				Skip(2*p).Mark(&f0).Record(&f1, ra1).
				Skip(2*p).Mark(&f1).Record(&f0, ra2).Skip(4 * p).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerNotAbove, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f0.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", f0.addr)
		},
	},
	{
		name: "saved FP points at its own record (cycle)",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1 label
			p := ta.ptr
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			mem := newStack(t, ta.stack, p).
				Skip(2*p).Mark(&f0).Record(&f1, ra1).
				Skip(2*p).Mark(&f1).Record(&f1, ra2).Skip(4 * p).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerNotAbove, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f1.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", f1.addr)
		},
	},
	{
		name: "saved FP unreadable",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0 label
			p := ta.ptr
			ra1 := ta.pc(0x200)
			bad := ta.stack + 0x10000
			mem := newStack(t, ta.stack, p).Skip(2 * p).Mark(&f0).Ptr(bad).Ptr(ra1).Skip(2 * p).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopMemoryUnreadable, Frames: []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, bad)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", bad)
		},
	},
	{
		name: "return address slot past the end of memory",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1 label
			p := ta.ptr
			ra1 := ta.pc(0x200)
			// f1's saved FP is readable, its return address is not.
			mem := newStack(t, ta.stack, p).Skip(2*p).Mark(&f0).Record(&f1, ra1).Mark(&f1).Ptr(0).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopMemoryUnreadable, Frames: []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, fmt.Sprintf("%#x", f1.addr+uint64(p))
		},
	},
	{
		name: "return address below 4096",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1 := ta.pc(0x200)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, 0xfff, ta.pc(0x400)).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopPCTooLow, Frames: []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{}, want, "0xfff"
		},
	},
	{
		name: "max depth",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ta.pc(0x400)).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopMaxDepth, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{MaxDepth: 3}, want, "3"
		},
	},
	{
		name: "no PC",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			want := Result{Stop: StopNoRegisters}
			return ta.regs(t, map[string]uint64{"fp": ta.stack + 16}), mem, Options{}, want, ta.arch.PC
		},
	},
	{
		name: "no FP",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopNoRegisters, Frames: []Frame{ctxFrame(pc, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "sp": ta.stack}), mem, Options{}, want, ta.arch.FP
		},
	},
	{
		name: "unsigned return address outside known images is kept",
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			// JIT code and images missing from the list are in no known
			// image; only a stripped value must prove itself.
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.code+0x20000, ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{Code: ta.codeRanges()}, want, "frame 3"
		},
	},

	// Link register (arm64, arm64e, armv7).
	{
		name: "frameless leaf: LR is frame 1",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			// FP is still the caller's: its record holds the caller's own
			// return address (ra2), not LR.
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			r := ta.regs(t, map[string]uint64{"pc": pc, "sp": f1.addr - 16, "fp": f1.addr, "lr": ra1})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.lrFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, Options{Code: ta.codeRanges()}, want, "frame 3"
		},
	},
	{
		name: "call through a null pointer: PC 0, LR the caller",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, ra2, ra3).Memory()
			r := ta.regs(t, map[string]uint64{"pc": 0, "fp": f1.addr, "lr": ra1})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(0, f1.addr), ta.lrFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, Options{}, want, "frame 3"
		},
	},
	{
		name: "leaf with FP zero: LR still emitted",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc, ra1 := ta.pc(0x100), ta.pc(0x200)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{ctxFrame(pc, 0), ta.lrFrame(1, ra1, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": 0, "lr": ra1}), mem, Options{}, want, "frame 1"
		},
	},
	{
		name: "LR below 4096 or not code is ignored",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra2, ra3 := ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, ra2, ra3).Memory()
			pc := ta.pc(0x100)
			// LR holds a data pointer: not in the code ranges.
			r := ta.regs(t, map[string]uint64{"pc": pc, "fp": f1.addr, "lr": ta.stack + 8})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.fpFrame(1, ra2, f2.addr), ta.fpFrame(2, ra3, 0)}}
			return r, mem, Options{Code: ta.codeRanges()}, want, "frame 2"
		},
	},
	{
		name: "LR max depth",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			mem := newStack(t, ta.stack, ta.ptr).Skip(64).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopMaxDepth, Frames: []Frame{ctxFrame(pc, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": 0, "lr": ta.pc(0x200)}), mem, Options{MaxDepth: 1}, want, "1"
		},
	},
	{
		name: "stale LR inside frame 0 without function starts (documented limit)",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			// Frame 0 (function at 0x100) pushed its record, called something
			// that returned to 0x120, and stopped at 0x140: LR is stale.
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc, stale := ta.pc(0x140), ta.pc(0x120)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.lrFrame(1, stale, f0.addr),
				ta.fpFrame(2, ra1, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr, "lr": stale}), mem, Options{}, want, "frame 4"
		},
	},
	{
		name: "stale LR inside frame 0 skipped with function starts",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc, stale := ta.pc(0x140), ta.pc(0x120)
			opts := Options{Functions: funcStarts{ta.pc(0x100), ta.pc(0x180), ta.pc(0x280)}}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr, "lr": stale}), mem, opts, want, "frame 3"
		},
	},
	{
		name: "recursion stopped at the first instruction keeps LR with function starts",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			// f (at 0x100) calls itself at 0x130; the new activation stopped
			// at its first instruction. LR and the calling f's record both
			// hold the return address 0x134.
			var f0, f1, f2 label
			self, ra3 := ta.pc(0x134), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, self, ra3).Memory()
			pc := ta.pc(0x100)
			opts := Options{Functions: funcStarts{ta.pc(0x100), ta.pc(0x180)}}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.lrFrame(1, self, f1.addr), ta.fpFrame(2, self, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f1.addr, "lr": self}), mem, opts, want, "frame 3"
		},
	},
	{
		name: "recursion stopped at the first instruction without function starts loses one activation (documented limit)",
		only: withLR,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			self, ra3 := ta.pc(0x134), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, self, ra3).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.fpFrame(1, self, f2.addr), ta.fpFrame(2, ra3, 0)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f1.addr, "lr": self}), mem, Options{}, want, "frame 2"
		},
	},

	// x86: no link register; [SP] only after a call through a null pointer.
	{
		name: "x86 call through a null pointer: PC 0, [SP] the caller",
		only: func(ta testArch) bool { return !ta.hasLR() },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			// The call pushed ra1 at SP; FP is the caller's (f1).
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			sp := f0.addr + uint64(ta.ptr)
			r := ta.regs(t, map[string]uint64{"pc": 0, "sp": sp, "fp": f1.addr})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(0, f1.addr), ta.spFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, Options{Code: ta.codeRanges()}, want, "frame 3"
		},
	},
	{
		name: "x86 [SP] ignored while PC is valid",
		only: func(ta testArch) bool { return !ta.hasLR() },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc, sp := ta.pc(0x100), f0.addr+uint64(ta.ptr)
			r := ta.regs(t, map[string]uint64{"pc": pc, "sp": sp, "fp": f1.addr})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.fpFrame(1, ra2, f2.addr), ta.fpFrame(2, ra3, 0)}}
			return r, mem, Options{}, want, "frame 2"
		},
	},
	{
		name: "x86 first instruction with function starts: [SP] the caller",
		only: func(ta testArch) bool { return !ta.hasLR() },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
			pc, sp := ta.pc(0x100), f0.addr+uint64(ta.ptr)
			r := ta.regs(t, map[string]uint64{"pc": pc, "sp": sp, "fp": f1.addr})
			opts := Options{Functions: funcStarts{ta.pc(0x100), ta.pc(0x180)}}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.spFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, opts, want, "frame 3"
		},
	},
	{
		name: "x86 null call with [SP] not code",
		only: func(ta testArch) bool { return !ta.hasLR() },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra2, ra3 := ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ta.stack, ra2, ra3).Memory()
			sp := f0.addr + uint64(ta.ptr)
			r := ta.regs(t, map[string]uint64{"pc": 0, "sp": sp, "fp": f1.addr})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(0, f1.addr), ta.fpFrame(1, ra2, f2.addr), ta.fpFrame(2, ra3, 0)}}
			return r, mem, Options{Code: ta.codeRanges()}, want, "frame 2"
		},
	},

	// Pointer authentication (arm64, arm64e).
	{
		name: "PAC-signed return addresses, saved FPs and LR are stripped",
		only: arm64Only,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			p := ta.ptr
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			const sig1, sig2, sig3 = 0x002e000000000000, 0x7f13800000000000, 0x0001800000000000
			mem := newStack(t, ta.stack, p).
				Skip(2*p).Mark(&f0).PtrToOr(&f1, sig2).Ptr(ra1|sig1).
				Skip(4*p).Mark(&f1).PtrToOr(&f2, sig3).Ptr(ra2 | sig2).
				Skip(2 * p).Mark(&f2).Ptr(0).Ptr(ra3 | sig3).Skip(2 * p).Memory()
			pc := ta.pc(0x100)
			// pacibsp signed LR in the prologue, as it is stored in the record.
			r := ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr, "lr": ra1 | sig1})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, Options{Code: ta.codeRanges()}, want, "frame 3"
		},
	},
	{
		name: "PAC mask derived from the highest image (39-bit address space)",
		only: arm64Only,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			// With a 39-bit address space the signature starts at bit 39,
			// which the 47-bit default would keep.
			var f0, f1, f2 label
			p := ta.ptr
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			const sig = 0x0000_4180_0000_0000
			mem := newStack(t, ta.stack, p).
				Skip(2*p).Mark(&f0).PtrToOr(&f1, sig).Ptr(ra1|sig).
				Skip(4*p).Mark(&f1).PtrToOr(&f2, sig).Ptr(ra2 | sig).
				Skip(2 * p).Mark(&f2).Ptr(0).Ptr(0).Skip(2 * p).Memory()
			pc := ta.pc(0x100)
			opts := Options{ImageEnd: 0x1_f000_0000, StackHigh: ta.stack + 0x1000, StackLow: ta.stack}
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, opts, want, fmt.Sprintf("%#x", f2.addr)
		},
	},
	{
		name: "explicit PAC mask",
		only: arm64Only,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1 label
			p := ta.ptr
			ra1 := ta.pc(0x200)
			const sig = 0x0000_4180_0000_0000
			mem := newStack(t, ta.stack, p).
				Skip(2 * p).Mark(&f0).PtrTo(&f1).Ptr(ra1 | sig).
				Skip(4 * p).Mark(&f1).Ptr(0).Ptr(0).Skip(2 * p).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{PACMask: 1<<39 - 1}, want, fmt.Sprintf("%#x", f1.addr)
		},
	},
	{
		name: "PAC-stripped return address in no known image stops the walk",
		only: arm64Only,
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1 := ta.pc(0x200)
			wild := uint64(0x00bd_0000_0bad_c0d0) // strips to 0xbadc0d0: no image there
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, wild, ta.pc(0x400)).Memory()
			pc := ta.pc(0x100)
			want := Result{Stop: StopReturnAddressNotCode, Frames: []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr)}}
			return ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr}), mem, Options{Code: ta.codeRanges()}, want, "0xbd00000badc0d0"
		},
	},

	// armv7.
	{
		name: "armv7 Thumb bit cleared from return addresses and LR",
		only: func(ta testArch) bool { return ta.arch == archregs.ARMV7 },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, ra2|1, ra3|1).Memory()
			pc := ta.pc(0x100)
			r := ta.regs(t, map[string]uint64{"pc": pc, "fp": f1.addr, "lr": ra1 | 1})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f1.addr), ta.lrFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}}
			return r, mem, Options{}, want, "frame 3"
		},
	},
	{
		name: "armv7 Thumb LR equal to the record is no duplicate",
		only: func(ta testArch) bool { return ta.arch == archregs.ARMV7 },
		build: func(t *testing.T, ta testArch) (*archregs.Registers, Memory, Options, Result, string) {
			var f0, f1, f2 label
			ra1, ra2 := ta.pc(0x200), ta.pc(0x300)
			mem := threeRecords(t, ta, &f0, &f1, &f2, ra1|1, ra2|1, 0).Memory()
			pc := ta.pc(0x100)
			r := ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr, "lr": ra1 | 1})
			want := Result{Stop: StopFramePointerZero, Frames: []Frame{
				ctxFrame(pc, f0.addr), ta.fpFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr)}}
			return r, mem, Options{}, want, fmt.Sprintf("%#x", f2.addr)
		},
	},
}

func TestWalk(t *testing.T) {
	for _, ta := range testArchs {
		for _, sc := range scenarios {
			if sc.only != nil && !sc.only(ta) {
				continue
			}
			t.Run(ta.arch.Name+"/"+sc.name, func(t *testing.T) {
				regs, mem, opts, want, detail := sc.build(t, ta)
				got := Walk(regs, mem, opts)
				if diff := cmp.Diff(want.Frames, got.Frames, cmpopts.EquateEmpty(), ignoreRegs); diff != "" {
					t.Errorf("Walk frames mismatch (-want +got):\n%s", diff)
				}
				if got.Stop != want.Stop {
					t.Errorf("Walk stop = %v (%s), want %v", got.Stop, got.StopDetail, want.Stop)
				}
				if !strings.Contains(got.StopDetail, detail) {
					t.Errorf("Walk StopDetail = %q, want it to mention %q", got.StopDetail, detail)
				}
			})
		}
	}
}

// TestWalkDefaultMaxDepth walks chains around the default limit.
func TestWalkDefaultMaxDepth(t *testing.T) {
	tests := []struct {
		name    string
		records int // frame 0 plus one caller per record
		want    int
		stop    StopReason
	}{
		{"longer than the limit", DefaultMaxDepth + 50, DefaultMaxDepth, StopMaxDepth},
		{"exactly the limit", DefaultMaxDepth - 1, DefaultMaxDepth, StopFramePointerZero},
		{"one below the limit", DefaultMaxDepth - 2, DefaultMaxDepth - 1, StopFramePointerZero},
	}
	for _, ta := range testArchs {
		for _, tt := range tests {
			t.Run(ta.arch.Name+"/"+tt.name, func(t *testing.T) {
				mem, fp := longChain(t, ta, tt.records)
				got := Walk(ta.regs(t, map[string]uint64{"pc": ta.pc(0x100), "fp": fp}), mem, Options{})
				if len(got.Frames) != tt.want || got.Stop != tt.stop {
					t.Errorf("Walk: %d frames, stop %v; want %d, %v", len(got.Frames), got.Stop, tt.want, tt.stop)
				}
			})
		}
	}
}

// longChain builds n frame records in a row, each returning to a distinct
// code address, and returns the memory and the innermost FP.
func longChain(t testing.TB, ta testArch, n int) (*memory, uint64) {
	s := newStack(t, ta.stack, ta.ptr)
	labels := make([]label, n+1)
	for i := 0; i < n; i++ {
		s.Mark(&labels[i]).PtrTo(&labels[i+1]).Ptr(ta.pc(0x1000 + uint64(i)*4))
	}
	s.Mark(&labels[n]).Ptr(0).Ptr(0)
	return s.Memory(), labels[0].addr
}

func TestWalkNoArch(t *testing.T) {
	got := Walk(nil, nil, Options{})
	if got.Stop != StopNoRegisters || len(got.Frames) != 0 {
		t.Errorf("Walk(nil) = %d frames, stop %v; want 0, %v", len(got.Frames), got.Stop, StopNoRegisters)
	}
	odd := &archregs.Arch{Name: "ppc", PtrSize: 4, RegNames: []string{"pc"}, PC: "pc"}
	got = Walk(archregs.NewRegisters(odd), nil, Options{})
	if got.Stop != StopNoRegisters || !strings.Contains(got.StopDetail, "ppc") {
		t.Errorf("Walk(ppc) stop = %v %q; want %v naming ppc", got.Stop, got.StopDetail, StopNoRegisters)
	}
}

func TestPACMask(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want uint64
	}{
		{"default 47 bits", Options{}, 0x00007fffffffffff},
		{"explicit", Options{PACMask: 0xfffffffff, ImageEnd: 0x300000000}, 0xfffffffff},
		{"from image end", Options{ImageEnd: 0x1f0000000}, 0x1ffffffff},
		{"image end a power of two", Options{ImageEnd: 0x200000000}, 0x1ffffffff},
		{"stack above images", Options{ImageEnd: 0x1f0000000, StackHigh: 0x300000000}, 0x3ffffffff},
		{"top of the address space", Options{ImageEnd: 1 << 63, StackHigh: ^uint64(0)}, ^uint64(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pacMask(tt.opts); got != tt.want {
				t.Errorf("pacMask(%+v) = %#x, want %#x", tt.opts, got, tt.want)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name string
		got  fmt.Stringer
		want string
	}{
		{"context", FoundByContext, "context"},
		{"link register", FoundByLinkRegister, "link register"},
		{"frame pointer", FoundByFramePointer, "frame pointer"},
		{"stack pointer", FoundByStackPointer, "stack pointer"},
		{"compact unwind", FoundByCompactUnwind, "compact unwind"},
		{"cfi", FoundByCFI, "cfi"},
		{"scan", FoundByScan, "scan"},
		{"async", FoundByAsync, "async"},
		{"unknown FoundBy", FoundBy(99), "FoundBy(99)"},
		{"fp zero", StopFramePointerZero, "fp_zero"},
		{"misaligned", StopFramePointerMisaligned, "fp_misaligned"},
		{"not above", StopFramePointerNotAbove, "fp_not_above"},
		{"outside", StopOutsideStack, "outside_stack"},
		{"unreadable", StopMemoryUnreadable, "memory_unreadable"},
		{"pc too low", StopPCTooLow, "pc_too_low"},
		{"max depth", StopMaxDepth, "max_depth"},
		{"no registers", StopNoRegisters, "no_registers"},
		{"not code", StopReturnAddressNotCode, "return_address_not_code"},
		{"bad unwind info", StopBadUnwindInfo, "bad_unwind_info"},
		{"unwind end", StopUnwindEnd, "unwind_end"},
		{"async chain end", StopAsyncChainEnd, "async_chain_end"},
		{"no caller", StopNoCaller, "no_caller"},
		{"pc not in image", StopPCNotInImage, "pc_not_in_image"},
		{"unknown stop", StopReason(-1), "StopReason(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCallerLookupAddress(t *testing.T) {
	tests := []struct {
		arch *archregs.Arch
		ret  uint64
		want uint64
	}{
		{archregs.ARM64, 0x100003f60, 0x100003f5c},
		{archregs.ARM64E, 0x100003f60, 0x100003f5c},
		{archregs.ARMV7, 0x4001, 0x3ffe}, // Thumb bit cleared, then one half-word
		{archregs.ARMV7, 0x4000, 0x3ffe},
		{archregs.X86_64, 0x100000f80, 0x100000f7f},
		{archregs.I386, 0x1f80, 0x1f7f},
		{nil, 0x1000, 0xfff},
	}
	for _, tt := range tests {
		if got := CallerLookupAddress(tt.arch, tt.ret); got != tt.want {
			t.Errorf("CallerLookupAddress(%v, %#x) = %#x, want %#x", tt.arch, tt.ret, got, tt.want)
		}
	}
}

// ignoreRegs compares frames without their register contexts, which the
// tests of the frame-record rules do not build; the unwind tests check
// them.
var ignoreRegs = cmpopts.IgnoreFields(Frame{}, "Regs", "Trust") // Trust follows FoundBy here; TestTrust checks it
