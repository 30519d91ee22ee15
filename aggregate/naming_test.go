package aggregate

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
)

// TestNamesAsSymbolize checks that Symbolicate names every location as
// symstore's Entry.Resolve (symbolize's naming) names the same address, one
// at a time: functions, mangled names, inlined frames, files, lines,
// columns and the source of the name. The addresses are random offsets in
// each fixture binary's __TEXT, from a seed drawn for this run.
func TestNamesAsSymbolize(t *testing.T) {
	syms := fixtureSymbols(t).syms
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 29))
	paths, err := filepath.Glob("../fixtures/bin/*")
	if err != nil {
		t.Fatal(err)
	}
	checked, columns, dwarfNamed := 0, 0, 0
	for _, path := range paths {
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue
		}
		f, err := image.Open(path)
		if err != nil || len(f.Images) != 1 {
			continue // object files, fat files: the fixtures' thin executables suffice
		}
		im := f.Images[0]
		text, ok := im.TextSegment()
		f.Close()
		if !ok || im.UUID.IsZero() {
			continue
		}
		const load = 0x100000000
		rec := &Record{Images: []Image{{UUID: im.UUID, LoadAddress: load, Name: filepath.Base(path)}}}
		for range 64 {
			rec.Frames = append(rec.Frames, load+rng.Uint64N(text.Size))
		}
		agg := New()
		agg.Add(rec)
		res, err := agg.Symbolicate(context.Background(), syms)
		if err != nil {
			t.Fatal(err)
		}
		e, err := syms.LookupContext(context.Background(), im.UUID)
		if err != nil || e == nil {
			t.Fatalf("%s: no entry: %v", path, err)
		}
		for _, loc := range res.Locations {
			unslid := text.Addr + loc.Offset
			frames := e.Resolve(symstore.Frame{Address: unslid, LookupAddress: unslid, ImageLoadAddress: text.Addr}, unslid, symstore.ResolveOptions{})
			want := appendLines(nil, frames)
			if len(want) == 1 && want[0] == (Line{}) {
				want = []Line{{}}
			}
			if diff := cmp.Diff(want, loc.Lines); diff != "" {
				t.Errorf("%s at offset %#x (-Resolve +Symbolicate):\n%s", path, loc.Offset, diff)
			}
			for _, l := range loc.Lines {
				if l.Column > 0 {
					columns++
				}
				if l.Source == symstore.SourceDWARF {
					dwarfNamed++
				}
			}
			checked++
		}
		_ = e.Release()
	}
	if checked == 0 || columns == 0 {
		t.Fatalf("checked %d locations, %d lines with a column: the fixtures should give both", checked, columns)
	}
	t.Logf("%d locations, %d lines with a column, %d named by DWARF", checked, columns, dwarfNamed)
}
