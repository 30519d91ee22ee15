package debuginfo

import (
	"debug/macho"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// unitView is what a parsed unit holds, comparable with cmp.
type unitView struct {
	Nodes  []node
	Segs   []seg
	Root   group
	Rows   []row
	Names  []string
	Files  []string
	Sorted bool
}

func viewOf(ui *unitIndex) unitView {
	v := unitView{Nodes: ui.nodes, Segs: ui.segs, Root: ui.root}
	if lt := ui.lines; lt != nil {
		v.Rows, v.Names, v.Files, v.Sorted = lt.rows, lt.names, lt.files, lt.sorted
	}
	return v
}

var unitViewOpts = cmp.AllowUnexported(node{}, seg{}, group{}, row{})

// compareWalks builds an Index of secs twice, with fastWalk and with the
// debug/dwarf walk alone, parses every unit of both and reports any
// difference: each unit's functions, ranges and line table, the warnings
// and the boundaries. It returns the index fastWalk parsed, nil when New
// failed.
func compareWalks(t testing.TB, secs map[string][]byte) *Index {
	t.Helper()
	ref, refErr := build(maps.Clone(normalize(secs)), true)
	ix, err := build(maps.Clone(normalize(secs)), false)
	if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
		t.Fatalf("New: %v with fastWalk, %v with debug/dwarf alone", err, refErr)
	}
	if err != nil {
		return nil
	}
	for u := range ix.units {
		want, got := viewOf(ref.unit(u)), viewOf(ix.unit(u))
		if diff := cmp.Diff(want, got, unitViewOpts); diff != "" {
			t.Fatalf("unit %d at %#x differs (-debug/dwarf +fastWalk):\n%s", u, ix.units[u].first, diff)
		}
	}
	if diff := cmp.Diff(ref.Warnings(), ix.Warnings()); diff != "" {
		t.Errorf("Warnings() differ (-debug/dwarf +fastWalk):\n%s", diff)
	}
	bounds := ix.Boundaries()
	if diff := cmp.Diff(ref.Boundaries(), bounds); diff != "" {
		t.Errorf("Boundaries() differ (-debug/dwarf +fastWalk):\n%s", diff)
	}
	// An index without addresses may give nil or an empty slice.
	if diff := cmp.Diff(naiveBoundaries(ix), bounds, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Boundaries() differ from every range end and row sorted (-sorted +Boundaries):\n%s", diff)
	}
	if n := ref.fastUnits.Load(); n != 0 {
		t.Errorf("the reference index parsed %d units with fastWalk, want 0", n)
	}
	if n := ref.fastLineTables.Load() + ref.slowLineTables.Load(); n != 0 {
		t.Errorf("the reference index tried fastLines on %d line programs, want 0", n)
	}
	return ix
}

// allFast compares the walks on secs and fails the test unless fastWalk
// parsed all of at least minUnits units and fastLines decoded every line
// program (and there were some).
func allFast(t *testing.T, secs map[string][]byte, minUnits int) {
	t.Helper()
	ix := compareWalks(t, secs)
	if ix == nil {
		t.Fatal("New failed")
	}
	if fast, units := int(ix.fastUnits.Load()), len(ix.units); fast != units || units < minUnits {
		t.Errorf("fastWalk parsed %d of %d units, want all of at least %d", fast, units, minUnits)
	}
	if fast, slow := ix.fastLineTables.Load(), ix.slowLineTables.Load(); slow != 0 || fast == 0 {
		t.Errorf("fastLines decoded %d line programs and left %d to debug/dwarf, want all", fast, slow)
	}
}

// TestFastWalkMatchesDebugDWARF: on the fixtures (DWARF 2, 4 and 5), the
// corpus dSYMs and a darwin cmd/go, fastWalk parses every unit to exactly
// what the debug/dwarf walk parses, and it parses them all itself, line
// programs included (it gives up only on what well-formed DWARF does not
// hold).
func TestFastWalkMatchesDebugDWARF(t *testing.T) {
	for _, ds := range dsyms {
		t.Run(ds.name, func(t *testing.T) {
			path := ds.path
			if !strings.HasPrefix(path, "testdata/") {
				path = corpusFile(t, ds.path)
			}
			allFast(t, dwarfSections(t, path, ds.cpu), 1)
		})
	}
	t.Run("cmd/go", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds a darwin cmd/go: not in -short")
		}
		bin, err := testcorpus.GoDarwinBinary()
		if err != nil {
			t.Skipf("no darwin cmd/go build: %v", err)
		}
		f, err := image.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		secs, err := f.Images[0].DWARFSections()
		if err != nil {
			t.Fatal(err)
		}
		allFast(t, secs, 100)
	})
}

// FuzzFastWalk: on mutated DWARF (the seeds of FuzzIndex), fastWalk never
// panics and parses every unit it does not give up on to what the
// debug/dwarf walk parses, with the same warnings.
func FuzzFastWalk(f *testing.F) {
	for _, p := range []string{"testdata/fixtures/inl-dwarf2.dwarf", "testdata/fixtures/inl-dwarf4.dwarf", "testdata/fixtures/inl-dwarf5.o"} {
		addSeed(f, dwarfSections(f, p, macho.CpuArm64))
	}
	addSeed(f, buildSynth(synthUnits).sections())
	base := dwarfSections(f, "testdata/fixtures/inl-dwarf5.o", macho.CpuArm64)
	f.Fuzz(func(t *testing.T, info, abbrev, line, str []byte, _ uint64) {
		secs := maps.Clone(base)
		secs["debug_info"], secs["debug_abbrev"], secs["debug_line"], secs["debug_str"] = info, abbrev, line, str
		compareWalks(t, secs)
	})
}

// TestFastWalkGivesUp: a unit holding what fastWalk does not read as
// debug/dwarf does is walked by debug/dwarf instead, with the same
// result: a form it does not decode is read, and damage is reported as a
// warning naming the unit and the DIE's offset, the functions before it
// kept.
func TestFastWalkGivesUp(t *testing.T) {
	// Abbreviation 5: a subprogram whose name is DW_FORM_indirect; 6: a
	// lexical block with children; 7: a variable whose name is
	// DW_FORM_strp.
	abbrev := append(slices.Clone(hostileAbbrev[:len(hostileAbbrev)-1]),
		5, 0x2e, 0, 0x03, 0x16, 0x11, 0x01, 0x12, 0x06, 0, 0,
		6, 0x0b, 1, 0, 0,
		7, 0x34, 0, 0x03, 0x0e, 0, 0,
		0)
	cu := append([]byte{1}, "a.c\x00"...)
	cu = binary.LittleEndian.AppendUint32(cu, 0) // stmt_list
	indirect := append([]byte{5, 0x08}, "ind\x00"...)
	indirect = binary.LittleEndian.AppendUint64(indirect, 0x2000)
	indirect = binary.LittleEndian.AppendUint32(indirect, 0x10)
	good := subprogram("good", 0x1000, 0x10)
	// A variable named by a debug_str offset past the section's last
	// string, the first DIE after a run of null entries: debug/dwarf
	// decodes it, and fails there.
	badStrp := binary.LittleEndian.AppendUint32([]byte{7}, 0x100)
	for _, tc := range []struct {
		name     string
		dies     []byte
		lookup   uint64
		function string
		warning  string // a substring of the one warning, "" for none
	}{
		{"DW_FORM_indirect", concat(cu, good, indirect, []byte{0}), 0x2008, "ind", ""},
		{"unknown abbreviation code", concat(cu, good, []byte{9, 0}), 0x1008, "good", "compile unit at 0xb (a.c): DIEs: decoding dwarf section info at offset 0x"},
		{"debug_str offset past the section, after null entries", concat(cu, []byte{6}, good, []byte{0}, badStrp, subprogram("after", 0x3000, 0x10), []byte{0}), 0x1008, "good", "compile unit at 0xb (a.c): DIEs: decoding dwarf section str at offset 0x0: underflow"},
		{"DIE past the unit's end", concat(cu, good, subprogram("cut", 0x3000, 0x10)[:6]), 0x1008, "good", "compile unit at 0xb (a.c): DIEs:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs := map[string][]byte{"debug_info": unit4(0, tc.dies), "debug_abbrev": abbrev, "debug_str": []byte("s\x00")}
			ix := compareWalks(t, secs)
			if ix == nil {
				t.Fatal("New failed")
			}
			if n := ix.fastUnits.Load(); n != 0 {
				t.Errorf("fastWalk parsed %d units, want 0: it should give up", n)
			}
			if frames, err := ix.Lookup(tc.lookup); err != nil || frames[0].Function != tc.function {
				t.Errorf("Lookup(%#x) = %v, %v; want %s", tc.lookup, frames, err, tc.function)
			}
			w := ix.Warnings()
			switch {
			case tc.warning == "" && len(w) != 0:
				t.Errorf("Warnings() = %q, want none", w)
			case tc.warning != "" && (len(w) != 1 || !strings.Contains(w[0], tc.warning)):
				t.Errorf("Warnings() = %q, want one containing %q", w, tc.warning)
			}
		})
	}
}

func concat(parts ...[]byte) []byte { return slices.Concat(parts...) }
