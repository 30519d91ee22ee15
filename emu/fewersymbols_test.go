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
// a stale LR is refused where the record its callee pushed still lies
// below SP (walker's lrUsedBelowSP); what still breaks it: a stale LR
// whose callee was a leaf (it pushed nothing), one whose record frame 0
// moved SP far above, and a Swift async callee's: without the image's
// functions or code nothing tells them from a leaf's caller
// (docs/walker.md, "What it cannot know without unwind info").
var fewerSymbolsCeilings = map[string]int{"dSYM": 0, "none": 3}

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

func TestFewerSymbolFilesEmulated(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "fixtures")
	m2, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	type count struct{ walks, frames, full, broken int }
	totals := map[string]*count{"dSYM": {}, "none": {}}
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
						t.Logf("%s step %d (PC %#x) with %s: not a subsequence of the full walk\n reduced: %s\n full:    %s", out.Name(), n, pc, name, describeFrames(full, res.Frames), describeFrames(full, fres.Frames))
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
		})
	}
	for _, name := range slices.Sorted(maps.Keys(totals)) {
		c := totals[name]
		t.Logf("with %s: %d walks, %d of the full walks' %d frames; %d not a subsequence", name, c.walks, c.frames, c.full, c.broken)
		if c.broken > fewerSymbolsCeilings[name] {
			t.Errorf("with %s: %d walks are not a subsequence of the full walk, at most %d before", name, c.broken, fewerSymbolsCeilings[name])
		}
		if c.walks < 1000 {
			t.Errorf("with %s: %d walks, want the fixtures' thousands", name, c.walks)
		}
	}
}
