//go:build unicorn

package emu

import (
	"fmt"
	"path/filepath"

	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/fixtures"
)

// Fresh programs (emu/progen) are swept as the fixtures are, in groups of
// their own: the walker was never tuned on them.
const (
	// GroupFresh: generated programs without frame pointers, walked with
	// their unwind tables.
	GroupFresh = "fresh"
	// GroupFreshNoTables: the same binaries walked with their unwind
	// tables withheld (symbolize.Process.NoUnwindInfo, --no-unwind-info),
	// their code still read: as GroupNoFPNoTables is for the fixtures.
	GroupFreshNoTables = "fresh-notables"
	// GroupFreshBuiltNoTables: generated programs built without unwind
	// tables at all (-ffreestanding without -funwind-tables).
	GroupFreshBuiltNoTables = "fresh-nounwind"
	// GroupFreshDSYM: generated programs built with -g, walked with
	// their dSYM alone (no binary: no code bytes; and the unwind tables
	// dsymutil copies into the dSYM withheld), as a crash pipeline walks
	// an app whose dSYM was uploaded. Scanned words are checked by the
	// dSYM's functions and its DWARF call sites (DW_AT_call_return_pc).
	GroupFreshDSYM = "fresh-dsym"
	// GroupFreshDSYMNoCallSites: the same walks with the DWARF call sites
	// hidden from the walker (the dSYM's functions alone check a word):
	// what the call sites change.
	GroupFreshDSYMNoCallSites = "fresh-dsym-nocallsites"
)

// dsymOnly reports whether a group walks with the program's dSYM alone.
func dsymOnly(group string) bool {
	return group == GroupFreshDSYM || group == GroupFreshDSYMNoCallSites
}

// withholdsTables reports whether a group walks its programs without
// unwind tables: withheld, or never built. Its truth then leaves out the
// sentinel (see step).
func withholdsTables(group string) bool {
	return group == GroupNoFPNoTables || group == GroupFreshNoTables || group == GroupFreshBuiltNoTables || dsymOnly(group)
}

// SweepProgram single-steps the executable at path from its entry, the
// function start, to the sentinel, as SweepOutput does a fixture, and adds
// every boundary to cell (whose Group, Arch and Opt the caller sets;
// cell.Group says whether the tables are withheld). stale says what the
// stack holds before the run. It returns the boundaries that were not
// exact and the 32-bit value start returned, which the caller compares
// across builds of one program: a run that went wrong is no ground truth.
func SweepProgram(path string, cell *SweepCell, stale StaleStack) ([]SweepMiss, uint32, error) {
	prog := fixtures.Program{Name: filepath.Base(path), Entry: "start", End: fixtures.EndReturn}
	out := fixtures.Output{Path: filepath.Base(path), Program: prog.Name, Frames: fixtures.FramesNoFP, Arch: cell.Arch, Opt: cell.Opt}
	return sweepRun(filepath.Dir(path), prog, out, cell, stale)
}

// FreshOptions say which generated programs SweepFresh builds and sweeps.
type FreshOptions struct {
	Dir    string  // where the sources and binaries are written
	CC, LD string  // clang-16 and ld64.lld-16
	Seeds  []int64 // one program per seed (progen.Generate)
	Archs  []string
	Opts   []string
	// Groups are the sweeps of each build: GroupFresh and
	// GroupFreshNoTables sweep a build with unwind tables,
	// GroupFreshBuiltNoTables one built without.
	Groups []string
	Stale  StaleStack
	// DSYMUtil is dsymutil-16, which GroupFreshDSYM and
	// GroupFreshDSYMNoCallSites need.
	DSYMUtil string
}

// SweepFresh generates a program for every seed, builds it for every
// architecture and level, sweeps each build in every group, and checks
// that every build of one program returned the same value.
func SweepFresh(o FreshOptions) (*SweepReport, error) {
	rep := &SweepReport{}
	for _, seed := range o.Seeds {
		p := progen.Generate(seed)
		// first holds the value start returned, per source text (the
		// portable one returns another).
		first := map[bool]*uint32{}
		for _, arch := range o.Archs {
			for _, opt := range o.Opts {
				for _, group := range o.Groups {
					b := progen.Build{Arch: arch, Opt: opt, Tables: group != GroupFreshBuiltNoTables}
					if dsymOnly(group) {
						if o.DSYMUtil == "" {
							return nil, fmt.Errorf("emu: group %s needs dsymutil-16 (FreshOptions.DSYMUtil)", group)
						}
						b.DSYM = o.DSYMUtil
					}
					path, err := p.Compile(o.Dir, o.CC, o.LD, b)
					if err != nil {
						return nil, err
					}
					cell := rep.Cell(group, arch, opt)
					if cell == nil {
						rep.Cells = append(rep.Cells, SweepCell{Group: group, Arch: arch, Opt: opt})
						cell = &rep.Cells[len(rep.Cells)-1]
					}
					misses, result, err := SweepProgram(path, cell, o.Stale)
					if err != nil {
						return nil, fmt.Errorf("seed %d: %w", seed, err)
					}
					if f := first[b.Portable()]; f == nil {
						first[b.Portable()] = &result
					} else if result != *f {
						return nil, fmt.Errorf("emu: seed %d: %s returned %#x, another build %#x: the run went wrong", seed, path, result, *f)
					}
					rep.Misses = append(rep.Misses, misses...)
				}
			}
		}
	}
	return rep, nil
}
