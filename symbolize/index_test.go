package symbolize

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// TestSymbolsByUUIDAndClose indexes the fixture binaries, finds one by its
// UUID, and checks that Close forgets the loaded entry while the index
// still answers afterwards.
func TestSymbolsByUUIDAndClose(t *testing.T) {
	path := filepath.Join("..", "fixtures", "bin", "chain-x86_64-O1")
	f, err := image.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := f.Images[0].UUID
	f.Close()

	syms := NewSymbols()
	if err := syms.AddDir(filepath.Join("..", "fixtures", "bin")); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		e, err := syms.Lookup(want)
		if err != nil || e == nil {
			t.Fatalf("round %d: Lookup(%s) = %v, %v; want the fixture", round, want, e, err)
		}
		if e.Image().UUID != want {
			t.Errorf("round %d: Lookup(%s) gave an image with UUID %s", round, want, e.Image().UUID)
		}
		if err := syms.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if len(syms.loaded) != 0 || len(syms.open) != 0 {
			t.Errorf("after Close: %d entries loaded, %d files open; want none", len(syms.loaded), len(syms.open))
		}
	}
	if e, err := syms.Lookup(image.UUID{1}); e != nil || err != nil {
		t.Errorf("Lookup(unknown UUID) = %v, %v; want nil, nil", e, err)
	}
}

// TestProcessWarnings checks that a symbol file whose DWARF could not be
// used is reported once, however many images share it.
func TestProcessWarnings(t *testing.T) {
	path := filepath.Join("..", "fixtures", "bin", "chain-arm64-O1")
	f, err := image.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	p, err := (&Symbolizer{}).NewProcess(nil, []*image.Loaded{{Name: path, LoadAddress: 0x100000000, Image: im}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Warnings(); len(got) != 0 {
		t.Fatalf("Warnings() = %q before any problem, want none", got)
	}
	for _, e := range p.entries {
		e.DebugErrors = append(e.DebugErrors, errors.New("chain-arm64-O1: DWARF: bad abbreviation"))
	}
	got := p.Warnings()
	if len(got) != 1 || got[0] != "chain-arm64-O1: DWARF: bad abbreviation" {
		t.Errorf("Warnings() = %q, want the one DWARF error", got)
	}
}
