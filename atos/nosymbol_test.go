package atos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/atos"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// TestNoSymbolIsOneAnswer sweeps every address of the fixtures' __TEXT
// segments and past their ends, with and without the dSYM, and checks
// that the three ways of asking agree on whether a symbol covers it and
// on its name: Symbols.Resolve (a frame without a symbol), Entry.Symbol
// (false) and atos (the address itself).
func TestNoSymbolIsOneAnswer(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, path string
		index      bool // answer from a symindex file made of the path's entry
	}{
		{"binary", "../fixtures/bin/chain-arm64-O1", false},
		{"binary and dSYM", "../fixtures/bin/chain-arm64-O1.dSYM", false},
		{"x86_64 binary", "../fixtures/bin/chain-x86_64-O1", false},
		{"armv7 binary and dSYM", "../fixtures/bin/chain-armv7-O1.dSYM", false},
		{"x86_64 binary and dSYM, -O2", "../fixtures/bin/dwarf-x86_64-O2.dSYM", false},
		{"index of binary and dSYM", "../fixtures/bin/chain-arm64-O1.dSYM", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			syms := symstore.NewSymbols()
			defer syms.Close()
			if err := syms.AddDir(ctx, tt.path); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tt.path, ".dSYM") {
				if err := syms.AddFile(ctx, strings.TrimSuffix(tt.path, ".dSYM")); err != nil {
					t.Fatal(err)
				}
			}
			id := syms.UUIDs()[0]
			if tt.index {
				syms = indexOf(t, syms, id)
				defer syms.Close()
			}
			entry, err := syms.LookupContext(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			defer entry.Release()
			a := atos.New(entry, entry.Image(), "app", atos.Options{})
			text, ok := entry.Image().TextSegment()
			if !ok {
				t.Fatal("no __TEXT")
			}
			covered, uncovered := 0, 0
			for addr := text.Addr - 0x40; addr < text.Addr+text.Size+0x40; addr += 2 {
				sym, symOK := entry.Symbol(addr)
				frames, err := syms.Resolve(id, nil, addr)
				if err != nil || len(frames) == 0 {
					t.Fatalf("Resolve(%#x) = %v, %v; want a frame", addr, frames, err)
				}
				outer := frames[len(frames)-1]
				answer := strings.TrimSuffix(string(a.AppendAnswer(nil, addr)), "\n")
				atosNamed := answer != fmt.Sprintf("%#x", addr)
				if symOK != (outer.Symbol != "") || symOK != atosNamed {
					t.Errorf("%#x: Symbol found %v (%q), Resolve named %q, atos answered %q: want one answer", addr, symOK, sym.Name, outer.Symbol, answer)
					continue
				}
				if !symOK {
					uncovered++
					continue
				}
				covered++
				if outer.Symbol != sym.Name || !strings.HasPrefix(answer, sym.Name+" (in app)") {
					t.Errorf("%#x: Symbol %q, Resolve %q, atos %q: want one name", addr, sym.Name, outer.Symbol, answer)
				}
			}
			if covered == 0 || uncovered == 0 {
				t.Errorf("%d addresses covered and %d not: the sweep must see both", covered, uncovered)
			}
		})
	}
}

// indexOf writes the index of id's entry and returns a Symbols that
// answers from that file alone.
func indexOf(t *testing.T, syms *symstore.Symbols, id uuid.UUID) *symstore.Symbols {
	t.Helper()
	e, err := syms.LookupContext(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	path := filepath.Join(t.TempDir(), "app"+symindex.Extension)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WriteIndex(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	indexed := symstore.NewSymbols()
	if err := indexed.AddFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	return indexed
}
