//go:build unicorn

package emu

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// The metamorphic test of cmd/stackimage (TestFewerSymbolFiles) on the
// emulator's own captures, taken afresh at every fewerSymbolsEvery-th
// instruction boundary of every arm64 and x86_64 fixture (each has a
// dSYM): a walk with the dSYM alone, or with no symbols, should find a
// subsequence of the walk with the binary and the dSYM. It does not
// always yet; the walks that break it are counted, and their number may
// only shrink (fewerSymbolsCeilings).

// fewerSymbolsCeilings are the captures whose reduced walk is not a
// subsequence of the full one, per subset, measured at the commit that
// set them; lower them when the walker gets better. With the dSYM alone
// there are none: a DWARF CFI rule applied to registers no code confirmed
// (frame 0's, or a caller's found in the link register or by a scan)
// that gives a caller in no image ends the walk instead. With no symbols
// there are none either: an LR in frame 0's own image within 128
// instructions of PC is set aside there (walker's lrAmbiguous), as a
// stale one lies there and nothing without the image's functions or code
// tells it from a frameless leaf's caller (docs/walker.md, "What it
// cannot know without unwind info"); 3 before, stale LRs whose callee
// pushed no record below SP.
var fewerSymbolsCeilings = map[string]int{"dSYM": 0, "none": 0}

// fewerSymbolsEvery spaces the captures: every boundary of every fixture
// would take minutes.
const fewerSymbolsEvery = 7

// processWith attaches the symbol files at paths (none for no symbols) to
// the machine's images.
func processWith(t *testing.T, m *Machine, paths ...string) *symbolize.Process {
	t.Helper()
	syms := symstore.NewSymbols()
	t.Cleanup(func() { syms.Close() })
	for _, p := range paths {
		if err := syms.AddDir(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	loaded := make([]*image.Loaded, len(m.Images))
	for i, l := range m.Images {
		loaded[i] = &image.Loaded{Name: l.Image.Name, UUID: l.Image.UUID, LoadAddress: l.LoadAddress, Size: l.Size}
	}
	p, err := (&symbolize.Symbolizer{Symbols: syms}).NewProcess(m.Arch, loaded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func returnAddresses(frames []walker.Frame) []uint64 {
	out := make([]uint64, len(frames))
	for i, f := range frames {
		out[i] = f.ReturnAddress
	}
	return out
}

// describeFrames names each frame's return address, function, finder and
// trust, for the log of a walk that breaks the rule.
func describeFrames(p *symbolize.Process, frames []walker.Frame) string {
	var b strings.Builder
	for _, f := range frames {
		name := "?"
		if named := p.Frames(f.Index, f.ReturnAddress, f.LookupAddress, symstore.FoundBy(f.FoundBy)); len(named) > 0 && named[len(named)-1].Symbol != "" {
			name = named[len(named)-1].Symbol
		}
		fmt.Fprintf(&b, "[%#x %s %s %s] ", f.ReturnAddress, name, f.FoundBy, f.Trust)
	}
	return b.String()
}

// inOrder counts the frames of sub that full also holds, taken in order
// (greedily): a frame full lacks is skipped, not counted.
func inOrder[T comparable](sub, full []T) int {
	n, i := 0, 0
	for _, s := range sub {
		for j := i; j < len(full); j++ {
			if full[j] == s {
				n, i = n+1, j+1
				break
			}
		}
	}
	return n
}

func isSubsequence[T comparable](sub, full []T) bool {
	i := 0
	for _, s := range sub {
		for i < len(full) && full[i] != s {
			i++
		}
		if i == len(full) {
			return false
		}
		i++
	}
	return true
}

// subsetCount totals one subset's walks: how many, the frames they found
// that the full walks hold (in order), the full walks' frames, and the
// walks that are not a subsequence of the full one.
type subsetCount struct{ walks, frames, full, broken int }

// checkSubsets runs the program the sweeper s loaded, captures at every
// fewerSymbolsEvery-th boundary, walks each capture with full and with
// every reduced process, and adds to totals.
func checkSubsets(t *testing.T, s *sweeper, prog fixtures.Program, full *symbolize.Process, reduced map[string]*symbolize.Process, totals map[string]*subsetCount) {
	t.Helper()
	n := 0
	opts := RunOptions{OnStep: func(pc uint64) error {
		if n++; n%fewerSymbolsEvery != 0 {
			return nil
		}
		snap, err := s.m.Capture()
		if err != nil {
			return err
		}
		th := snap.Threads[0]
		wo := walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh}
		_, fres := full.Walk(th.Registers, snap.Memory, wo)
		fullRAs := returnAddresses(fres.Frames)
		for name, p := range reduced {
			_, res := p.Walk(th.Registers, snap.Memory, wo)
			got := returnAddresses(res.Frames)
			c := totals[name]
			if !isSubsequence(got, fullRAs) {
				c.broken++
				t.Logf("%s step %d (PC %#x) with %s: not a subsequence of the full walk\n reduced: %s\n full:    %s", s.name, n, pc, name, describeFrames(full, res.Frames), describeFrames(full, fres.Frames))
			}
			c.walks++
			c.frames += inOrder(got, fullRAs)
			c.full += len(fullRAs)
		}
		return nil
	}}
	if prog.End == fixtures.EndHalt {
		halt, err := SymbolAddress(s.loaded.Image, fixtures.HaltFunction)
		if err != nil {
			t.Fatal(err)
		}
		halt = s.m.Arch.CodeAddress(halt + s.loaded.Slide)
		opts.StopAt = func(pc uint64) bool { return pc == halt }
	}
	if _, err := s.m.Run(opts); err != nil {
		t.Fatal(err)
	}
}

// checkCeilings logs each subset's totals and fails where more walks
// break the property than ceilings allows.
func checkCeilings(t *testing.T, totals map[string]*subsetCount, ceilings map[string]int) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(totals)) {
		c := totals[name]
		t.Logf("with %s: %d walks, %d of the full walks' %d frames; %d not a subsequence", name, c.walks, c.frames, c.full, c.broken)
		if c.broken > ceilings[name] {
			t.Errorf("with %s: %d walks are not a subsequence of the full walk, at most %d before", name, c.broken, ceilings[name])
		}
		if c.walks < 1000 {
			t.Errorf("with %s: %d walks, want thousands", name, c.walks)
		}
	}
}

func TestFewerSymbolFilesEmulated(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "fixtures")
	m2, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]*subsetCount{"dSYM": {}, "none": {}}
	for _, out := range m2.Outputs {
		if len(out.DSYM) == 0 || out.Arch != "arm64" && out.Arch != "x86_64" {
			continue
		}
		prog, _ := m2.Program(out.Program)
		t.Run(out.Name(), func(t *testing.T) {
			s, err := newSweeper(dir, prog, out, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.m.Close()
			bin := filepath.Join(dir, out.Path)
			full := processWith(t, s.m, bin, bin+".dSYM")
			reduced := map[string]*symbolize.Process{"dSYM": processWith(t, s.m, bin+".dSYM"), "none": processWith(t, s.m)}
			checkSubsets(t, s, prog, full, reduced, totals)
		})
	}
	checkCeilings(t, totals, fewerSymbolsCeilings)
}

// fewerSymbolsFreshCeilings are TestFewerSymbolFilesFresh's
// fewerSymbolsCeilings, on the held-out seeds' programs: walks with no
// symbols that add a frame the walk with the binary lacks. Measured at
// the commit that set them: 578 before the record below SP was weighed,
// 303 before an LR near PC in frame 0's own image was set aside (stale
// LRs whose callee was a leaf), none since.
var fewerSymbolsFreshCeilings = map[string]int{"none": 0}

// TestFewerSymbolFilesFresh is TestFewerSymbolFilesEmulated on programs
// the walker was not tuned on, built without frame pointers for arm64
// and x86_64 at -O0 to -O2: a walk with no symbol files should find a
// subsequence of the walk with the binary (its symbols, unwind tables
// and code). The held-out seeds' walks are held to a ceiling; those of
// the seeds drawn at each run are counted and logged.
func TestFewerSymbolFilesFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and single-steps 60 programs; not with -short")
	}
	seeds := freshSeeds(t, heldOutSeeds, 2)
	o := freshOptions(t, seeds, nil, StaleNone)
	held := map[string]*subsetCount{"none": {}}
	drawn := map[string]*subsetCount{"none": {}}
	for i, seed := range seeds {
		totals := held
		if i >= len(heldOutSeeds) {
			totals = drawn
		}
		p := progen.Generate(seed)
		for _, arch := range o.Archs {
			for _, opt := range o.Opts {
				path, err := p.Compile(o.Dir, o.CC, o.LD, progen.Build{Arch: arch, Opt: opt, Tables: true})
				if err != nil {
					t.Fatal(err)
				}
				prog := fixtures.Program{Name: filepath.Base(path), Entry: "start", End: fixtures.EndReturn}
				out := fixtures.Output{Path: filepath.Base(path), Program: prog.Name, Frames: fixtures.FramesNoFP, Arch: arch, Opt: opt}
				s, err := newSweeper(o.Dir, prog, out, 0)
				if err != nil {
					t.Fatal(err)
				}
				full := processWith(t, s.m, path)
				checkSubsets(t, s, prog, full, map[string]*symbolize.Process{"none": processWith(t, s.m)}, totals)
				s.m.Close()
			}
		}
	}
	c := drawn["none"]
	t.Logf("seeds drawn: with none: %d walks, %d of the full walks' %d frames; %d not a subsequence", c.walks, c.frames, c.full, c.broken)
	checkCeilings(t, held, fewerSymbolsFreshCeilings)
}
