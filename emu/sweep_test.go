//go:build unicorn

package emu

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/symstore"
)

// sweepFloors are the frame-pointer rows (GroupFP: chain and noreturn built
// as before the unwind-table fixtures, so comparable with every earlier
// table), measured at the commit that set them
// (docs/accuracy.md has the table): exact may only grow, and the non-exact
// boundaries, in total and outside prologues and epilogues ("other"), may
// only shrink. Lower a miss figure or raise exact when the walker gets
// better; never the reverse without saying why in docs/accuracy.md.
//
// "other" is zero everywhere: with the images' code (Options.Instructions)
// the walker rejects the stale LR that armv7's pop {..., pc} leaves behind
// (docs/accuracy.md). The remaining misses are the shrink-wrapped `check`
// at -O1 and -O2 (docs/accuracy.md).
var sweepFloors = []struct {
	arch, opt string
	exact     int // at least
	misses    int // Checked - Exact, at most
	other     int // misses outside prologues and epilogues, at most
}{
	{"arm64", "O0", 13325, 0, 0},
	{"arm64", "O1", 3521, 0, 0},
	{"arm64", "O2", 3493, 0, 0},
	{"x86_64", "O0", 7570, 0, 0},
	{"x86_64", "O1", 4114, 1, 0},
	{"x86_64", "O2", 2930, 1, 0},
	{"armv7", "O0", 11153, 0, 0},
	{"armv7", "O1", 3478, 0, 0},
	{"armv7", "O2", 3443, 0, 0},
	{"i386", "O0", 7530, 0, 0},
	{"i386", "O1", 5138, 0, 0},
	{"i386", "O2", 4457, 0, 0},
}

// unwindTargetPercent is the exact share every row of unwindTableFloors
// must reach: the walker reads the images' unwind tables (__unwind_info,
// __eh_frame) and decodes frame 0's prologues and epilogues.
const unwindTargetPercent = 99.9

// unwindTableFloors are the rows of the fixtures whose frames only unwind
// tables describe fully: no frame pointers (GroupNoFP, GroupDWARFNoFP), no
// frame pointer in leaves (GroupNoLeafFP), DWARF-only functions
// (GroupDWARFFP) and Swift async extended frame records (GroupAsync).
// exact is what the walker achieves (docs/accuracy.md); it may only grow.
var unwindTableFloors = []struct {
	group, arch, opt string
	exact            int // at least
}{
	{GroupNoFP, "arm64", "O0", 13306},
	{GroupNoFP, "arm64", "O1", 3503},
	{GroupNoFP, "arm64", "O2", 3475},
	{GroupNoFP, "x86_64", "O0", 7516},
	{GroupNoFP, "x86_64", "O1", 4065},
	{GroupNoFP, "x86_64", "O2", 2881},
	{GroupNoLeafFP, "x86_64", "O0", 7564},
	{GroupNoLeafFP, "x86_64", "O1", 4105},
	{GroupNoLeafFP, "x86_64", "O2", 2921},
	{GroupDWARFFP, "arm64", "O0", 21919},
	{GroupDWARFFP, "arm64", "O1", 5543},
	{GroupDWARFFP, "arm64", "O2", 5543},
	{GroupDWARFFP, "x86_64", "O0", 11974},
	{GroupDWARFFP, "x86_64", "O1", 6468},
	{GroupDWARFFP, "x86_64", "O2", 4231},
	{GroupDWARFNoFP, "arm64", "O0", 21915},
	{GroupDWARFNoFP, "arm64", "O1", 5539},
	{GroupDWARFNoFP, "arm64", "O2", 5539},
	{GroupDWARFNoFP, "x86_64", "O0", 11959},
	{GroupDWARFNoFP, "x86_64", "O1", 6457},
	{GroupDWARFNoFP, "x86_64", "O2", 4220},
	{GroupAsync, "arm64", "O0", 156},
	{GroupAsync, "arm64", "O1", 84},
	{GroupAsync, "arm64", "O2", 84},
	{GroupAsync, "x86_64", "O0", 169},
	{GroupAsync, "x86_64", "O1", 115},
	{GroupAsync, "x86_64", "O2", 115},
}

// Targets of the GroupNoFPNoTables rows: the programs built without frame
// pointers, walked with their unwind tables withheld, where the walk finds
// the callers by the caller scan (docs/walker.md). Every row must be at
// least withheldTargetPercent exact, with at most withheldMaxJunk junk
// frames (extra or wrong) per 100 walks.
const (
	withheldTargetPercent = 90.0
	withheldMaxJunk       = 1.0
)

// withheldFloors are the GroupNoFPNoTables rows' exact counts at the commit
// that set them (docs/accuracy.md): they may only grow. Before the caller
// scan the rows were 0.23–62.09% exact (36.46% in all; chain and noreturn
// alone 1.0%): the walk stopped at FP = 0 or at the outermost record.
var withheldFloors = []struct {
	arch, opt string
	exact     int // at least
}{
	{"arm64", "O0", 35221},
	{"arm64", "O1", 9042},
	{"arm64", "O2", 9014},
	{"x86_64", "O0", 19475},
	{"x86_64", "O1", 10523},
	{"x86_64", "O2", 7102},
}

// TestSweep single-steps every fixture and holds every cell of the accuracy
// table to its floor: the frame-pointer rows to sweepFloors, the others to
// unwindTableFloors, and the rows walked without unwind tables to
// withheldFloors and their targets.
func TestSweep(t *testing.T) {
	rep, err := Sweep(filepath.Join(repoRoot(t), "fixtures"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(sweepFloors) + len(unwindTableFloors) + len(withheldFloors); len(rep.Cells) != want {
		t.Errorf("the sweep has %d cells, want %d (one per group × arch × level)", len(rep.Cells), want)
	}
	for _, f := range withheldFloors {
		t.Run(GroupNoFPNoTables+"-"+f.arch+"-"+f.opt, func(t *testing.T) {
			c := rep.Cell(GroupNoFPNoTables, f.arch, f.opt)
			if c == nil {
				t.Fatalf("no cell for %s %s %s", GroupNoFPNoTables, f.arch, f.opt)
			}
			if c.Checked < 50 {
				t.Errorf("checked = %d boundaries, want a whole run", c.Checked)
			}
			if c.Exact < f.exact {
				t.Errorf("exact = %d of %d boundaries, want at least %d", c.Exact, c.Checked, f.exact)
			}
			if pct := c.ExactPercent(); pct < withheldTargetPercent {
				t.Errorf("exact = %.2f%% of %d boundaries, want at least %.1f%%", pct, c.Checked, withheldTargetPercent)
			}
			if junk := c.JunkPer100(); junk > withheldMaxJunk {
				t.Errorf("junk = %.2f frames per 100 walks (extra %d, wrong %d), want at most %.1f", junk, c.Extra, c.Wrong, withheldMaxJunk)
			}
			if c.Extra+c.Wrong > 0 {
				for _, m := range rep.Misses {
					if m.Group == GroupNoFPNoTables && strings.HasSuffix(m.Fixture, "-"+f.arch+"-"+f.opt) {
						t.Logf("%s step %d %s+%d\n truth %q\n walk  %q (%s)", m.Fixture, m.Step, m.Function, m.Offset, m.Truth, m.Walk, m.Stop)
					}
				}
			}
		})
	}
	for _, f := range unwindTableFloors {
		t.Run(f.group+"-"+f.arch+"-"+f.opt, func(t *testing.T) {
			c := rep.Cell(f.group, f.arch, f.opt)
			if c == nil {
				t.Fatalf("no cell for %s %s %s", f.group, f.arch, f.opt)
			}
			if c.Checked < 50 {
				t.Errorf("checked = %d boundaries, want a whole run", c.Checked)
			}
			if c.Exact < f.exact {
				t.Errorf("exact = %d of %d boundaries, want at least %d", c.Exact, c.Checked, f.exact)
			}
			if pct := 100 * float64(c.Exact) / float64(c.Checked); pct < unwindTargetPercent {
				t.Errorf("exact = %.2f%% of %d boundaries, want at least %.1f%%", pct, c.Checked, unwindTargetPercent)
			}
			sum := 0
			for _, n := range c.Misses {
				sum += n
			}
			if sum != c.Checked-c.Exact {
				t.Errorf("misses by phase add up to %d, want %d (checked %d - exact %d)", sum, c.Checked-c.Exact, c.Checked, c.Exact)
			}
		})
	}
	for _, f := range sweepFloors {
		t.Run(GroupFP+"-"+f.arch+"-"+f.opt, func(t *testing.T) {
			c := rep.Cell(GroupFP, f.arch, f.opt)
			if c == nil {
				t.Fatalf("no cell for %s %s", f.arch, f.opt)
			}
			if c.Exact < f.exact {
				t.Errorf("exact = %d of %d boundaries, want at least %d", c.Exact, c.Checked, f.exact)
			}
			if got := c.Checked - c.Exact; got > f.misses {
				t.Errorf("non-exact boundaries = %d, want at most %d", got, f.misses)
			}
			if got := c.Misses[PhaseOther]; got > f.other {
				t.Errorf("non-exact boundaries outside prologues and epilogues = %d, want at most %d", got, f.other)
				for _, m := range rep.Misses {
					if m.Phase == PhaseOther && m.Group == GroupFP && strings.HasSuffix(m.Fixture, "-"+f.arch+"-"+f.opt) {
						t.Logf("%s step %d %s+%d: %s\n truth %q\n walk  %q", m.Fixture, m.Step, m.Function, m.Offset, m.Why, m.Truth, m.Walk)
					}
				}
			}
			sum := 0
			for _, n := range c.Misses {
				sum += n
			}
			if sum != c.Checked-c.Exact {
				t.Errorf("misses by phase add up to %d, want %d (checked %d - exact %d)", sum, c.Checked-c.Exact, c.Checked, c.Exact)
			}
			if c.Misses[PhaseInFrame] != 0 {
				t.Errorf("%d misses classified in frame; they must count as other", c.Misses[PhaseInFrame])
			}
		})
	}
}

func TestCompareChains(t *testing.T) {
	tests := []struct {
		name                  string
		truth, walked         []string
		missing, extra, wrong int
	}{
		{"equal", []string{"a", "b", "c"}, []string{"a", "b", "c"}, 0, 0, 0},
		{"last missing", []string{"a", "b", "c"}, []string{"a", "b"}, 1, 0, 0},
		{"one extra", []string{"a", "b"}, []string{"a", "x", "b"}, 0, 1, 1},
		{"caller dropped shifts the rest", []string{"a", "b", "c", "d"}, []string{"a", "c", "d"}, 1, 0, 2},
		{"one renamed", []string{"a", "b", "c"}, []string{"a", "z", "c"}, 0, 0, 1},
		{"empty walk", []string{"a"}, nil, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, e, w := CompareChains(tt.truth, tt.walked)
			if m != tt.missing || e != tt.extra || w != tt.wrong {
				t.Errorf("CompareChains(%q, %q) = missing %d, extra %d, wrong %d; want %d, %d, %d",
					tt.truth, tt.walked, m, e, w, tt.missing, tt.extra, tt.wrong)
			}
		})
	}
}

func TestMachineNames(t *testing.T) {
	frames := []symstore.Frame{
		{Index: 0, Symbol: "step_to_deepest", Inlined: true},
		{Index: 0, Symbol: "inline_host"},
		{Index: 1, Symbol: "with_alloca"},
		{Index: 2},
	}
	want := []string{"inline_host", "with_alloca", "???"}
	if diff := cmp.Diff(want, MachineNames(frames)); diff != "" {
		t.Errorf("MachineNames (-want +got):\n%s", diff)
	}
}

// TestSweepStaleFrameRecords sweeps the armv7 frame-pointer rows, which no
// unwind table describes (ld64.lld-16 writes none for armv7), with every
// word of the stack below the entry a return address of the program
// (StaleFill): every slot a frame leaves unwritten looks like a caller, of
// every function. Frame records that the code confirms must still win over
// them: the rows stay at their clean floors.
func TestSweepStaleFrameRecords(t *testing.T) {
	keep := func(out fixtures.Output) bool {
		return SweepGroup(out) == GroupFP && out.Arch == "armv7" && out.Opt == "O1"
	}
	rep, err := SweepStale(filepath.Join(repoRoot(t), "fixtures"), keep, StaleFill)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cell(GroupFP, "armv7", "O1")
	if c == nil {
		t.Fatal("no cell for fp armv7 O1")
	}
	for _, f := range sweepFloors {
		if f.arch != "armv7" || f.opt != "O1" {
			continue
		}
		if c.Exact < f.exact || c.Checked-c.Exact > f.misses || c.Extra+c.Wrong > 0 {
			t.Errorf("with a stale stack: exact %d of %d, extra %d, wrong %d; want at least %d exact, at most %d misses, no junk",
				c.Exact, c.Checked, c.Extra, c.Wrong, f.exact, f.misses)
		}
	}
}

func TestParseStaleStack(t *testing.T) {
	for in, want := range map[string]StaleStack{"": StaleNone, "none": StaleNone, "replay": StaleReplay, "fill": StaleFill} {
		if got, err := ParseStaleStack(in); err != nil || got != want {
			t.Errorf("ParseStaleStack(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseStaleStack("dirty"); err == nil {
		t.Errorf("ParseStaleStack(%q): no error", "dirty")
	}
}
