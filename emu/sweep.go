//go:build unicorn

package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// The accuracy sweep runs whole fixture programs one instruction at a time
// and, at every instruction boundary, compares what a user of the toolkit
// would get (capture, walk, symbolicate) with the shadow stack's true call
// chain. docs/accuracy.md defines every figure it reports.

// Phase says where a boundary lies relative to the frame record of the
// innermost function (the one holding the PC). It is worked out from the
// run itself, without disassembly: see (*sweeper).phase.
type Phase int

const (
	// PhaseBeforePush: from the function's entry up to the instruction
	// that pushes its frame record (stp x29, x30 / push rbp / push {r7, lr}).
	PhaseBeforePush Phase = iota
	// PhaseBeforeFPSet: the record is on the stack but FP does not point
	// at it yet (x86: between push rbp and mov rbp, rsp).
	PhaseBeforeFPSet
	// PhaseInFrame: FP points at the function's own frame record.
	PhaseInFrame
	// PhaseAfterPop: FP was set in this activation and has been restored
	// to the caller's (epilogue, up to and including the return).
	PhaseAfterPop
	// PhaseOther: anything else: FP is neither the caller's nor the
	// function's own record, or the function never builds a record
	// (frameless).
	PhaseOther
	numPhases
)

var phaseNames = [numPhases]string{
	PhaseBeforePush:  "before push",
	PhaseBeforeFPSet: "push..FP set",
	PhaseInFrame:     "in frame",
	PhaseAfterPop:    "after pop",
	PhaseOther:       "other",
}

// String returns the short name used in the accuracy table.
func (p Phase) String() string {
	if p >= 0 && p < numPhases {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Sweep groups: which fixtures share a row of the accuracy table (see
// SweepGroup).
const (
	// GroupFP is chain and noreturn with frame pointers: the original
	// rows, comparable with every earlier table.
	GroupFP = "fp"
	// GroupNoFP is chain and noreturn under -fomit-frame-pointer: only
	// unwind tables describe their frames.
	GroupNoFP = "nofp"
	// GroupNoLeafFP is chain and noreturn under -momit-leaf-frame-pointer.
	GroupNoLeafFP = "nofp-leaf"
	// GroupDWARFFP and GroupDWARFNoFP are the dwarf program (functions
	// whose compact unwind encoding is "use DWARF") with and without frame
	// pointers.
	GroupDWARFFP   = "dwarf-fp"
	GroupDWARFNoFP = "dwarf-nofp"
	// GroupAsync is the async program: Swift-async-convention functions
	// with extended frame records (bit 60 set in the saved FP).
	GroupAsync = "async-fp"
	// GroupNoFPNoTables is GroupNoFP's fixtures walked with their unwind
	// tables withheld (symbolize.Process.NoUnwindInfo, the command's
	// --no-unwind-info): the images' code is still read for checking call
	// sites and prologues, as when a Breakpad file without STACK CFI or a
	// binary without __unwind_info describes them. Only frame 0's rules,
	// stale frame records and scanning are left.
	GroupNoFPNoTables = "nofp-notables"
)

// withheldGroups lists, for a fixture's SweepGroup, the groups that sweep
// the same fixture again with its unwind tables withheld.
var withheldGroups = map[string][]string{GroupNoFP: {GroupNoFPNoTables}, GroupDWARFNoFP: {GroupNoFPNoTables}}

// SweepGroup returns the row group of a fixture output: its frame-pointer
// variant for chain and noreturn, the program and variant for the others.
func SweepGroup(out fixtures.Output) string {
	if out.Program == "chain" || out.Program == "noreturn" {
		return out.Frames
	}
	return out.Program + "-" + out.Frames
}

// groupOrder sorts rows: the original frame-pointer rows first.
var groupOrder = map[string]int{GroupFP: 0, GroupNoFP: 1, GroupNoLeafFP: 2, GroupDWARFFP: 3, GroupDWARFNoFP: 4, GroupAsync: 5, GroupNoFPNoTables: 6}

// SweepCell is one row of the accuracy table: every boundary of every
// program of one group (SweepGroup) built for one architecture at one
// optimisation level.
type SweepCell struct {
	Group string // GroupFP, GroupNoFP, ...
	Arch  string // "arm64", "x86_64", "armv7", "i386"
	Opt   string // "O0", "O1", "O2"
	// Checked counts the instruction boundaries compared; Exact those
	// where the walked chain equals the true one.
	Checked, Exact int
	// Missing, Extra and Wrong sum, over all boundaries, the frames the
	// walk lacks at the end, has beyond the truth's end, and names
	// differently at the same position (see docs/accuracy.md).
	Missing, Extra, Wrong int
	// Misses counts the boundaries that are not exact, by the phase of the
	// innermost function.
	Misses [numPhases]int
}

// ExactPercent returns Exact as a percentage of Checked (0 when nothing was
// checked).
func (c *SweepCell) ExactPercent() float64 {
	if c.Checked == 0 {
		return 0
	}
	return 100 * float64(c.Exact) / float64(c.Checked)
}

// JunkPer100 returns the junk frames, extra or wrong (frames a walk shows
// that the stack does not hold where it shows them), per 100 walks (0 when
// nothing was checked).
func (c *SweepCell) JunkPer100() float64 {
	if c.Checked == 0 {
		return 0
	}
	return 100 * float64(c.Extra+c.Wrong) / float64(c.Checked)
}

// SweepMiss is one boundary where the walk differed from the truth.
type SweepMiss struct {
	Fixture  string // "chain-x86_64-O1", "chain-nofp-x86_64-O1"
	Group    string // the fixture's SweepGroup
	Step     int    // 1-based index of the boundary in the run
	PC       uint64
	Function string // the innermost function's name
	Offset   uint64 // PC minus the function's start
	Phase    Phase
	// Why explains a PhaseOther classification.
	Why         string
	Truth, Walk []string // function names, innermost first
	Stop        string   // the walk's stop reason
}

// SweepReport is the result of a sweep over fixture outputs.
type SweepReport struct {
	// Cells are ordered by group (frame-pointer rows first), architecture
	// (arm64, x86_64, armv7, i386) and optimisation level.
	Cells  []SweepCell
	Misses []SweepMiss
}

// Cell returns the cell for a group, architecture and level, nil when the
// sweep did not cover it.
func (r *SweepReport) Cell(group, arch, opt string) *SweepCell {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Group == group && c.Arch == arch && c.Opt == opt {
			return &r.Cells[i]
		}
	}
	return nil
}

// archOrder sorts cells the way the table prints them.
var archOrder = map[string]int{"arm64": 0, "x86_64": 1, "armv7": 2, "i386": 3}

// Sweep runs every output of the fixtures manifest at slide 0 through
// SweepOutput. dir is the fixtures directory (its binaries are read from
// disk so that symbols are found the way the stackimage command finds
// them). keep selects outputs; nil keeps all.
func Sweep(dir string, keep func(fixtures.Output) bool) (*SweepReport, error) {
	return SweepStale(dir, keep, StaleNone)
}

// SweepStale is Sweep with the stack holding stale words before each run
// (StaleStack): how the walk fares where unwritten slots are not zero.
func SweepStale(dir string, keep func(fixtures.Output) bool, stale StaleStack) (*SweepReport, error) {
	man, err := fixtures.Load()
	if err != nil {
		return nil, err
	}
	rep := &SweepReport{}
	for _, out := range man.Outputs {
		if keep != nil && !keep(out) {
			continue
		}
		prog, ok := man.Program(out.Program)
		if !ok {
			return nil, fmt.Errorf("emu: sweep: %s: program %q not in the manifest", out.Path, out.Program)
		}
		for _, group := range append([]string{SweepGroup(out)}, withheldGroups[SweepGroup(out)]...) {
			var cell SweepCell
			if c := rep.Cell(group, out.Arch, out.Opt); c != nil {
				cell = *c
			} else {
				cell = SweepCell{Group: group, Arch: out.Arch, Opt: out.Opt}
			}
			misses, err := sweepOutput(dir, prog, out, &cell, stale)
			if err != nil {
				return nil, err
			}
			if c := rep.Cell(group, out.Arch, out.Opt); c != nil {
				*c = cell
			} else {
				rep.Cells = append(rep.Cells, cell)
			}
			rep.Misses = append(rep.Misses, misses...)
		}
	}
	sort.SliceStable(rep.Cells, func(i, j int) bool {
		a, b := rep.Cells[i], rep.Cells[j]
		if a.Group != b.Group {
			return groupOrder[a.Group] < groupOrder[b.Group]
		}
		if a.Arch != b.Arch {
			return archOrder[a.Arch] < archOrder[b.Arch]
		}
		return a.Opt < b.Opt
	})
	return rep, nil
}

// SweepOutput single-steps one fixture from its entry to its end at slide
// 0, adds every boundary to cell and returns the boundaries that were not
// exact. A cell of GroupNoFPNoTables walks without the images' unwind
// tables. The run must end as the manifest says (the entry returns the
// recorded result, or the PC reaches halt), or the truth is not trusted and
// an error is returned.
func SweepOutput(dir string, prog fixtures.Program, out fixtures.Output, cell *SweepCell) ([]SweepMiss, error) {
	return sweepOutput(dir, prog, out, cell, StaleNone)
}

func sweepOutput(dir string, prog fixtures.Program, out fixtures.Output, cell *SweepCell, stale StaleStack) ([]SweepMiss, error) {
	misses, _, err := sweepRun(dir, prog, out, cell, stale)
	return misses, err
}

// sweepRun is sweepOutput, and also returns the 32-bit value the entry
// returned (w0, eax) when the run ended at the sentinel.
func sweepRun(dir string, prog fixtures.Program, out fixtures.Output, cell *SweepCell, stale StaleStack) ([]SweepMiss, uint32, error) {
	s, err := newSweeper(dir, prog, out, 0)
	if err != nil {
		return nil, 0, err
	}
	defer s.m.Close()
	if err := dirtyStack(dir, prog, out, s, stale); err != nil {
		return nil, 0, fmt.Errorf("emu: sweep %s: %w", out.Name(), err)
	}
	s.cell = cell
	if cell.Group != "" {
		s.group = cell.Group
	}
	s.proc.NoUnwindInfo = withholdsTables(s.group)
	if dsymOnly(s.group) {
		if s.walkProc, err = newFrameSource(s.m, filepath.Join(dir, out.Path)+".dSYM"); err != nil {
			return nil, 0, fmt.Errorf("emu: sweep %s: %w", out.Name(), err)
		}
		// dsymutil-16 copies the binary's __eh_frame into the dSYM (and
		// __debug_frame is there without unwind tables): withheld, so
		// that the dSYM's functions and call sites alone check the
		// scan's words.
		s.walkProc.NoUnwindInfo = true
		s.noCallSites = s.group == GroupFreshDSYMNoCallSites
	}
	opts := RunOptions{OnStep: s.step}
	if prog.End == fixtures.EndHalt {
		halt, err := SymbolAddress(s.loaded.Image, fixtures.HaltFunction)
		if err != nil {
			return nil, 0, err
		}
		halt = s.m.Arch.CodeAddress(halt + s.loaded.Slide)
		opts.StopAt = func(pc uint64) bool { return pc == halt }
	}
	var result uint32
	reason, err := s.m.Run(opts)
	if err != nil {
		return nil, 0, fmt.Errorf("emu: sweep %s: %w", out.Name(), err)
	}
	switch {
	case prog.End == fixtures.EndHalt && reason == StopAtPC:
		// The halt boundary is a boundary too: check it.
		pc, err := s.m.PC()
		if err != nil {
			return nil, 0, err
		}
		if err := s.step(pc); err != nil {
			return nil, 0, err
		}
	case prog.End == fixtures.EndReturn && reason == StopSentinel:
		if err := s.checkResult(prog); err != nil {
			return nil, 0, err
		}
		result = s.result
	default:
		return nil, 0, fmt.Errorf("emu: sweep %s: run ended with %v, want end %q", out.Name(), reason, prog.End)
	}
	s.resolvePending(0)
	for _, m := range s.misses {
		cell.Misses[m.Phase]++
	}
	return s.misses, result, nil
}

// activation is the sweep's view of one entry on the shadow stack: which
// function runs in it and where that function's frame record goes.
type activation struct {
	fn       uint64 // slid start of the function running in it
	entrySP  uint64 // SP at the function's first instruction
	callerFP uint64 // FP at that instruction: the caller's
	ret      uint64 // the return address the record will hold
	record   uint64 // where the record was found: [record] = callerFP, [record+ptr] = ret
	fpSet    bool   // FP has pointed at the record in this activation
	pushed   bool   // the record has been seen in the live frame
	pending  []int  // indexes in misses classified before the activation ended
}

type sweeper struct {
	m      *Machine
	loaded *Loaded
	proc   *symbolize.Process
	// walkProc, when set, walks instead of proc (which still names the
	// truth): the dSYM alone (dsymOnly groups). noCallSites hides its
	// DWARF call sites from the walker.
	walkProc    *symbolize.Process
	noCallSites bool
	name        string
	group       string // SweepGroup of the fixture
	cell        *SweepCell
	misses      []SweepMiss
	acts        []activation
	names       map[uint64]string // truth names by address
	scan        []byte            // scratch for findRecord
	steps       int
	ptrSize     uint64
	result      uint32 // what the entry returned (checkResult)
}

func newSweeper(dir string, prog fixtures.Program, out fixtures.Output, slide uint64) (*sweeper, error) {
	arch, err := archregs.ByName(out.Arch)
	if err != nil {
		return nil, fmt.Errorf("emu: sweep %s: %w", out.Path, err)
	}
	m, err := New(arch)
	if err != nil {
		return nil, err
	}
	s := &sweeper{m: m, name: out.Name(), group: SweepGroup(out), names: map[uint64]string{}, ptrSize: uint64(arch.PtrSize),
		scan: make([]byte, maxRecordScan+8)}
	if err := s.setup(filepath.Join(dir, out.Path), prog, slide); err != nil {
		m.Close()
		return nil, fmt.Errorf("emu: sweep %s: %w", out.Name(), err)
	}
	return s, nil
}

func (s *sweeper) setup(path string, prog fixtures.Program, slide uint64) error {
	l, err := s.m.LoadFile(path, slide)
	if err != nil {
		return err
	}
	s.loaded = l
	entry, err := SymbolAddress(l.Image, prog.Entry)
	if err != nil {
		return err
	}
	if err := s.m.SetEntry(entry + l.Slide); err != nil {
		return err
	}
	s.proc, err = newFrameSource(s.m, path)
	return err
}

// newFrameSource attaches symbols to the machine's images as the stackimage
// command does: a symbolize.Process over an index of the fixture file (or
// a dSYM bundle), matched by UUID, or by name for an i386 object file,
// which has none.
func newFrameSource(m *Machine, path string) (*symbolize.Process, error) {
	syms := symstore.NewSymbols()
	add := syms.AddFile
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		add = syms.AddDir
	}
	if err := add(context.Background(), path); err != nil {
		return nil, err
	}
	loaded := make([]*image.Loaded, len(m.Images))
	for i, l := range m.Images {
		loaded[i] = &image.Loaded{Name: l.Image.Name, UUID: l.Image.UUID, LoadAddress: l.LoadAddress, Size: l.Size}
	}
	z := &symbolize.Symbolizer{Symbols: syms}
	p, err := z.NewProcess(m.Arch, loaded)
	if err != nil {
		return nil, err
	}
	if len(p.Missing) > 0 {
		return nil, fmt.Errorf("no symbols matched %s", p.Missing[0].Name)
	}
	return p, nil
}

// withoutCallSites is a process's symbol coverage (walker.SymbolCoverage)
// without its DWARF call sites (walker.CallSites, walker.CallTargets): a
// scanned word is then checked by the functions the symbols list and the
// frames their variables take (walker.FrameLocals) alone.
type withoutCallSites struct{ p *symbolize.Process }

func (s withoutCallSites) KnowsFunctions(addr uint64) bool { return s.p.KnowsFunctions(addr) }
func (s withoutCallSites) SameImage(a, b uint64) bool      { return s.p.SameImage(a, b) }
func (s withoutCallSites) FrameLocals(pc uint64) (reg int, end int64, known bool) {
	return s.p.FrameLocals(pc)
}

// checkResult checks that the entry returned the manifest's result: a run
// that went wrong (a pointer landing elsewhere) is no ground truth.
func (s *sweeper) checkResult(prog fixtures.Program) error {
	regs, err := s.m.Registers()
	if err != nil {
		return err
	}
	reg := map[string]string{"arm64": "x0", "armv7": "r0", "x86_64": "rax", "i386": "eax"}[s.m.Arch.Name]
	v, _ := regs.Get(reg)
	s.result = uint32(v)
	if prog.Result == nil {
		return nil
	}
	if uint32(v) != *prog.Result {
		return fmt.Errorf("emu: sweep %s: %s = %d at the end, want the program's result %d", s.name, reg, uint32(v), *prog.Result)
	}
	return nil
}

// step checks one boundary: capture as a crash reporter would, walk and
// symbolicate as the stackimage command does, and compare with the shadow
// stack.
func (s *sweeper) step(pc uint64) error {
	s.steps++
	snap, err := s.m.Capture()
	if err != nil {
		return fmt.Errorf("capture at step %d (PC %#x): %w", s.steps, pc, err)
	}
	th := snap.Threads[0]
	walkWith, wo := s.proc, walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh}
	if s.walkProc != nil {
		walkWith = s.walkProc
		if s.noCallSites {
			wo.Symbols = withoutCallSites{s.walkProc}
		}
	}
	frames, res := walkWith.Walk(th.Registers, snap.Memory, wo)
	got := MachineNames(frames)
	truth := s.truthNames(pc)
	if withholdsTables(s.group) && len(truth) > 1 {
		// The sentinel return address lies in no image, and without
		// unwind tables only a scan finds the callers of a function
		// without a frame record: a scan takes nothing that is not code
		// after a call. On a device that caller is dyld's start, which
		// is. The walk must end at the program's outermost function, or
		// at the sentinel when a frame record of that function leads
		// there (the sentinel is neither required nor junk).
		truth = truth[:len(truth)-1]
		if n := len(frames); n > 0 && frames[n-1].Address == s.m.Sentinel && !frames[n-1].Inlined && len(got) == len(truth)+1 {
			got = got[:len(got)-1]
		}
	}

	phase, why, err := s.phase(pc, th.Registers)
	if err != nil {
		return fmt.Errorf("step %d (PC %#x): %w", s.steps, pc, err)
	}
	c := s.cell
	c.Checked++
	missing, extra, wrong := CompareChains(truth, got)
	if missing+extra+wrong == 0 {
		c.Exact++
		return nil
	}
	c.Missing += missing
	c.Extra += extra
	c.Wrong += wrong
	if phase == PhaseInFrame {
		phase, why = PhaseOther, "in frame (FP at the function's own record) yet not exact"
	}
	fn, _ := s.proc.FunctionStart(pc)
	s.misses = append(s.misses, SweepMiss{
		Fixture: s.name, Group: s.group, Step: s.steps, PC: pc, Function: truth[0], Offset: pc - fn,
		Phase: phase, Why: why, Truth: truth, Walk: got, Stop: res.Stop.String(),
	})
	act := &s.acts[len(s.acts)-1]
	act.pending = append(act.pending, len(s.misses)-1)
	return nil
}

// truthNames names the shadow stack's chain at pc, innermost first, the
// way the walk's frames are named.
func (s *sweeper) truthNames(pc uint64) []string {
	chain := s.m.Shadow.Chain(pc)
	names := make([]string, len(chain))
	for i, a := range chain {
		n, ok := s.names[a]
		if !ok {
			// The truth is named as the walk's frames are; how a frame
			// was found does not enter a name.
			n = MachineNames(s.proc.Frames(i, a, a, symstore.FoundBy(walker.FoundByContext)))[0]
			s.names[a] = n
		}
		names[i] = n
	}
	return names
}

// MachineNames returns the function name of every machine frame, innermost
// first: inlined frames are left out (the shadow stack sees only real
// calls), and a frame without a symbol is "???", as the stackimage command
// prints it.
func MachineNames(frames []symstore.Frame) []string {
	var names []string
	for _, f := range frames {
		if f.Inlined {
			continue
		}
		n := f.Symbol
		if n == "" {
			n = "???"
		}
		names = append(names, n)
	}
	return names
}

// CompareChains aligns a walked chain with the true one position by
// position from frame 0: a position where both have a frame and the names
// differ is wrong; the frames the truth has beyond the walk's end are
// missing; those the walk has beyond the truth's end are extra.
func CompareChains(truth, walked []string) (missing, extra, wrong int) {
	n := min(len(truth), len(walked))
	for i := 0; i < n; i++ {
		if truth[i] != walked[i] {
			wrong++
		}
	}
	return len(truth) - n, len(walked) - n, wrong
}

// phase classifies the boundary at pc from the shadow stack, the FP
// register and the stack contents: no disassembly, and no assumption about
// where a compiler puts the frame record.
//
// Each shadow-stack entry gets an activation when it first appears (at its
// callee's first instruction), recording SP, FP (the caller's) and the
// return address there; a jump to another function's start in the same
// activation (a tail call) starts it afresh. The function's own frame
// record is a pair (caller's FP, return address) at an aligned address in
// the live part of its frame, [SP, entry SP). Then:
//
//   - FP at such a record: in frame (the record's address is remembered);
//   - FP the caller's, FP never at the record yet: before push when no
//     such record is in [SP, entry SP) yet, between push and FP set-up
//     when one is;
//   - FP the caller's after having been at the record: after pop;
//   - anything else: other.
//
// On 64-bit architectures bit 60 of FP and of a record's saved FP is
// cleared first: a Swift async function sets it in FP before pushing it
// (an extended frame record), and its record is its record all the same.
// Functions that never build a record (frameless, or every function of a
// -fomit-frame-pointer build) have phases only in this FP-based sense.
func (s *sweeper) phase(pc uint64, regs *archregs.Registers) (Phase, string, error) {
	depth := s.m.Shadow.Depth()
	fp, ok1 := regs.FP()
	sp, ok2 := regs.SP()
	if !ok1 || !ok2 {
		return 0, "", errors.New("no FP or SP in the captured registers")
	}
	fp = s.untag(fp)
	for len(s.acts) > depth {
		s.resolvePending(len(s.acts) - 1)
		s.acts = s.acts[:len(s.acts)-1]
	}
	fn, ok := s.proc.FunctionStart(pc)
	if !ok {
		return PhaseOther, "PC in no known function", nil
	}
	switch {
	case len(s.acts) < depth-1:
		return 0, "", fmt.Errorf("shadow stack grew by %d entries in one instruction", depth-len(s.acts))
	case len(s.acts) == depth-1:
		s.acts = append(s.acts, activation{})
		s.enter(&s.acts[depth-1], fn, sp, fp)
	case s.acts[depth-1].fn != fn:
		if pc != fn {
			return PhaseOther, "entered a function in mid-body without a call", nil
		}
		// A tail call: the same activation now runs another function,
		// whose record will replace the one just popped.
		s.resolvePending(depth - 1)
		s.enter(&s.acts[depth-1], fn, sp, fp)
	}
	a := &s.acts[depth-1]
	switch {
	case a.fpSet && fp == a.record:
		return PhaseInFrame, "", nil
	case a.fpSet && fp == a.callerFP:
		return PhaseAfterPop, "", nil
	case a.fpSet:
		return PhaseOther, fmt.Sprintf("FP %#x is neither the caller's (%#x) nor the function's record (%#x)", fp, a.callerFP, a.record), nil
	case fp != a.callerFP:
		if fp >= sp && fp < a.entrySP && s.isRecord(a, fp) {
			a.fpSet, a.pushed, a.record = true, true, fp
			return PhaseInFrame, "", nil
		}
		return PhaseOther, fmt.Sprintf("FP %#x is neither the caller's (%#x) nor a record of the function in [SP %#x, entry SP %#x)", fp, a.callerFP, sp, a.entrySP), nil
	}
	if s.findRecord(a, sp) {
		a.pushed = true
		return PhaseBeforeFPSet, "", nil
	}
	return PhaseBeforePush, "", nil
}

// maxRecordScan bounds the bytes below the entry SP searched for the
// function's record: records sit at the top of their frame, and the
// fixtures' frames are at most a few KiB.
const maxRecordScan = 16 << 10

// enter starts an activation at a function's first instruction.
func (s *sweeper) enter(a *activation, fn, sp, fp uint64) {
	ret := s.m.Shadow.Calls[len(s.m.Shadow.Calls)-1].ReturnAddress
	*a = activation{fn: fn, entrySP: sp, callerFP: fp, ret: ret}
}

// isRecord reports whether the pair at addr is the activation's frame
// record: the caller's FP, then the return address.
func (s *sweeper) isRecord(a *activation, addr uint64) bool {
	var buf [16]byte
	p := buf[:2*s.ptrSize]
	if n, _ := s.m.ReadMemory(p, addr); n < len(p) {
		return false
	}
	return s.untag(getPtr(p[:s.ptrSize])) == a.callerFP && getPtr(p[s.ptrSize:]) == a.ret
}

// asyncFrameFlag is bit 60 of a 64-bit frame pointer: a Swift async
// function's prologue sets it (orr x29, x29, #1<<60 / btsq $60, %rbp)
// before pushing the caller's FP, so its frame record's saved FP carries it.
const asyncFrameFlag = 1 << 60

// untag removes the Swift async flag from a 64-bit frame pointer, so that
// an extended frame record is recognised as the function's record and an
// FP flagged in the prologue as the caller's.
func (s *sweeper) untag(fp uint64) uint64 {
	if s.ptrSize == 8 {
		return fp &^ asyncFrameFlag
	}
	return fp
}

// findRecord reports whether the activation's frame record starts anywhere
// in the live part of its frame, [SP, entry SP), at a pointer-aligned
// address.
func (s *sweeper) findRecord(a *activation, sp uint64) bool {
	if sp >= a.entrySP {
		return false
	}
	lo := max(sp, a.entrySP-min(a.entrySP, maxRecordScan))
	lo = (lo + s.ptrSize - 1) &^ (s.ptrSize - 1)
	if lo >= a.entrySP {
		return false
	}
	// The record starts in the frame, but on x86 its return address is the
	// one the call pushed, at the entry SP itself.
	p := s.ptrSize
	buf := s.scan[:a.entrySP+p-lo]
	if n, _ := s.m.ReadMemory(buf, lo); n < len(buf) {
		return false
	}
	for off := uint64(0); off+2*p <= uint64(len(buf)); off += p {
		if s.untag(getPtr(buf[off:off+p])) == a.callerFP && getPtr(buf[off+p:off+2*p]) == a.ret {
			a.record = lo + off
			return true
		}
	}
	return false
}

// getPtr decodes a little-endian pointer of len(p) bytes.
func getPtr(p []byte) uint64 {
	var v uint64
	for i := len(p) - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v
}

// resolvePending reclassifies the misses of an activation that ends (or of
// every activation still open, from index i on, at the end of a run): in a
// function that never pointed FP at its record, "before push" and
// "push..FP set" mean nothing (a pair that looked like its record was
// registers saved side by side, as code without frame pointers does), so
// its misses are "other": frameless, or built without frame pointers. Its
// entry stays "before push".
func (s *sweeper) resolvePending(i int) {
	for ; i < len(s.acts); i++ {
		a := &s.acts[i]
		if !a.fpSet {
			for _, k := range a.pending {
				m := &s.misses[k]
				if m.Phase == PhaseBeforeFPSet || m.Phase == PhaseBeforePush && !s.atEntryOf(*m) {
					m.Phase, m.Why = PhaseOther, "in a function that never points FP at a frame record (frameless, or no frame pointers)"
				}
			}
		}
		a.pending = a.pending[:0]
	}
}

// atEntryOf reports whether a miss is at its function's first instruction,
// which is "before push" whether or not the function builds a frame later
// (an activation that ends right there, as at halt, never pushes).
func (s *sweeper) atEntryOf(m SweepMiss) bool { return m.Offset == 0 }

// Table formats the report as the accuracy table: one row per group,
// architecture and level, with the non-exact boundaries by phase.
func (r *SweepReport) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| group | arch | opt | checked | exact | exact %% | missing | extra | wrong | junk/100 | before push | push..FP set | after pop | other |\n")
	fmt.Fprintf(&b, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %.2f | %d | %d | %d | %.2f | %d | %d | %d | %d |\n",
			c.Group, c.Arch, c.Opt, c.Checked, c.Exact, c.ExactPercent(), c.Missing, c.Extra, c.Wrong, c.JunkPer100(),
			c.Misses[PhaseBeforePush], c.Misses[PhaseBeforeFPSet], c.Misses[PhaseAfterPop], c.Misses[PhaseOther])
	}
	return b.String()
}

// The emulator's memory is what the walker reads in the tests and sweep.
var (
	_ walker.Memory = (*Engine)(nil)
	_ walker.Memory = (*Machine)(nil)
)
