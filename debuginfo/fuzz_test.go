package debuginfo

import (
	"debug/macho"
	"testing"
)

// FuzzIndex mutates the four sections the index reads most (info, abbrev,
// line, str) of real DWARF and checks that New either fails cleanly or
// yields an index whose lookups do not panic and whose warnings stay
// bounded, and that New, parsing every unit and the lookups allocate at
// most 64 bytes per input byte plus 64 MiB. Seeds are the committed
// fixtures (DWARF 2, 4, 5) and, when present, small corpus dSYMs.
func FuzzIndex(f *testing.F) {
	seeds := []struct {
		path string
		cpu  macho.Cpu
	}{
		{"testdata/fixtures/inl-dwarf2.dwarf", macho.CpuArm64},
		{"testdata/fixtures/inl-dwarf4.dwarf", macho.CpuArm64},
		{"testdata/fixtures/inl-dwarf5.o", macho.CpuArm64},
	}
	for _, s := range seeds {
		addSeed(f, dwarfSections(f, s.path, s.cpu))
	}
	addSeed(f, buildSynth(synthUnits).sections()) // three units, one line table each
	addSeed(f, hugeRangeSections(100))
	if dir, err := findCorpus(); err == nil {
		addSeed(f, dwarfSections(f, dir+"/pprof/internal/binutils/testdata/lib_mac_64.dSYM/Contents/Resources/DWARF/lib_mac_64", macho.CpuAmd64))
		addSeed(f, dwarfSections(f, dir+"/symbolic/symbolic-testutils/fixtures/macos/overlapping_funcs.dSYM/Contents/Resources/DWARF/overlapping_funcs", macho.CpuAmd64))
	}
	// The other sections of the DWARF 5 seed stay fixed: debug_addr,
	// debug_str_offsets and debug_line_str give the mutated info something
	// to point into.
	base := dwarfSections(f, "testdata/fixtures/inl-dwarf5.o", macho.CpuArm64)
	f.Fuzz(func(t *testing.T, info, abbrev, line, str []byte, addr uint64) {
		secs := make(map[string][]byte, len(base))
		for k, v := range base {
			secs[k] = v
		}
		secs["debug_info"], secs["debug_abbrev"], secs["debug_line"], secs["debug_str"] = info, abbrev, line, str
		var ix *Index
		var err error
		// New, every unit parsed and the lookups together stay within the
		// allocation budget the hostile-input tests hold the index to.
		withinBudget(t, sectionsSize(secs), func() {
			if ix, err = New(secs); err != nil {
				return
			}
			parseAll(ix)
			for _, a := range []uint64{addr, 0, addr + 1, ^uint64(0)} {
				frames, err := ix.Lookup(a)
				ok := err == nil
				if ok != (len(frames) > 0) {
					t.Fatalf("Lookup(%#x) = %d frames, ok %v", a, len(frames), ok)
				}
				if len(frames) > maxDepth {
					t.Fatalf("Lookup(%#x) = %d frames, more than maxDepth", a, len(frames))
				}
				if known, isReturn := ix.CallReturn(a); isReturn && !known {
					t.Fatalf("CallReturn(%#x) = a return not known", a)
				}
				if known, reaches := ix.CallReaches(a, addr); reaches && !known {
					t.Fatalf("CallReaches(%#x, %#x) = reaches, not known", a, addr)
				}
				if _, end, known := ix.FrameLocals(a); known && end <= 0 {
					t.Fatalf("FrameLocals(%#x) = end %d, known", a, end)
				}
			}
		})
		if err != nil {
			return
		}
		if w := ix.Warnings(); len(w) > maxWarnings+1 {
			t.Fatalf("Warnings() = %d lines, want at most %d", len(w), maxWarnings+1)
		}
	})
}

func addSeed(f *testing.F, secs map[string][]byte) {
	f.Add(secs["debug_info"], secs["debug_abbrev"], secs["debug_line"], secs["debug_str"], uint64(0x1000002a0))
}
