package walker

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// rowTable is an Unwinder over address ranges, each with one row, as a
// compact-unwind or CFI table would answer for whole functions.
type rowTable []struct {
	start, end uint64
	row        unwind.Row
	src        unwind.Source
	err        error
}

func (t rowTable) UnwindRow(q UnwindQuery) (*unwind.Row, unwind.Source, error) {
	addr := q.Address
	for i := range t {
		if addr >= t[i].start && addr < t[i].end {
			if t[i].err != nil {
				return nil, 0, t[i].err
			}
			return &t[i].row, t[i].src, nil
		}
	}
	return nil, 0, nil
}

// x86Frameless is the row of an x86_64 function that allocated size bytes
// below its return address and saved no register: CFA = RSP + size + 8,
// return address at CFA - 8.
func x86Frameless(size int64) unwind.Row {
	return unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: size + 8}, RA: 16,
		Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}}}}
}

// summary is what the tests compare of a frame.
type summary struct {
	RA  uint64
	SP  uint64
	How FoundBy
}

func summarize(frames []Frame, arch *archregs.Arch) []summary {
	var out []summary
	for _, f := range frames {
		sp, _ := f.Regs.Get(arch.DWARFSP)
		out = append(out, summary{f.ReturnAddress, sp, f.FoundBy})
	}
	return out
}

// TestWalkByUnwindRows walks x86_64 code without frame pointers: every
// caller comes from a row, and RBP (garbage here) is never followed.
func TestWalkByUnwindRows(t *testing.T) {
	ta := testArchs[3] // x86_64
	const base = 0x7ff7bfef0000
	// Frame 0 (f, 0x20 bytes of locals) was called by g (0x10 bytes), which
	// was called by h, whose row marks it outermost.
	f, g, h := ta.pc(0x100), ta.pc(0x200), ta.pc(0x300)
	s := newStack(t, base, 8)
	s.Skip(0x20).Ptr(g + 5) // f's locals, then its return address into g
	s.Skip(0x10).Ptr(h + 5) // g's locals, then the return address into h
	s.Skip(0x40)            // h's frame
	table := rowTable{
		{start: f, end: f + 0x80, row: x86Frameless(0x20), src: unwind.SourceCompactUnwind},
		{start: g, end: g + 0x80, row: x86Frameless(0x10), src: unwind.SourceEHFrame},
		{start: h, end: h + 0x80, row: unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 8}, RA: 16,
			Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Undefined}}}}, src: unwind.SourceEHFrame},
	}
	regs := ta.regs(t, map[string]uint64{"pc": f + 0x10, "sp": base, "fp": 0xdeadbeef})
	got := Walk(regs, s.Memory(), Options{Unwinder: table})
	want := []summary{
		{f + 0x10, base, FoundByContext},
		{g + 5, base + 0x28, FoundByCompactUnwind},
		{h + 5, base + 0x40, FoundByCFI},
	}
	if diff := cmp.Diff(want, summarize(got.Frames, ta.arch)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if got.Stop != StopUnwindEnd {
		t.Errorf("stop = %v (%s), want %v", got.Stop, got.StopDetail, StopUnwindEnd)
	}
	// Callee-saved registers the rows do not mention keep their value.
	if fp, ok := got.Frames[2].Regs.Get(archregs.X86_64.DWARFFP); !ok || fp != 0xdeadbeef {
		t.Errorf("frame 2 RBP = %#x, %v; want 0xdeadbeef kept", fp, ok)
	}
}

// TestWalkLeafRow: an arm64 frameless leaf's row leaves the return address
// in LR and SP unchanged, the one step where SP may stay the same.
func TestWalkLeafRow(t *testing.T) {
	ta := testArchs[0] // arm64
	leaf, caller := ta.pc(0x100), ta.pc(0x200)
	var f0, f1 label
	s := newStack(t, ta.stack, 8)
	s.Mark(&f0).Record(&f1, ta.pc(0x300)+4).Mark(&f1).Ptr(0).Ptr(0)
	table := rowTable{
		{start: leaf, end: leaf + 0x40, src: unwind.SourceCompactUnwind,
			row: unwind.Row{CFA: unwind.CFA{Reg: 31}, RA: 30,
				Regs: []unwind.RegRule{{Reg: 30, Rule: unwind.Rule{Kind: unwind.SameValue}}}}},
	}
	mem := s.Memory()
	regs := ta.regs(t, map[string]uint64{"pc": leaf + 8, "sp": ta.stack - 0x40, "fp": f0.addr, "lr": caller + 4})
	got := Walk(regs, mem, Options{Unwinder: table})
	want := []summary{
		{leaf + 8, ta.stack - 0x40, FoundByContext},
		{caller + 4, ta.stack - 0x40, FoundByCompactUnwind},
		{ta.pc(0x300) + 4, f0.addr + 16, FoundByFramePointer},
	}
	if diff := cmp.Diff(want, summarize(got.Frames, ta.arch)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if _, ok := got.Frames[1].Regs.Get(archregs.ARM64.DWARFRA); ok {
		t.Errorf("frame 1 LR known; the value was the return address just used")
	}
}

// TestWalkRowRejected: a row whose caller SP would not be above the
// frame's is not trusted, and the frame record is used instead.
func TestWalkRowRejected(t *testing.T) {
	ta := testArchs[3] // x86_64
	var f0, f1 label
	s := newStack(t, ta.stack, 8)
	s.Ptr(0).Mark(&f0).Record(&f1, ta.pc(0x500)).Mark(&f1).Ptr(0).Ptr(0)
	mem := s.Memory()
	pc := ta.pc(0x100)
	bad := unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: -64}, RA: 16,
		Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: 0}}}}
	table := rowTable{{start: pc, end: pc + 0x40, row: bad, src: unwind.SourceEHFrame}}
	regs := ta.regs(t, map[string]uint64{"pc": pc + 8, "sp": ta.stack, "fp": f0.addr})
	got := Walk(regs, mem, Options{Unwinder: table})
	if len(got.Frames) != 2 || got.Frames[1].FoundBy != FoundByFramePointer || got.Frames[1].ReturnAddress != ta.pc(0x500) {
		t.Errorf("frames = %+v, want frame 1 %#x by frame pointer", summarize(got.Frames, ta.arch), ta.pc(0x500))
	}
}

// TestWalkBadUnwindInfo: damaged tables stop the walk with their error,
// and the frames found before are kept.
func TestWalkBadUnwindInfo(t *testing.T) {
	ta := testArchs[3]
	f, g := ta.pc(0x100), ta.pc(0x200)
	s := newStack(t, ta.stack, 8)
	s.Skip(0x20).Ptr(g + 5).Skip(0x40)
	damaged := &unwind.Error{Source: unwind.SourceCompactUnwind, Off: 0x1234, Msg: "second-level page out of range"}
	table := rowTable{
		{start: f, end: f + 0x80, row: x86Frameless(0x20), src: unwind.SourceCompactUnwind},
		{start: g, end: g + 0x80, err: damaged},
	}
	regs := ta.regs(t, map[string]uint64{"pc": f, "sp": ta.stack, "fp": 0})
	got := Walk(regs, s.Memory(), Options{Unwinder: table})
	if len(got.Frames) != 2 || got.Stop != StopBadUnwindInfo {
		t.Fatalf("Walk = %d frames, stop %v (%s); want 2, %v", len(got.Frames), got.Stop, got.StopDetail, StopBadUnwindInfo)
	}
	if !strings.Contains(got.StopDetail, "0x1234") || !errors.As(damaged, new(*unwind.Error)) {
		t.Errorf("StopDetail = %q, want the table offset 0x1234", got.StopDetail)
	}
}

// exprFunc is an unwind.Expr from a function.
type exprFunc func(unwind.Context) (uint64, error)

func (e exprFunc) Eval(ctx unwind.Context) (uint64, error) { return e(ctx) }

// TestWalkExpressionRules: a CFA computed by an expression and a register
// recovered through one, as DWARF expressions and Breakpad rules do.
func TestWalkExpressionRules(t *testing.T) {
	ta := testArchs[3]
	f, g := ta.pc(0x100), ta.pc(0x200)
	s := newStack(t, ta.stack, 8)
	s.Ptr(0x1111).Ptr(g + 5).Skip(0x40) // saved RBX, then the return address
	cfa := exprFunc(func(ctx unwind.Context) (uint64, error) {
		sp, _ := ctx.Reg(7)
		return sp + 16, nil
	})
	rbxAt := exprFunc(func(ctx unwind.Context) (uint64, error) {
		c, ok := ctx.CFA()
		if !ok {
			return 0, errors.New("no CFA")
		}
		return c - 16, nil
	})
	table := rowTable{{start: f, end: f + 0x80, src: unwind.SourceBreakpad, row: unwind.Row{
		CFA: unwind.CFA{Expr: cfa}, RA: 16, Regs: []unwind.RegRule{
			{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}},
			{Reg: 3, Rule: unwind.Rule{Kind: unwind.Expression, Expr: rbxAt}},
		}}}}
	regs := ta.regs(t, map[string]uint64{"pc": f, "sp": ta.stack, "fp": 0})
	got := Walk(regs, s.Memory(), Options{Unwinder: table})
	if len(got.Frames) < 2 || got.Frames[1].ReturnAddress != g+5 || got.Frames[1].FoundBy != FoundByCFI {
		t.Fatalf("frames = %+v, want frame 1 at %#x by cfi", summarize(got.Frames, ta.arch), g+5)
	}
	if rbx, ok := got.Frames[1].Regs.Get(3); !ok || rbx != 0x1111 {
		t.Errorf("frame 1 RBX = %#x, %v; want 0x1111", rbx, ok)
	}
}

// TestWalkScan: with no frame pointer and no rule, a stack word just after
// a call in the code is taken, labelled scan; a code address that does not
// follow a call is passed over.
func TestWalkScan(t *testing.T) {
	ta := testArchs[3]
	code := &memory{base: ta.code, data: make([]byte, 0x1000)}
	// call rel32 ending at 0x205: e8 and a displacement.
	copy(code.data[0x200:], []byte{0xe8, 0, 0, 0, 0})
	noCall := ta.pc(0x300) // bytes before it are zero: no call
	s := newStack(t, ta.stack, 8)
	s.Ptr(0x42).Ptr(noCall).Ptr(ta.pc(0x205)).Skip(0x20)
	regs := ta.regs(t, map[string]uint64{"pc": ta.pc(0x100), "sp": ta.stack})
	opts := Options{Code: ta.codeRanges(), Instructions: code, Unwinder: rowTable{}}
	got := Walk(regs, s.Memory(), opts)
	if len(got.Frames) < 2 || got.Frames[1].ReturnAddress != ta.pc(0x205) || got.Frames[1].FoundBy != FoundByScan {
		t.Fatalf("frames = %+v, want frame 1 %#x by scan", summarize(got.Frames, ta.arch), ta.pc(0x205))
	}
	if sp, _ := got.Frames[1].Regs.Get(7); sp != ta.stack+24 {
		t.Errorf("frame 1 SP = %#x, want %#x (just above the word)", sp, ta.stack+24)
	}
	opts.NoScan = true
	if got := Walk(regs, s.Memory(), opts); len(got.Frames) != 1 || got.Stop != StopNoCaller {
		t.Errorf("NoScan: %d frames, stop %v; want 1, %v", len(got.Frames), got.Stop, StopNoCaller)
	}
}

// TestWalkCFIScan: a scanned caller of a frame whose function has an
// unwind table row that cannot be applied (its CFA is RBP-based, and the
// context has no RBP) is a CFI scan; without the row it is a plain
// scan_code frame.
func TestWalkCFIScan(t *testing.T) {
	ta := testArchs[3]
	code := &memory{base: ta.code, data: make([]byte, 0x1000)}
	copy(code.data[0x200:], []byte{0xe8, 0, 0, 0, 0})
	s := newStack(t, ta.stack, 8)
	s.Ptr(0x42).Ptr(ta.pc(0x205)).Skip(0x20)
	regs := ta.regs(t, map[string]uint64{"pc": ta.pc(0x100), "sp": ta.stack})
	rbpBased := unwind.Row{CFA: unwind.CFA{Reg: 6, Offset: 16}, RA: 16,
		Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}}}}
	for _, tc := range []struct {
		name  string
		table rowTable
		want  Trust
	}{
		{"no row", rowTable{}, TrustScanCode},
		{"a row that cannot be applied", rowTable{{start: ta.pc(0), end: ta.pc(0x180), row: rbpBased, src: unwind.SourceEHFrame}}, TrustCFIScan},
		{"a row of another function", rowTable{{start: ta.pc(0x180), end: ta.pc(0x400), row: rbpBased, src: unwind.SourceEHFrame}}, TrustScanCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Walk(regs, s.Memory(), Options{Code: ta.codeRanges(), Instructions: code, Unwinder: tc.table})
			if len(got.Frames) < 2 || got.Frames[1].ReturnAddress != ta.pc(0x205) || got.Frames[1].FoundBy != FoundByScan {
				t.Fatalf("frames = %+v, want frame 1 %#x by scan", summarize(got.Frames, ta.arch), ta.pc(0x205))
			}
			if got.Frames[1].Trust != tc.want {
				t.Errorf("frame 1 trust %v, want %v", got.Frames[1].Trust, tc.want)
			}
		})
	}
}

// TestWalkScanRunLimit: scanning finds at most maxScanRun frames in a row.
func TestWalkScanRunLimit(t *testing.T) {
	ta := testArchs[3]
	code := &memory{base: ta.code, data: make([]byte, 0x1000)}
	s := newStack(t, ta.stack, 8)
	for i := uint64(0); i < 10; i++ {
		at := 0x100 + i*0x10
		copy(code.data[at:], []byte{0xe8, 0, 0, 0, 0})
		s.Ptr(ta.pc(at + 5))
	}
	regs := ta.regs(t, map[string]uint64{"pc": ta.pc(0x800), "sp": ta.stack})
	got := Walk(regs, s.Memory(), Options{Code: ta.codeRanges(), Instructions: code, Unwinder: rowTable{}})
	if len(got.Frames) != 1+maxScanRun {
		t.Errorf("Walk found %d frames, want frame 0 and %d scanned", len(got.Frames), maxScanRun)
	}
}

// TestWalkAsync builds an extended frame record (saved FP tagged with bit
// 60, async context just below it) and a chain of two async contexts.
func TestWalkAsync(t *testing.T) {
	for _, ta := range []testArch{testArchs[0], testArchs[3]} {
		t.Run(ta.arch.Name, func(t *testing.T) {
			resume1, resume2 := ta.pc(0x400), ta.pc(0x500)
			osCaller := ta.pc(0x600) + 4
			var ctx1, ctx2, rec, outer label
			s := newStack(t, ta.stack, 8)
			s.Mark(&ctx1).PtrTo(&ctx2).Ptr(resume1)
			s.Mark(&ctx2).Ptr(0).Ptr(resume2)
			s.PtrTo(&ctx1) // the async context slot, just below the record
			s.Mark(&rec).PtrToOr(&outer, asyncTag).Ptr(osCaller)
			s.Mark(&outer).Ptr(0).Ptr(0)
			mem := s.Memory()
			regs := ta.regs(t, map[string]uint64{"pc": ta.pc(0x100), "fp": rec.addr})
			if ta.hasLR() {
				regs.Set("lr", ta.pc(0x110)) // recorded below: not a separate caller
				binary.LittleEndian.PutUint64(mem.data[rec.addr-mem.base+8:], ta.pc(0x110))
				osCaller = ta.pc(0x110)
			}

			got := Walk(regs, mem, Options{Async: true})
			want := []summary{{ta.pc(0x100), 0, FoundByContext}, {resume1 + 1, 0, FoundByAsync}, {resume2 + 1, 0, FoundByAsync}}
			sum := summarize(got.Frames, ta.arch)
			for i := range sum {
				sum[i].SP = 0
			}
			if diff := cmp.Diff(want, sum); diff != "" {
				t.Errorf("async frames (-want +got):\n%s", diff)
			}
			if got.Stop != StopAsyncChainEnd {
				t.Errorf("stop = %v (%s), want %v", got.Stop, got.StopDetail, StopAsyncChainEnd)
			}
			if got.Frames[1].LookupAddress != resume1 {
				t.Errorf("async frame lookup = %#x, want the resume function %#x", got.Frames[1].LookupAddress, resume1)
			}

			// Without Async the tag is stripped and the stack followed.
			got = Walk(regs, mem, Options{})
			if len(got.Frames) != 2 || got.Frames[1].ReturnAddress != osCaller || got.Frames[1].FP != outer.addr {
				t.Errorf("OS-stack walk = %+v, want frame 1 %#x with FP %#x", got.Frames, osCaller, outer.addr)
			}
		})
	}
}

func TestX86CallBefore(t *testing.T) {
	tests := []struct {
		name string
		code []byte // the bytes ending at the return address
		want callKind
	}{
		{"call rel32", []byte{0xe8, 1, 0, 0, 0}, callDirect},
		{"call rax", []byte{0xff, 0xd0}, callIndirect},
		{"call r11", []byte{0x41, 0xff, 0xd3}, callIndirect},
		{"call [rax]", []byte{0xff, 0x10}, callIndirect},
		{"call [rbp+8]", []byte{0xff, 0x55, 0x08}, callIndirect},
		{"call [rip+disp32]", []byte{0xff, 0x15, 1, 2, 3, 4}, callIndirect},
		{"call [rax+rbx*8+disp32]", []byte{0xff, 0x94, 0xd8, 1, 2, 3, 4}, callIndirect},
		{"call [rsp+8]", []byte{0xff, 0x54, 0x24, 0x08}, callIndirect},
		{"jmp rax is no call", []byte{0xff, 0xe0}, callNone},
		{"nops", []byte{0x90, 0x90}, callNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := &memory{base: 0x1000, data: make([]byte, 0x100)}
			end := 0x80
			copy(code.data[end-len(tt.code):], tt.code)
			w := newWalk(archregs.X86_64, archInfos[archregs.X86_64.CPUType], nil, Options{Instructions: code})
			if got := x86CallBefore(w, 0x1000+uint64(end)); got.kind != tt.want {
				t.Errorf("x86CallBefore = %+v, want kind %v", got, tt.want)
			}
		})
	}
}

// TestWalkStopsOutsideImages: with unwind tables in use, a caller whose PC
// is in no known image is kept and ends the walk, even when a frame
// record would lead on; without an Unwinder the record is followed.
func TestWalkStopsOutsideImages(t *testing.T) {
	ta := testArchs[3] // x86_64
	f := ta.pc(0x100)
	jit := uint64(0x7f0000001000) // code of no image
	var rec, next label
	s := newStack(t, ta.stack, 8)
	s.Ptr(jit).Mark(&rec).Record(&next, ta.pc(0x500)).Mark(&next).Ptr(0).Ptr(0)
	mem := s.Memory()
	table := rowTable{{start: f, end: f + 0x40, src: unwind.SourceCompactUnwind, row: unwind.Row{
		CFA: unwind.CFA{Reg: 7, Offset: 8}, RA: 16,
		Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}}}}}}
	regs := ta.regs(t, map[string]uint64{"pc": f, "sp": ta.stack, "fp": rec.addr})
	got := Walk(regs, mem, Options{Unwinder: table, Code: ta.codeRanges()})
	if len(got.Frames) != 2 || got.Frames[1].ReturnAddress != jit || got.Stop != StopPCNotInImage {
		t.Errorf("with tables: %+v, stop %v; want frame 1 at %#x and %v", summarize(got.Frames, ta.arch), got.Stop, jit, StopPCNotInImage)
	}
	got = Walk(regs, mem, Options{Code: ta.codeRanges()})
	if len(got.Frames) < 2 || got.Frames[len(got.Frames)-1].ReturnAddress != ta.pc(0x500) {
		t.Errorf("frame records only: %+v; want the record's caller %#x last", summarize(got.Frames, ta.arch), ta.pc(0x500))
	}
}

// TestRuleOnUncheckedRegistersOutsideImages: x86_64 frame 0 whose code
// cannot be read (a dSYM alone), with a __debug_frame row that reads the
// word at SP, a value in no image. The row need not hold at every
// instruction: the walk ends at frame 0 rather than add that caller. A
// compact unwind row, valid where it is given, still adds it, and so does
// the debug_frame row where the code can be read.
func TestRuleOnUncheckedRegistersOutsideImages(t *testing.T) {
	ta := testArchs[3]
	pc, outside := ta.pc(0x100), uint64(0x600000050)
	for _, tc := range []struct {
		name      string
		src       unwind.Source
		readable  bool
		wantDepth int
		wantStop  StopReason
	}{
		{"debug_frame, no code", unwind.SourceDebugFrame, false, 1, StopPCNotInImage},
		{"compact unwind, no code", unwind.SourceCompactUnwind, false, 2, StopPCNotInImage},
		{"debug_frame, code", unwind.SourceDebugFrame, true, 2, StopPCNotInImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStack(t, ta.stack, ta.ptr)
			st.Ptr(outside).Skip(8 * ta.ptr)
			table := rowTable{{start: ta.code, end: ta.code + 0x10000, row: x86Frameless(0), src: tc.src}}
			code := &memory{}
			if tc.readable {
				code = &memory{base: ta.code, data: make([]byte, 0x10000)}
			}
			regs := ta.regs(t, map[string]uint64{"pc": pc, "sp": ta.stack, "fp": 0})
			res := Walk(regs, st.Memory(), Options{Code: ta.codeRanges(), Unwinder: table, Instructions: code,
				StackLow: ta.stack, StackHigh: ta.stack + 0x1000})
			if len(res.Frames) != tc.wantDepth || res.Stop != tc.wantStop {
				t.Errorf("%d frames, stop %v (%s); want %d, %v", len(res.Frames), res.Stop, res.StopDetail, tc.wantDepth, tc.wantStop)
			}
		})
	}
}
