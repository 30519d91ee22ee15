package symbolize

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// TestCompareBacktraces pairs synthetic walks with synthetic reports: a
// frame only one side has is one explained difference, and the frames
// after it are still paired.
func TestCompareBacktraces(t *testing.T) {
	const pc = 0x1020
	ctx := func(addr uint64) walker.Frame {
		return walker.Frame{Index: 0, ReturnAddress: addr, FoundBy: walker.FoundByContext}
	}
	lr := func(i int, addr uint64) walker.Frame {
		return walker.Frame{Index: i, ReturnAddress: addr, FoundBy: walker.FoundByLinkRegister}
	}
	fp := func(i int, addr uint64) walker.Frame {
		return walker.Frame{Index: i, ReturnAddress: addr, FoundBy: walker.FoundByFramePointer}
	}
	rep := func(addrs ...uint64) []dump.Frame {
		var out []dump.Frame
		for _, a := range addrs {
			out = append(out, dump.Frame{Address: a, ImageIndex: -1})
		}
		return out
	}
	// inF0 is a report whose frame 0 is in a function starting at 0x1000.
	inF0 := func(addrs ...uint64) []dump.Frame {
		out := rep(addrs...)
		out[0].Symbol, out[0].SymbolOffset = "f", out[0].Address-0x1000
		return out
	}
	tests := []struct {
		name     string
		rule     AddressRule
		walked   []walker.Frame
		reported []dump.Frame
		skipped  int
		want     comparison
	}{
		{
			name:     "return addresses, Thumb bit kept by the reporter",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006), fp(2, 0x300e)},
			reported: rep(pc, 0x2007, 0x300e),
			want:     comparison{compared: 3, pairs: []pair{{0, 0}, {1, 1}, {2, 2}}},
		},
		{
			name:     "rounded return addresses",
			rule:     RuleRoundedReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006), fp(2, 0x300e)},
			reported: rep(pc, 0x2000, 0x3008),
			want:     comparison{compared: 3, pairs: []pair{{0, 0}, {1, 1}, {2, 2}}},
		},
		{
			name:     "rounded rule does not accept the unrounded address",
			rule:     RuleRoundedReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006)},
			reported: rep(pc, 0x2006),
			want: comparison{compared: 2, pairs: []pair{{0, 0}},
				diffs: []Difference{{Kind: DiffAddress, WalkIndex: 1, ReportIndex: 1, Walk: 0x2006, Report: 0x2006}}},
		},
		{
			name:     "report omits the link register frame",
			rule:     RuleRoundedReturnAddress,
			walked:   []walker.Frame{ctx(pc), lr(1, 0x5006), fp(2, 0x2006), fp(3, 0x300e)},
			reported: rep(pc, 0x2000, 0x3008),
			want: comparison{compared: 3, pairs: []pair{{0, 0}, {2, 1}, {3, 2}},
				diffs: []Difference{{Kind: DiffReportOmitsLinkRegister, WalkIndex: 1, ReportIndex: -1, Walk: 0x5006}}},
		},
		{
			name:     "an extra frame of ours that is not LR is a mismatch",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x5006), fp(2, 0x2006)},
			reported: rep(pc, 0x2006),
			want: comparison{compared: 2, pairs: []pair{{0, 0}},
				diffs: []Difference{{Kind: DiffAddress, WalkIndex: 1, ReportIndex: 1, Walk: 0x5006, Report: 0x2006}}},
		},
		{
			name:     "LR frame last: nothing after it confirms the omission",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), lr(1, 0x5006)},
			reported: rep(pc, 0x2006),
			want: comparison{compared: 2, pairs: []pair{{0, 0}},
				diffs: []Difference{{Kind: DiffAddress, WalkIndex: 1, ReportIndex: 1, Walk: 0x5006, Report: 0x2006}}},
		},
		{
			name:     "stale LR inside frame 0's function",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), lr(1, 0x1010), fp(2, 0x2006)},
			reported: inF0(pc, 0x2006),
			want: comparison{compared: 2, pairs: []pair{{0, 0}, {2, 1}},
				diffs: []Difference{{Kind: DiffStaleLinkRegister, WalkIndex: 1, ReportIndex: -1, Walk: 0x1010}}},
		},
		{
			name:     "LR below frame 0's function start is its caller",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), lr(1, 0x0ff0), fp(2, 0x2006)},
			reported: inF0(pc, 0x2006),
			want: comparison{compared: 2, pairs: []pair{{0, 0}, {2, 1}},
				diffs: []Difference{{Kind: DiffReportOmitsLinkRegister, WalkIndex: 1, ReportIndex: -1, Walk: 0x0ff0}}},
		},
		{
			name:     "report has an extra frame",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006), fp(2, 0x300e)},
			reported: rep(pc, 0x2006, 0x2006, 0x300e),
			want: comparison{compared: 3, pairs: []pair{{0, 0}, {1, 1}, {2, 3}},
				diffs: []Difference{{Kind: DiffReportExtraFrame, WalkIndex: -1, ReportIndex: 2, Report: 0x2006}}},
		},
		{
			name:     "a mismatch does not shift later frames",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006), fp(2, 0x300e)},
			reported: rep(pc, 0x9990, 0x300e),
			want: comparison{compared: 3, pairs: []pair{{0, 0}, {2, 2}},
				diffs: []Difference{{Kind: DiffAddress, WalkIndex: 1, ReportIndex: 1, Walk: 0x2006, Report: 0x9990}}},
		},
		{
			name:     "PC differs",
			rule:     RuleReturnAddress,
			walked:   []walker.Frame{ctx(pc)},
			reported: rep(pc + 4),
			want: comparison{compared: 1,
				diffs: []Difference{{Kind: DiffAddress, WalkIndex: 0, ReportIndex: 0, Walk: pc, Report: pc + 4}}},
		},
		{
			name:     "skipped frames: the report starts at a caller",
			rule:     RuleRoundedReturnAddress,
			walked:   []walker.Frame{ctx(pc), fp(1, 0x2006), fp(2, 0x300e), fp(3, 0x4002)},
			reported: rep(0x3008, 0x4000),
			skipped:  2,
			want:     comparison{compared: 2, pairs: []pair{{2, 0}, {3, 1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compareBacktraces(archregs.ARMV7, tt.rule, tt.walked, tt.reported, tt.skipped)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(comparison{}, pair{})); diff != "" {
				t.Errorf("compareBacktraces (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReportedLookupAddress checks where a reporter's frames are looked
// up: the PC as it is, return addresses one instruction back, and KSCrash
// 2.x's rounded addresses one instruction back on 32-bit targets but as
// they are on 64-bit ones, where rounding can land on a function's start.
func TestReportedLookupAddress(t *testing.T) {
	tests := []struct {
		name  string
		arch  *archregs.Arch
		rule  AddressRule
		index int
		addr  uint64
		want  uint64
	}{
		{"frame 0 is the PC", archregs.ARMV7, RuleRoundedReturnAddress, 0, 0x3618da1c, 0x3618da1c},
		{"armv7 return address with Thumb bit", archregs.ARMV7, RuleReturnAddress, 1, 0x3625cbff, 0x3625cbfc},
		{"armv7 rounded", archregs.ARMV7, RuleRoundedReturnAddress, 1, 0x3625cbf8, 0x3625cbf6},
		{"arm64 return address", archregs.ARM64, RuleReturnAddress, 1, 0x100003f80, 0x100003f7c},
		{"arm64 rounded", archregs.ARM64, RuleRoundedReturnAddress, 1, 0x100003f80, 0x100003f80},
		{"x86_64 return address", archregs.X86_64, RuleReturnAddress, 2, 0x100003f80, 0x100003f7f},
		{"x86_64 rounded", archregs.X86_64, RuleRoundedReturnAddress, 2, 0x100003f80, 0x100003f80},
		{"i386 rounded", archregs.I386, RuleRoundedReturnAddress, 1, 0x1f88, 0x1f87},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reportedLookupAddress(tt.arch, tt.rule, tt.index, tt.addr); got != tt.want {
				t.Errorf("reportedLookupAddress(%s, %s, %d, %#x) = %#x, want %#x",
					tt.arch.Name, tt.rule, tt.index, tt.addr, got, tt.want)
			}
		})
	}
}

// TestAddressRuleOf checks which threads are taken as KSCrash 2.x's
// rounded backtraces.
func TestAddressRuleOf(t *testing.T) {
	thread := func(skipped int, addrs ...uint64) dump.Thread {
		th := dump.Thread{SkippedFrames: skipped}
		for _, a := range addrs {
			th.Frames = append(th.Frames, dump.Frame{Address: a})
		}
		return th
	}
	stack := []crashreport.Thread{{Stack: &crashreport.StackDump{}}}
	tests := []struct {
		name   string
		report crashreport.Report
		thread dump.Thread
		want   AddressRule
	}{
		{"KSCrash 2.0, all callers multiples of 8",
			crashreport.Report{Format: crashreport.FormatKSCrash, ReportVersion: "2.0", Arch: archregs.ARMV7},
			thread(0, 0x3618da1c, 0x3625cbf8, 0x668a8), RuleRoundedReturnAddress},
		{"KSCrash 2.0, an odd caller (NSException call stack)",
			crashreport.Report{Format: crashreport.FormatKSCrash, ReportVersion: "2.0", Arch: archregs.ARMV7},
			thread(0, 0x35099c5c, 0x35099c5d, 0x315821b8), RuleReturnAddress},
		{"KSCrash 2.0, skipped frames: frame 0 is a caller too",
			crashreport.Report{Format: crashreport.FormatKSCrash, ReportVersion: "2.0", Arch: archregs.ARMV7},
			thread(100, 0x3618da1c, 0x3625cbf8), RuleReturnAddress},
		{"KSCrash 3.3.0",
			crashreport.Report{Format: crashreport.FormatKSCrash, ReportVersion: "3.3.0", Arch: archregs.ARM64},
			thread(0, 0x100003f84, 0x100003f80), RuleReturnAddress},
		{"KSCrash without a version",
			crashreport.Report{Format: crashreport.FormatKSCrash, Arch: archregs.ARM64},
			thread(0, 0x100003f84, 0x100003f80), RuleRoundedReturnAddress},
		{"KSCrash on 64-bit: multiples of 8 are not enough",
			crashreport.Report{Format: crashreport.FormatKSCrash, Arch: archregs.ARM64},
			thread(0, 0x100003f84, 0x100003f88), RuleReturnAddress},
		{"KSCrash text (has a stack dump)",
			crashreport.Report{Format: crashreport.FormatCrash, Arch: archregs.ARMV7, Threads: stack},
			thread(0, 0x3618da1c, 0x3625cbf8), RuleRoundedReturnAddress},
		{"Apple text (no stack dump)",
			crashreport.Report{Format: crashreport.FormatCrash, Arch: archregs.ARMV7},
			thread(0, 0x3618da1c, 0x3625cbf8), RuleReturnAddress},
		{".ips",
			crashreport.Report{Format: crashreport.FormatIPS, Arch: archregs.ARM64},
			thread(0, 0x100003f84, 0x100003f80), RuleReturnAddress},
		{"frame 0 only",
			crashreport.Report{Format: crashreport.FormatKSCrash, ReportVersion: "2.0", Arch: archregs.ARMV7},
			thread(0, 0x3618da1c), RuleReturnAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addressRuleOf(tt.report.Dump(), tt.thread); got != tt.want {
				t.Errorf("addressRuleOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// kscrashWalk is what we expect of our walk of one thread of a KSCrash
// example report, and why.
type kscrashWalk struct {
	compared int
	// differences maps our walk's frame index to the kind of difference
	// found there.
	differences map[int]DifferenceKind
	why         string
}

// kscrashExpected lists, per example report (its .json and .txt forms
// alike), the threads we can walk: those with registers and a stack dump.
// KSCrash 2.0 wrote these reports on an iPhone 4 (armv7, Thumb system
// libraries). Every stack dump is 120 bytes around SP, so each walk stops
// with outside_stack after the frame records it holds: that is expected,
// not a disagreement. NSException has no registers for its crashed thread
// (its backtrace is the exception's call stack) and StackOverflow no stack
// dump; neither is walked.
var kscrashExpected = map[string]map[string]kscrashWalk{
	"Abort": {"crashed": {compared: 4, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "__pthread_kill is a frameless syscall stub: its caller (pthread_kill, called from abort) is only in LR"}},
	"BadPointer": {"crashed": {compared: 3, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "-[Crasher dereferenceBadPointer] is a frameless leaf: its caller in Crash-Tester, which KSCrash never lists, is only in LR"}},
	"CorruptMemory": {"crashed": {compared: 4, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "__pthread_kill again, called by pthread_kill from abort"}},
	"CorruptObject": {"crashed": {compared: 3,
		why: "realizeClass has pushed its frame record: LR equals the record's return address and is not repeated"}},
	"CrashInHandler": {
		"crashed": {compared: 2, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
			why: "dereferenceBadPointer, as in BadPointer"},
		"recrash": {compared: 1,
			why: "__vfprintf had called and returned: LR points back into it, and the record its callee pushed (r7, LR) lies just below SP, so LR is refused; its own record lies beyond the dump"},
	},
	"MainThreadDeadlock": {"crashed": {compared: 4, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "semaphore_wait_signal_trap is a frameless trap stub: its caller is only in LR"}},
	"NSException":   {},
	"StackOverflow": {},
	"Zombie": {"crashed": {compared: 3, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "objc_msgSend is frameless: its caller in Crash-Tester, which messaged the zombie, is only in LR"}},
	"ZombieNSException": {"crashed": {compared: 2, differences: map[int]DifferenceKind{1: DiffReportOmitsLinkRegister},
		why: "objc_msgSend again, called from Foundation"}},
}

// TestKSCrashExampleReports symbolicates every KSCrash example report, JSON
// and text, and checks our walk of every thread we can walk against
// KSCrash's backtrace: frame for frame where KSCrash is right, and each
// difference of the kind expected and verified from the report's own data.
func TestKSCrashExampleReports(t *testing.T) {
	dir := filepath.Join(corpusDir(t), "kscrash", "Example-Reports")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*len(kscrashExpected) {
		t.Fatalf("found %d files in %s, want a .json and a .txt for each of %d reports", len(files), dir, len(kscrashExpected))
	}
	z := &Symbolizer{Symbols: symstore.NewSymbols()}
	for _, file := range files {
		name := filepath.Base(file)
		base := strings.TrimSuffix(name, filepath.Ext(name))
		expected, ok := kscrashExpected[base]
		if !ok {
			t.Errorf("%s: no expectations for this report", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cr, err := crashreport.Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			rep, err := z.Symbolicate(cr.Dump())
			if err != nil {
				t.Fatalf("CrashReport: %v", err)
			}
			checkReportedFrames(t, cr, rep)
			got := map[string]bool{}
			for _, th := range rep.Threads {
				if th.Walk == nil {
					continue
				}
				role := "crashed"
				src := cr.Threads[cr.CrashedThread]
				if strings.HasPrefix(th.Name, "Recrash") {
					role, src = "recrash", *cr.RecrashThread
				} else if !th.Crashed {
					t.Errorf("thread %d was walked; only the crashed thread has a stack dump", th.ID)
					continue
				}
				got[role] = true
				want, ok := expected[role]
				if !ok {
					t.Errorf("%s thread was walked; want no walk", role)
					continue
				}
				t.Run(role, func(t *testing.T) { checkKSCrashWalk(t, cr, src, th.Walk, want) })
			}
			for role := range expected {
				// KSCrash's text form keeps the recrash thread's
				// registers but not its stack dump.
				if !got[role] && !(role == "recrash" && cr.Format == crashreport.FormatCrash) {
					t.Errorf("%s thread not walked; want a walk (%s)", role, expected[role].why)
				}
			}
		})
	}
}

// checkReportedFrames checks that every reported frame survives
// symbolication with the report's own image and symbol, since we have no
// symbol file for any of these images.
func checkReportedFrames(t *testing.T, cr *crashreport.Report, rep *Report) {
	t.Helper()
	all := cr.Threads
	if cr.RecrashThread != nil {
		all = append(append([]crashreport.Thread(nil), all...), *cr.RecrashThread)
	}
	if len(rep.Threads) != len(all) {
		t.Fatalf("%d symbolicated threads, want %d", len(rep.Threads), len(all))
	}
	for i, th := range all {
		got := rep.Threads[i].Frames
		if len(got) != len(th.Frames) {
			t.Errorf("thread %d: %d frames, want the report's %d", th.Index, len(got), len(th.Frames))
			continue
		}
		for j, rf := range th.Frames {
			f := got[j]
			if f.Address != rf.Address || asSpelled(f) != rf.Symbol || f.Image != path.Base(rf.ImageName) {
				t.Errorf("thread %d frame %d = %#x %s %q, want the report's %#x %s %q",
					th.Index, j, f.Address, f.Image, f.Symbol, rf.Address, path.Base(rf.ImageName), rf.Symbol)
			}
		}
	}
}

// checkKSCrashWalk checks one walked thread against its expectations.
func checkKSCrashWalk(t *testing.T, cr *crashreport.Report, th crashreport.Thread, w *Walk, want kscrashWalk) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("expected because %s", want.why)
		}
	})
	if w.AddressRule != RuleRoundedReturnAddress {
		t.Errorf("AddressRule = %q, want %q: KSCrash 2.x rounds return addresses", w.AddressRule, RuleRoundedReturnAddress)
	}
	if w.StopReason != StopReason(walker.StopOutsideStack) {
		t.Errorf("StopReason = %q, want outside_stack: the dump holds %d bytes", w.StopReason, th.StackHigh-th.StackLow)
	}
	if !w.Agrees || w.Compared != want.compared {
		t.Errorf("Agrees, Compared = %v, %d, want true, %d; differences: %v", w.Agrees, w.Compared, want.compared, w.Differences)
	}
	gotKinds := map[int]DifferenceKind{}
	for _, d := range w.Differences {
		gotKinds[d.WalkIndex] = d.Kind
	}
	wantKinds := want.differences
	if wantKinds == nil {
		wantKinds = map[int]DifferenceKind{}
	}
	if diff := cmp.Diff(wantKinds, gotKinds); diff != "" {
		t.Errorf("differences by walk frame (-want +got):\n%s", diff)
	}

	lr, _ := th.Registers.LR()
	pc, _ := th.Registers.PC()
	extra := map[int]bool{}
	for _, d := range w.Differences {
		extra[d.WalkIndex] = true
		f := outerFrame(w.Frames, d.WalkIndex)
		if f == nil {
			t.Errorf("difference %v names no walked frame", d)
			continue
		}
		// Either kind is our frame 1 read from LR, in an image the
		// report lists.
		if f.FoundBy != symstore.FoundBy(walker.FoundByLinkRegister) || f.Address != lr&^1 {
			t.Errorf("frame %d = %#x found by %s, want LR %#x found by link register", d.WalkIndex, f.Address, f.FoundBy, lr&^1)
		}
		if img := imageHolding(cr, f.Address); img == nil || img.Name != f.Image {
			t.Errorf("frame %d (%#x) in image %q, want the report's image holding it (%v)", d.WalkIndex, f.Address, f.Image, img)
		}
		start := th.Frames[0].Address - th.Frames[0].SymbolOffset
		inFrame0 := start <= f.Address && f.Address <= pc
		if inFrame0 != (d.Kind == DiffStaleLinkRegister) {
			t.Errorf("frame %d (%#x) inside frame 0's function [%#x, PC %#x] = %v, but the difference is %s",
				d.WalkIndex, f.Address, start, pc, inFrame0, d.Kind)
		}
		if !strings.Contains(d.Detail, "LR") {
			t.Errorf("Detail %q does not say the frame came from LR", d.Detail)
		}
	}

	// Every other walked frame pairs with the report's next frame: same
	// PC for frame 0, and for callers the return address rounded down to 8
	// as KSCrash 2.x wrote it, in the same image at the same load address,
	// inside the symbol the report named.
	j := 0
	for _, f := range w.Frames {
		if extra[f.Index] {
			continue
		}
		if j >= len(th.Frames) {
			t.Errorf("walk frame %d (%#x) has no reported frame left", f.Index, f.Address)
			break
		}
		rf := th.Frames[j]
		j++
		wantAddr := f.Address
		if f.Index > 0 {
			wantAddr &^= 7
		}
		if rf.Address != wantAddr {
			t.Errorf("walk frame %d %#x vs report frame %d %#x, want the report to hold %#x", f.Index, f.Address, j-1, rf.Address, wantAddr)
		}
		if rf.ImageIndex < 0 || f.Image != path.Base(rf.ImageName) || f.ImageLoadAddress != cr.Images[rf.ImageIndex].LoadAddress {
			t.Errorf("walk frame %d in %s loaded at %#x, want the report's %s (image %d)", f.Index, f.Image, f.ImageLoadAddress, rf.ImageName, rf.ImageIndex)
		}
		if start := rf.Address - rf.SymbolOffset; asSpelled(f) != rf.Symbol || f.SymbolSource != symstore.SourceReport ||
			start > f.LookupAddress || f.SymbolOffset != f.Address-start {
			t.Errorf("walk frame %d = %s + %d (from %s, lookup %#x), want the report's %s starting at %#x",
				f.Index, f.Symbol, f.SymbolOffset, f.SymbolSource, f.LookupAddress, rf.Symbol, start)
		}
	}
}

// imageHolding returns the report's image whose range holds addr.
func imageHolding(cr *crashreport.Report, addr uint64) *crashreport.Image {
	for i, im := range cr.Images {
		if im.LoadAddress <= addr && addr-im.LoadAddress < im.Size {
			return &cr.Images[i]
		}
	}
	return nil
}

// asSpelled returns a frame's name as its source spelled it: the mangled
// name of one that was demangled.
func asSpelled(f symstore.Frame) string {
	if f.MangledSymbol != "" {
		return f.MangledSymbol
	}
	return f.Symbol
}
