package symstore

import (
	"fmt"
	"testing"

	"github.com/stackimage/stackimage/symtab"
)

// checkSymbolBatch checks that SymbolBatch answers every address as Symbol
// does, over slices holding answers from before.
func checkSymbolBatch(t *testing.T, e *Entry, addrs []uint64) {
	t.Helper()
	syms := make([]symtab.Symbol, len(addrs))
	found := make([]bool, len(addrs))
	for k := range syms {
		syms[k], found[k] = symtab.Symbol{Name: "stale"}, true
	}
	if n := e.SymbolBatch(addrs, syms, found); n != len(addrs) {
		t.Fatalf("SymbolBatch of %d addresses = %d", len(addrs), n)
	}
	for k, a := range addrs {
		want, wantOK := e.Symbol(a)
		if found[k] != wantOK || syms[k] != want {
			t.Fatalf("SymbolBatch: address %#x = %+v, %v; want %+v, %v", a, syms[k], found[k], want, wantOK)
		}
	}
}

// TestSymbolBatch checks SymbolBatch against Symbol for an entry of one
// table (answered by symtab's LookupBatch), of two tables, and with a
// symbol map, and that it stops at the shortest slice.
func TestSymbolBatch(t *testing.T) {
	var names []string
	var starts []uint64
	for i := range 400 {
		names = append(names, fmt.Sprintf("_f%d", i))
		starts = append(starts, 0x1000+uint64(i)*8)
	}
	var addrs []uint64
	for a := uint64(0xf00); a < 0x2100; a += 3 {
		addrs = append(addrs, a)
	}
	one := &Entry{Tables: []*symtab.Table{oneSymbolTable(t, names, starts)}}
	checkSymbolBatch(t, one, addrs)

	two := &Entry{Tables: []*symtab.Table{
		oneSymbolTable(t, names[:200], starts[:200]),
		oneSymbolTable(t, []string{"___hidden#4_", "_real"}, []uint64{0x1700, 0x1800}),
	}}
	checkSymbolBatch(t, two, addrs)
	m, err := ParseSymbolMap([]byte("BCSymbolMap Version: 2.0\nzero\none\ntwo\nthree\nrestored\n"))
	if err != nil {
		t.Fatal(err)
	}
	two.SymbolMap = m
	checkSymbolBatch(t, two, addrs)
	if s, ok := two.Symbol(0x1704); !ok || s.Name != "restored" {
		t.Fatalf("Symbol(0x1704) with the map = %q, %v; want the restored name", s.Name, ok)
	}

	for _, e := range []*Entry{one, two} {
		if n := e.SymbolBatch(addrs, make([]symtab.Symbol, 10), make([]bool, 20)); n != 10 {
			t.Errorf("SymbolBatch with room for 10 answers = %d", n)
		}
	}
}
