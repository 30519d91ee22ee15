//go:build unicorn

package emu

import (
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/walker"
)

// PointKind says at which boundary of a function's first activation a
// snapshot is taken.
type PointKind int

const (
	// PointMiddle is the middle one of the boundaries at which the
	// function itself is frame 0 (its callees' boundaries not counted).
	PointMiddle PointKind = iota
	// PointPush is the last boundary before the frame record is pushed:
	// the pushing instruction is about to run (FP is still the caller's).
	PointPush
	// PointAfterPop is the first boundary after the record was popped (FP
	// is the caller's again, the return not yet executed).
	PointAfterPop
	// PointEntry is the function's first instruction.
	PointEntry
)

// String names the point as the snapshot table describes it: "middle",
// "push", "after-pop" or "entry".
func (k PointKind) String() string {
	switch k {
	case PointMiddle:
		return "middle"
	case PointPush:
		return "push"
	case PointAfterPop:
		return "after-pop"
	case PointEntry:
		return "entry"
	}
	return fmt.Sprintf("PointKind(%d)", int(k))
}

// SnapshotPoint is a boundary of a fixture run kept as a snapshot in
// fixtures/snapshots/, so that pure-Go tests and `make run` have real
// captures without Unicorn.
type SnapshotPoint struct {
	Name     string // file name without .json: "chain-arm64-O1-deepest"
	Output   string // the fixture output: "chain-arm64-O1"
	Function string // the function to stop in
	Kind     PointKind
	// Why says what the snapshot exercises.
	Why string
}

// SnapshotPoints are the committed snapshots. Every one is a boundary at
// which the frame-pointer walker recovers the true chain, so that the
// stackimage command prints it.
var SnapshotPoints = []SnapshotPoint{
	{"chain-arm64-O1-deepest", "chain-arm64-O1", "deepest", PointMiddle, "frameless leaf mid-body: the caller comes from LR"},
	{"chain-x86_64-O1-deepest", "chain-x86_64-O1", "deepest", PointMiddle, "leaf with a frame record, mid-body"},
	{"chain-armv7-O1-deepest", "chain-armv7-O1", "deepest", PointMiddle, "frameless leaf mid-body: the caller comes from LR"},
	{"chain-i386-O1-deepest", "chain-i386-O1", "deepest", PointMiddle, "leaf with a frame record, mid-body; an object file without UUID"},
	{"chain-arm64-O1-big_frame-prologue", "chain-arm64-O1", "big_frame", PointPush, "prologue: callee-saved registers stored, stp x29, x30 not yet run"},
	{"chain-x86_64-O1-big_frame-prologue", "chain-x86_64-O1", "big_frame", PointPush, "first instruction (push rbp): the caller is the word at SP"},
	{"chain-arm64-O2-with_alloca-epilogue", "chain-arm64-O2", "with_alloca", PointAfterPop, "epilogue after ldp x29, x30: the caller comes from LR again"},
	{"noreturn-arm64-O1-halt", "noreturn-arm64-O1", "halt", PointEntry, "noreturn chain at halt: return addresses at the next function's start"},
	{"noreturn-x86_64-O1-halt", "noreturn-x86_64-O1", "halt", PointEntry, "noreturn chain at halt"},
	{"async-arm64-O1-deepest", "async-arm64-O1", "deepest", PointMiddle, "Swift async: level2 and level1 have extended frame records (bit 60 in the saved FP, context at FP-8); async_chain in MANIFEST.json"},
	{"dwarf-x86_64-O1-deepest", "dwarf-x86_64-O1", "deepest", PointMiddle, "preserve_most frames whose compact unwind is DWARF-only, with frame records"},
	{"chain-nofp-x86_64-O1-deepest", "chain-nofp-x86_64-O1", "deepest", PointMiddle, "no frame pointers: rbp keeps the value the run began with; with a dSYM alone (no unwind tables, no code) only a scan checked by the symbols finds the callers"},
	{"chain-nofp-arm64-O1-deepest", "chain-nofp-arm64-O1", "deepest", PointMiddle, "no frame pointers: x29 keeps the value the run began with; with a Breakpad file lacking a function's STACK CFI, a scan checked by the symbols goes on"},
}

// SnapshotSlide is the slide snapshots are captured at: nonzero, as ASLR
// would give, so that reading them exercises sliding; a multiple of arm64's
// 16 KiB page.
const SnapshotSlide = 0xc000

// CapturePoint runs a point's fixture to the point and captures it. It
// returns the snapshot, with each image named by its path in the fixtures
// directory ("bin/chain-arm64-O1") so that the output does not depend on
// where the repository is, and the true chain's function names, innermost
// first ("???" for the sentinel return address, which is in no image). It
// is an error if the walk of the capture differs from the truth.
func CapturePoint(dir string, pt SnapshotPoint) (*snapshot.Snapshot, []string, error) {
	man, err := fixtures.Load()
	if err != nil {
		return nil, nil, err
	}
	var out fixtures.Output
	for _, o := range man.Outputs {
		if o.Name() == pt.Output {
			out = o
		}
	}
	if out.Path == "" {
		return nil, nil, fmt.Errorf("emu: snapshot %s: no fixture output %s", pt.Name, pt.Output)
	}
	prog, _ := man.Program(out.Program)
	target, err := pointStep(dir, prog, out, pt)
	if err != nil {
		return nil, nil, fmt.Errorf("emu: snapshot %s: %w", pt.Name, err)
	}
	s, err := newSweeper(dir, prog, out, SnapshotSlide)
	if err != nil {
		return nil, nil, err
	}
	defer s.m.Close()
	n := 0
	reason, err := s.m.Run(RunOptions{StopAt: func(uint64) bool { n++; return n == target }})
	if err != nil {
		return nil, nil, fmt.Errorf("emu: snapshot %s: %w", pt.Name, err)
	}
	if reason != StopAtPC {
		return nil, nil, fmt.Errorf("emu: snapshot %s: run ended (%v) before boundary %d", pt.Name, reason, target)
	}
	pc, err := s.m.PC()
	if err != nil {
		return nil, nil, err
	}
	snap, err := s.m.Capture()
	if err != nil {
		return nil, nil, err
	}
	for i := range snap.Images {
		snap.Images[i].Name = out.Path
	}
	truth := s.truthNames(pc)
	th := snap.Threads[0]
	frames, res := s.proc.Walk(th.Registers, snap.Memory, walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh})
	if diff := cmp.Diff(truth, MachineNames(frames)); diff != "" {
		return nil, nil, fmt.Errorf("emu: snapshot %s at PC %#x: the walk (stop %v) differs from the truth (-truth +walk):\n%s", pt.Name, pc, res.Stop, diff)
	}
	return snap, truth, nil
}

// pointStep runs the fixture once, tracking frame phases, and returns the
// 1-based index of the point's boundary.
func pointStep(dir string, prog fixtures.Program, out fixtures.Output, pt SnapshotPoint) (int, error) {
	s, err := newSweeper(dir, prog, out, SnapshotSlide)
	if err != nil {
		return 0, err
	}
	defer s.m.Close()
	fn, err := SymbolAddress(s.loaded.Image, pt.Function)
	if err != nil {
		return 0, err
	}
	fn = s.m.Arch.CodeAddress(fn + s.loaded.Slide)
	type boundary struct {
		step  int
		phase Phase
	}
	var own []boundary // the boundaries of fn's first activation at which fn is frame 0
	depth, done := 0, false
	opts := RunOptions{OnStep: func(pc uint64) error {
		s.steps++
		regs, err := s.m.Registers()
		if err != nil {
			return err
		}
		phase, _, err := s.phase(pc, regs)
		if err != nil {
			return err
		}
		d := s.m.Shadow.Depth()
		switch {
		case done:
		case depth == 0 && pc == fn:
			depth = d
			own = append(own, boundary{s.steps, phase})
		case depth != 0 && d < depth:
			done = true
		case depth != 0 && d == depth:
			own = append(own, boundary{s.steps, phase})
		}
		return nil
	}}
	// Stop at fn's entry if that is the point, or at halt, which spins.
	stopAt := uint64(0)
	if pt.Kind == PointEntry {
		stopAt = fn
	} else if prog.End == fixtures.EndHalt {
		halt, err := SymbolAddress(s.loaded.Image, fixtures.HaltFunction)
		if err != nil {
			return 0, err
		}
		stopAt = s.m.Arch.CodeAddress(halt + s.loaded.Slide)
	}
	if stopAt != 0 {
		opts.StopAt = func(pc uint64) bool { return pc == stopAt }
	}
	reason, err := s.m.Run(opts)
	if err != nil {
		return 0, err
	}
	if pt.Kind == PointEntry {
		if reason != StopAtPC {
			return 0, fmt.Errorf("%s never ran", pt.Function)
		}
		return s.steps + 1, nil
	}
	switch pt.Kind {
	case PointMiddle:
		if len(own) > 0 {
			return own[len(own)/2].step, nil
		}
	case PointPush:
		last := 0
		for _, b := range own {
			if b.phase == PhaseBeforePush {
				last = b.step
			}
		}
		if last != 0 {
			return last, nil
		}
	case PointAfterPop:
		for _, b := range own {
			if b.phase == PhaseAfterPop {
				return b.step, nil
			}
		}
	}
	return 0, fmt.Errorf("no such boundary in the first activation of %s (%d boundaries seen)", pt.Function, len(own))
}

// FormatChain writes a true chain as a .chain file: a comment naming the
// snapshot, then one function name per line, innermost first.
func FormatChain(pt SnapshotPoint, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# True call chain of %s.json (the emulator's shadow stack), innermost first:\n", pt.Name)
	fmt.Fprintf(&b, "# machine frames only (no inlined functions); ??? is an address in no image,\n")
	fmt.Fprintf(&b, "# the return address the run was entered with. %s.\n", pt.Why)
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return b.String()
}
