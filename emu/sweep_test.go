//go:build unicorn

package emu

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/symbolize"
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
// (docs/accuracy.md). Every remaining miss is in a prologue or epilogue.
var sweepFloors = []struct {
	arch, opt string
	exact     int // at least
	misses    int // Checked - Exact, at most
	other     int // misses outside prologues and epilogues, at most
}{
	{"arm64", "O0", 13317, 8, 0},
	{"arm64", "O1", 3514, 7, 0},
	{"arm64", "O2", 3486, 7, 0},
	{"x86_64", "O0", 7565, 5, 0},
	{"x86_64", "O1", 4108, 7, 0},
	{"x86_64", "O2", 2924, 7, 0},
	{"armv7", "O0", 11149, 4, 0},
	{"armv7", "O1", 3474, 4, 0},
	{"armv7", "O2", 3439, 4, 0},
	{"i386", "O0", 7525, 5, 0},
	{"i386", "O1", 5131, 7, 0},
	{"i386", "O2", 4450, 7, 0},
}

// unwindTargetPercent is the exact share every row of unwindTableFloors is
// to reach once the walker reads unwind tables (__unwind_info and
// __eh_frame): as good as the frame-pointer rows.
const unwindTargetPercent = 99.9

// unwindTableFloors are the rows of the fixtures whose frames only unwind
// tables describe fully: no frame pointers (GroupNoFP, GroupDWARFNoFP), no
// frame pointer in leaves (GroupNoLeafFP), DWARF-only functions
// (GroupDWARFFP) and Swift async extended frame records (GroupAsync).
// exact is what the frame-pointer walker achieves today (docs/accuracy.md);
// it may only grow. When the walker uses the tables, raise each row towards
// unwindTargetPercent of its checked boundaries.
var unwindTableFloors = []struct {
	group, arch, opt string
	exact            int // at least
}{
	{GroupNoFP, "arm64", "O0", 0},
	{GroupNoFP, "arm64", "O1", 0},
	{GroupNoFP, "arm64", "O2", 0},
	{GroupNoFP, "x86_64", "O0", 0},
	{GroupNoFP, "x86_64", "O1", 0},
	{GroupNoFP, "x86_64", "O2", 0},
	{GroupNoLeafFP, "x86_64", "O0", 7547},
	{GroupNoLeafFP, "x86_64", "O1", 4089},
	{GroupNoLeafFP, "x86_64", "O2", 2905},
	{GroupDWARFFP, "arm64", "O0", 21914},
	{GroupDWARFFP, "arm64", "O1", 5540},
	{GroupDWARFFP, "arm64", "O2", 5540},
	{GroupDWARFFP, "x86_64", "O0", 11971},
	{GroupDWARFFP, "x86_64", "O1", 6465},
	{GroupDWARFFP, "x86_64", "O2", 4228},
	{GroupDWARFNoFP, "arm64", "O0", 0},
	{GroupDWARFNoFP, "arm64", "O1", 0},
	{GroupDWARFNoFP, "arm64", "O2", 0},
	{GroupDWARFNoFP, "x86_64", "O0", 0},
	{GroupDWARFNoFP, "x86_64", "O1", 0},
	{GroupDWARFNoFP, "x86_64", "O2", 0},
	{GroupAsync, "arm64", "O0", 147},
	{GroupAsync, "arm64", "O1", 75},
	{GroupAsync, "arm64", "O2", 75},
	{GroupAsync, "x86_64", "O0", 28},
	{GroupAsync, "x86_64", "O1", 16},
	{GroupAsync, "x86_64", "O2", 16},
}

// TestSweep single-steps every fixture and holds every cell of the accuracy
// table to its floor: the frame-pointer rows to sweepFloors, the others to
// unwindTableFloors.
func TestSweep(t *testing.T) {
	rep, err := Sweep(filepath.Join(repoRoot(t), "fixtures"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(sweepFloors) + len(unwindTableFloors); len(rep.Cells) != want {
		t.Errorf("the sweep has %d cells, want %d (one per group × arch × level)", len(rep.Cells), want)
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
				t.Errorf("exact = %d of %d boundaries, want at least %d (target %.1f%%)", c.Exact, c.Checked, f.exact, unwindTargetPercent)
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
	frames := []symbolize.Frame{
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
