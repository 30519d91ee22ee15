package debuginfo_test

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
)

// TestRangeListsThroughStores: in the DWARF 5 fixture whose address
// ranges are range lists by index (DW_FORM_rnglistx), every address the
// golden file holds (every instruction of every function) answers as
// llvm-symbolizer does (function, file, line, column, inline chain)
// through symstore's DWARF path and through a symindex file written from
// it, as TestGolden checks for debuginfo itself.
func TestRangeListsThroughStores(t *testing.T) {
	want := debuginfo.ReadGolden(t, "testdata/golden/rnglist-dwarf5.txt")
	f, err := image.Open("testdata/fixtures/rnglist-dwarf5.o")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := symstore.NewEntry(f.Images...)
	if err != nil {
		t.Fatalf("NewEntry: %v", err)
	}
	var buf bytes.Buffer
	if err := e.WriteIndex(&buf); err != nil {
		t.Fatalf("WriteIndex: %v", err)
	}
	ix, err := symindex.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("symindex.Parse: %v", err)
	}
	type frame struct {
		Raw, File    string
		Line, Column int
		Inlined      bool
	}
	view := func(frames []debuginfo.Frame) []frame {
		var out []frame
		for _, fr := range frames {
			raw := fr.LinkageName
			if raw == "" {
				raw = fr.Function
			}
			out = append(out, frame{raw, fr.File, fr.Line, fr.Column, fr.Inlined})
		}
		return out
	}
	inlined := 0
	for _, a := range slices.Sorted(maps.Keys(want)) {
		var w []frame
		for _, g := range want[a] {
			w = append(w, frame{g.Raw, g.File, g.Line, g.Column, g.Inlined})
		}
		if len(w) > 1 {
			inlined++
		}
		if diff := cmp.Diff(w, view(e.Source(a))); diff != "" {
			t.Errorf("symstore Source(%#x) differs from llvm-symbolizer (-want +got):\n%s", a, diff)
		}
		got, _ := ix.Source(a)
		if diff := cmp.Diff(w, view(got)); diff != "" {
			t.Errorf("symindex Source(%#x) differs from llvm-symbolizer (-want +got):\n%s", a, diff)
		}
	}
	if len(want) < 100 || inlined < len(want)/2 {
		t.Errorf("%d addresses, %d with inlined frames: want at least 100, half inlined", len(want), inlined)
	}
}
