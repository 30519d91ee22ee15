package debuginfo

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseAhead checks that parsing units with several workers leaves the
// Index as one pass in order does: the same boundaries (every unit's
// addresses, sorted and without repeats), the same warnings in the same
// order, and the same answer at every boundary, one byte either side.
// Inputs: the fixtures and corpus dSYMs of the golden tests (the latter
// skipped without the corpus), 300 units whose line tables are damaged
// (warnings, more than are kept), 40 units laid out in descending address
// order, and 64 units sharing one line program (decoded by two workers at
// once, shared once cached). Run with -race, it checks that the workers
// share the Index safely.
func TestParseAhead(t *testing.T) {
	type input struct {
		name string
		secs func(t *testing.T) map[string][]byte
	}
	var inputs []input
	for _, ds := range dsyms {
		inputs = append(inputs, input{ds.name, func(t *testing.T) map[string][]byte {
			path := ds.path
			if !strings.HasPrefix(path, "testdata/") {
				path = corpusFile(t, ds.path)
			}
			return dwarfSections(t, path, ds.cpu)
		}})
	}
	inputs = append(inputs, input{"damaged line tables", func(*testing.T) map[string][]byte {
		units := make([]synthUnit, 301)
		for i := range units {
			units[i] = synthUnit{name: fmt.Sprintf("u%d.c", i), fn: fmt.Sprintf("f%d", i), lo: uint64(0x1000 * (i + 1)), size: 0x10, line: i + 1}
		}
		s := buildSynth(units)
		for i := 0; i < len(units)-1; i += 2 {
			s.line[s.lineOff[i]+4] = 99 // unsupported line table version
		}
		return s.sections()
	}})
	inputs = append(inputs, input{"units in descending order", func(*testing.T) map[string][]byte {
		units := make([]synthUnit, 40)
		for i := range units {
			units[i] = synthUnit{name: fmt.Sprintf("u%d.c", i), fn: fmt.Sprintf("f%d", i), lo: uint64(0x1000 * (len(units) - i)), size: 0x10, line: i + 1}
		}
		return buildSynth(units).sections()
	}})
	inputs = append(inputs, input{"shared line program", func(*testing.T) map[string][]byte {
		return sharedLineProgram(2000, 64, 0x10000)
	}})
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			serial, err := New(in.secs(t))
			if err != nil {
				t.Fatal(err)
			}
			ahead, err := New(in.secs(t))
			if err != nil {
				t.Fatal(err)
			}
			want, got := serial.boundaries(1), ahead.boundaries(4)
			if !slices.Equal(want, got) {
				t.Fatalf("boundaries: %d in order, %d with 4 workers", len(want), len(got))
			}
			// Every unit's rows, function ranges and unit ranges, sorted
			// and without repeats, however the units are laid out.
			var all []uint64
			for u := range serial.units {
				ui := serial.unit(u)
				if ui.lines != nil {
					for _, r := range ui.lines.rows {
						all = append(all, r.addr)
					}
				}
				for _, s := range ui.segs {
					all = append(all, s.lo, s.hi)
				}
			}
			for _, s := range serial.byAddr {
				all = append(all, s.lo, s.hi)
			}
			slices.Sort(all)
			if all = slices.Compact(all); !slices.Equal(all, want) {
				t.Fatalf("boundaries: %d, want %d", len(want), len(all))
			}
			if diff := cmp.Diff(serial.Warnings(), ahead.Warnings()); diff != "" {
				t.Errorf("warnings differ (-in order +4 workers):\n%s", diff)
			}
			for _, b := range want {
				for _, a := range []uint64{b - 1, b, b + 1} {
					wf, werr := serial.Lookup(a)
					gf, gerr := ahead.Lookup(a)
					if werr != gerr {
						t.Fatalf("Lookup(%#x) error %v in order, %v with 4 workers", a, werr, gerr)
					}
					if diff := cmp.Diff(wf, gf); diff != "" {
						t.Fatalf("Lookup(%#x) differs (-in order +4 workers):\n%s", a, diff)
					}
				}
			}
			if len(want) == 0 {
				t.Error("no boundary: the test compares nothing")
			}
		})
	}
}
