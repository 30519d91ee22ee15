package symbolize

import (
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
