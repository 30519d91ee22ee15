package symbolize

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// TestResolveMatchesProcessFrames looks up every other byte of each
// fixture's DWARF-covered code with Symbols.Resolve and with
// Process.Frames on the image loaded at a slide, and checks that they
// name the same functions, inlined frames, files and lines.
func TestResolveMatchesProcessFrames(t *testing.T) {
	syms := fixtureSymbols(t)
	defer syms.Close()
	inlined := 0
	for _, name := range []string{"dwarf-x86_64-O2", "dwarf-arm64-O2", "chain-arm64-O1", "chain-armv7-O1"} {
		t.Run(name, func(t *testing.T) {
			u := fixtureUUID(t, name)
			e, err := syms.Lookup(u)
			if err != nil || e == nil {
				t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
			}
			defer e.Release()
			text, _ := e.Image().TextSegment()
			const slide = 0x3000_0000
			loaded := []*image.Loaded{{Name: name, UUID: u, LoadAddress: text.Addr + slide}}
			p, err := (&Symbolizer{Symbols: syms}).NewProcess(e.Image().Arch, loaded)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			lo, hi, ok := e.Debug()[0].Bounds()
			if !ok {
				t.Fatal("no line rows")
			}
			for addr := lo; addr < hi; addr += 2 {
				got, err := syms.Resolve(u, e.Image().Arch, addr)
				if err != nil {
					t.Fatalf("Resolve(%#x): %v", addr, err)
				}
				want := p.Frames(0, addr+slide, addr+slide, symstore.FoundBy(walker.FoundByContext))
				for i := range want {
					// What only the slide and the names given tell apart.
					want[i].Address, want[i].LookupAddress = addr, addr
					want[i].ImageLoadAddress -= slide
					want[i].ImagePath = e.Image().Name
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("Resolve(%#x) differs from Process.Frames (-frames +resolve):\n%s", addr, diff)
				}
				if got[len(got)-1].Symbol == "" {
					t.Fatalf("Resolve(%#x) = %+v; want a symbol inside the DWARF's line table", addr, got)
				}
				if len(got) > 1 {
					inlined++
				}
			}
		})
	}
	if inlined == 0 {
		t.Error("no address resolved to inlined frames: the comparison did not cover them")
	}
}
