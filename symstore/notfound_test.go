package symstore

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/unwind/compactunwind"
	"github.com/stackimage/stackimage/uuid"
)

// TestNotFoundIsOneError checks that every Lookup and Resolve says "not
// found" with the one sentinel, lookup.ErrNotFound, that each package's
// ErrNotFound is that same value, and that a hit is not an error.
func TestNotFoundIsOneError(t *testing.T) {
	bin := filepath.Join("..", "fixtures", "bin", "chain-arm64-O1")
	dsym := filepath.Join(bin+".dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")
	open := func(path string) *image.Image {
		f, err := image.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f.Images[0]
	}
	binImage, dsymImage := open(bin), open(dsym)
	// The first instruction of __text, which every table covers, and an
	// address below the image, which none does.
	text, _ := binImage.TextSegment()
	var hit uint64
	for _, s := range binImage.Sections {
		if s.Name == "__text" {
			hit = s.Addr
		}
	}
	miss := uint64(0x10)

	table, err := symtab.New(binImage)
	if err != nil {
		t.Fatal(err)
	}
	dwarf, err := debuginfo.NewFromImage(dsymImage)
	if err != nil {
		t.Fatal(err)
	}
	syms := NewSymbols()
	defer syms.Close()
	for _, p := range []string{bin, dsym} {
		if err := syms.AddFile(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	entry, err := syms.Lookup(binImage.UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer entry.Release()
	var buf bytes.Buffer
	if err := entry.WriteIndex(&buf); err != nil {
		t.Fatal(err)
	}
	index, err := symindex.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sym, err := breakpadsym.Parse([]byte("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 app\nFUNC 1000 10 0 f\n"))
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := ParseSymbolMap([]byte("BCSymbolMap Version: 2.0\nname0\n"))
	if err != nil {
		t.Fatal(err)
	}

	list := image.NewList([]*image.Loaded{{Name: "app", UUID: binImage.UUID, LoadAddress: text.Addr, Image: binImage}})

	lookups := []struct {
		name      string
		hit, miss func() error
	}{
		{"image.List.Lookup",
			func() error { _, err := list.Lookup(hit); return err },
			func() error { _, err := list.Lookup(miss); return err }},
		{"symtab.Table.Lookup",
			func() error { _, err := table.Lookup(hit); return err },
			func() error { _, err := table.Lookup(miss); return err }},
		{"debuginfo.Index.Lookup",
			func() error { _, err := dwarf.Lookup(hit); return err },
			func() error { _, err := dwarf.Lookup(miss); return err }},
		{"breakpadsym.File.Lookup",
			func() error { _, err := sym.Lookup(0x1004); return err },
			func() error { _, err := sym.Lookup(0x2000); return err }},
		{"symindex.Index.Lookup",
			func() error { _, err := index.Lookup(hit); return err },
			func() error { _, err := index.Lookup(miss); return err }},
		{"symstore.Symbols.Lookup",
			func() error { e, err := syms.Lookup(binImage.UUID); e.Release(); return err },
			func() error { _, err := syms.Lookup(uuid.UUID{0xee}); return err }},
		{"symstore.Symbols.LookupNoUUID",
			nil,
			func() error { _, err := syms.LookupNoUUID("NoSuchImage", nil); return err }},
		{"symstore.Symbols.Resolve",
			func() error { _, err := syms.Resolve(binImage.UUID, nil, hit); return err },
			func() error { _, err := syms.Resolve(uuid.UUID{0xee}, nil, hit); return err }},
		{"symstore.SymbolMap.Resolve",
			func() error { _, err := hidden.Resolve("__hidden#0_"); return err },
			func() error { _, err := hidden.Resolve("__hidden#7_"); return err }},
	}
	for _, l := range lookups {
		if l.hit != nil {
			if err := l.hit(); err != nil {
				t.Errorf("%s of something it has: error %v", l.name, err)
			}
		}
		err := l.miss()
		if !errors.Is(err, lookup.ErrNotFound) {
			t.Errorf("%s of something it lacks: error %v, want one errors.Is counts as lookup.ErrNotFound", l.name, err)
		}
		// Each package's own name for it works the same.
		for _, own := range []error{image.ErrNotFound, symtab.ErrNotFound, debuginfo.ErrNotFound, breakpadsym.ErrNotFound, symindex.ErrNotFound, ErrNotFound} {
			if !errors.Is(err, own) {
				t.Errorf("%s: errors.Is(%v, %v) = false", l.name, err, own)
			}
		}
	}
	if !errors.Is(compactunwind.ErrNotFound, lookup.ErrNotFound) || !errors.Is(ErrNoSymbols, lookup.ErrNotFound) {
		t.Error("compactunwind.ErrNotFound or ErrNoSymbols is not a lookup.ErrNotFound")
	}
}
