package symbolize

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// fixtureUUID returns the UUID of a fixture binary's (only) slice.
func fixtureUUID(t testing.TB, name string) uuid.UUID {
	t.Helper()
	f, err := image.Open(filepath.Join("..", "fixtures", "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Images[0].UUID
}

func fixtureSymbols(t *testing.T) *symstore.Symbols {
	t.Helper()
	syms := symstore.NewSymbols()
	if err := syms.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin")); err != nil {
		t.Fatal(err)
	}
	return syms
}

// TestProcessKeepsEntries closes a Symbols while a Process holds entries
// from it: the process keeps answering from DWARF and code until it is
// closed (the files are closed when the last holder lets go; see
// symstore's TestCloseKeepsHeldEntries).
func TestProcessKeepsEntries(t *testing.T) {
	u := fixtureUUID(t, "dwarf-x86_64-O1")
	syms := fixtureSymbols(t)
	e, err := syms.Lookup(u)
	if err != nil || e == nil {
		t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
	}
	loaded := []*image.Loaded{{Name: "dwarf-x86_64-O1", UUID: u, LoadAddress: 0x100000000}}
	p, err := (&Symbolizer{Symbols: syms}).NewProcess(nil, loaded)
	if err != nil {
		t.Fatal(err)
	}
	if err := syms.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The process is now the entry's only holder.
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	// The DWARF sections are read only now, after Close.
	if len(e.Debug()) == 0 || len(e.DebugErrors()) != 0 {
		t.Fatalf("after Close: Debug() = %d indexes, DebugErrors() = %v; want the dSYM's DWARF read", len(e.Debug()), e.DebugErrors())
	}
	text, ok := e.Image().TextSegment()
	if !ok {
		t.Fatal("no __TEXT")
	}
	lo, _, ok := e.Debug()[0].Bounds()
	if !ok {
		t.Fatal("the dSYM's DWARF has no line rows")
	}
	slid := lo - text.Addr + loaded[0].LoadAddress
	var code [4]byte
	if n, err := p.ReadMemory(code[:], slid); n != len(code) || err != nil {
		t.Errorf("after Close: ReadMemory(%#x) = %d, %v; want the code", slid, n, err)
	}
	if frames := p.Frames(0, slid, slid, symstore.FoundBy(walker.FoundByContext)); frames[len(frames)-1].File == "" {
		t.Errorf("after Close: Frames(%#x) = %+v; want a source file from DWARF", slid, frames)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Process.Close: %v", err)
	}
}

// TestProcessWarnings checks that a symbol file whose DWARF could not be
// used is reported once, however many images share it, and only once a
// lookup has read the DWARF.
func TestProcessWarnings(t *testing.T) {
	id := uuid.UUID{0xd2}
	src := &symstore.MemorySource{}
	bad := hostile.MachO{
		UUID:    id,
		Symbols: []hostile.Symbol{{Name: "_good", Addr: hostile.CodeAddr}},
		DWARF:   []hostile.Section{{Name: "__debug_info", Data: []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}}},
	}.Bytes()
	if _, err := src.Add("BadDWARF", bad); err != nil {
		t.Fatal(err)
	}
	syms := symstore.NewSymbols()
	syms.AddSource(src)
	defer syms.Close()
	const load1, load2 = 0x100000000, 0x200000000
	p, err := (&Symbolizer{Symbols: syms}).NewProcess(archregs.ARM64, []*image.Loaded{
		{Name: "BadDWARF", UUID: id, LoadAddress: load1},
		{Name: "BadDWARF", UUID: id, LoadAddress: load2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.Warnings(); len(got) != 0 {
		t.Fatalf("Warnings() = %q before any lookup, want none", got)
	}
	for _, load := range []uint64{load1, load2} {
		addr := load + hostile.CodeAddr - 0x100000000
		if frames := p.Frames(0, addr, addr, symstore.FoundByReport); frames[0].Symbol != "good" {
			t.Errorf("Frames(%#x) = %+v; want \"good\" from the symbol table", addr, frames)
		}
	}
	got := p.Warnings()
	if len(got) != 1 || !strings.Contains(got[0], "DWARF") {
		t.Errorf("Warnings() = %q, want the one DWARF problem", got)
	}
}
