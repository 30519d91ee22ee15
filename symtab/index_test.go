package symtab

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// TestLookupMatchesReference looks up addresses in and around every entry
// of tables shaped to reach each path of the bucket index (dense, clustered
// into oversized buckets, spread over the whole address space, names too
// long for a stored length, symbols shared by two sections) and compares
// each answer with referenceLookup's.
func TestLookupMatchesReference(t *testing.T) {
	dense, denseSections := syntheticImage(5000)

	var clustered []nl
	for i := range 300 {
		clustered = append(clustered, nl{"_low" + strings.Repeat("x", i%7), tSect, 1, 0x1000 + uint64(i)*4})
		clustered = append(clustered, nl{"high", tSectExt, 2, 0x7fff_0000_0000 + uint64(i)*8})
	}
	clusteredSections := []image.Section{
		{Index: 1, Addr: 0x1000, Size: 0x1000},
		{Index: 2, Addr: 0x7fff_0000_0000, Size: 0x10000},
	}

	textAndData, textAndDataSections := textAndDataImage()

	// A stripped image: a few symbols, names from the export trie, and
	// function starts between them.
	var exports []image.Export
	var starts []uint64
	for i := range 200 {
		addr := uint64(0x100003000 + i*16)
		if i%3 == 0 {
			exports = append(exports, image.Export{Name: "_exported" + strings.Repeat("e", i%5), Addr: addr})
		} else {
			starts = append(starts, addr)
		}
	}
	stripped := rawSymtab(true, binary.LittleEndian, []nl{{"_main", tSectExt, 1, 0x100003000}, {"_local", tSect, 1, 0x100003400}})

	long := strings.Repeat("L", 70000)
	tests := []struct {
		name     string
		raw      image.RawSymtab
		sections []image.Section
		starts   []uint64
		exports  []image.Export
	}{
		{name: "dense", raw: dense, sections: denseSections},
		{name: "dense without sections", raw: dense},
		{name: "clustered", raw: rawSymtab(true, binary.LittleEndian, clustered), sections: clusteredSections},
		{name: "exports and function starts", raw: stripped, sections: testSections, starts: starts, exports: exports},
		{name: "whole address space", raw: rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x10}, {"_b", tSect, 1, 0x20}, {"_c", tSect, 1, 0xffff_ffff_ffff_fff0},
		})},
		{name: "long names", raw: rawSymtab(true, binary.LittleEndian, []nl{
			{"_" + long, tSect, 1, 0x100003000}, {long, tSect, 1, 0x100003100}, {"_short", tSect, 1, 0x100003200},
		}), sections: testSections},
		{name: "text and far data", raw: textAndData, sections: textAndDataSections},
		{name: "overlapping sections", raw: rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x1000}, {"_b", tSect, 2, 0x1800}, {"_c", tSect, 1, 0x1c00}, {"_d", tSect, 2, 0x2400},
		}), sections: []image.Section{{Index: 1, Addr: 0x1000, Size: 0x1000}, {Index: 2, Addr: 0x1800, Size: 0x1000}}},
		{name: "one index for two sections", raw: rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x1000}, {"_b", tSect, 1, 0x3000}, {"_c", tSect, 2, 0x2000},
		}), sections: []image.Section{{Index: 1, Addr: 0x1000, Size: 0x100}, {Index: 1, Addr: 0x3000, Size: 0x100}, {Index: 2, Addr: 0x2000, Size: 0x100}}},
		{name: "shared address", raw: rawSymtab(true, binary.LittleEndian, []nl{
			{"_end_of_text", tSect, 1, 0x100004000}, {"_stub", tSect, 2, 0x100004000},
			{"_text", tSect, 1, 0x100003000}, {"_wrong_section", tSect, 3, 0x100003800},
		}), sections: testSections},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(tt.raw, tt.sections, tt.starts, tt.exports)
			if err != nil {
				t.Fatal(err)
			}
			probes := []uint64{0, ^uint64(0)}
			for _, e := range tab.entries {
				probes = append(probes, e.addr-1, e.addr, e.addr+1, e.addr+rng.Uint64N(256))
			}
			for _, a := range probes {
				got, err := tab.Lookup(a)
				ok := err == nil
				want, wantOK := referenceLookup(tab, a)
				if ok != wantOK || got != want {
					t.Fatalf("Lookup(%#x) = %q at %#x, %v; want %q at %#x, %v", a, got.Name, got.Addr, ok, want.Name, want.Addr, wantOK)
				}
			}
			checkBatch(t, tab, probes)
		})
	}
}

// TestBucketIndexBounded checks that the index of a few symbols spread over
// the whole address space stays as small as that of a dense table.
func TestBucketIndexBounded(t *testing.T) {
	var syms []nl
	for i := range 64 {
		syms = append(syms, nl{"_f", tSect, 1, uint64(i) << 58})
	}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, limit := tab.index.bytes(), 4*(tab.Len()+2)+8*(tab.Len()/coarseEntries+1); got > limit {
		t.Errorf("index of %d symbols over the address space: %d bytes, want at most %d", tab.Len(), got, limit)
	}
}

// textAndDataImage returns a table shaped like a real image's (a darwin
// build of cmd/go has 6 MB of __text in a 46 MB range): thousands of
// functions close together in __text and, after a gap, a few hundred data
// symbols over a range eight times wider, so that one bucket size for the
// whole range would fit neither.
func textAndDataImage() (image.RawSymtab, []image.Section) {
	var syms []nl
	for i := range 5000 {
		syms = append(syms, nl{"_f" + strings.Repeat("x", i%5), tSect, 1, 0x100004000 + uint64(i)*uint64(16+i%200)})
	}
	for i := range 300 {
		syms = append(syms, nl{"_d", tSect, 2, 0x100200000 + uint64(i)*0x7000})
	}
	return rawSymtab(true, binary.LittleEndian, syms), []image.Section{
		{Index: 1, Addr: 0x100004000, Size: 0x1000000},
		{Index: 2, Addr: 0x100200000, Size: 0x1000000},
	}
}

// checkBatch checks that LookupBatch answers each address as
// referenceLookup does, over slices holding answers from before, in the
// order given and shuffled (a batch mixes addresses of the fast and slow
// cases in every order).
func checkBatch(t testing.TB, tab *Table, addrs []uint64) {
	t.Helper()
	for _, order := range []string{"given", "shuffled"} {
		addrs := slices.Clone(addrs)
		if order == "shuffled" {
			rand.New(rand.NewPCG(9, 10)).Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		}
		syms := make([]Symbol, len(addrs))
		found := make([]bool, len(addrs))
		for k := range syms {
			syms[k], found[k] = Symbol{Name: "stale"}, true
		}
		if n := tab.LookupBatch(addrs, syms, found); n != len(addrs) {
			t.Fatalf("LookupBatch of %d addresses = %d", len(addrs), n)
		}
		for k, a := range addrs {
			want, wantOK := referenceLookup(tab, a)
			if found[k] != wantOK || syms[k] != want {
				t.Fatalf("LookupBatch, %s order: address %d (%#x) = %+v, %v; want %+v, %v", order, k, a, syms[k], found[k], want, wantOK)
			}
		}
	}
}

// TestLookupBatchLengths checks that LookupBatch answers as many addresses
// as the shortest slice has room for, and leaves the rest alone.
func TestLookupBatchLengths(t *testing.T) {
	raw, sections := syntheticImage(1000)
	tab, err := NewFromParts(raw, sections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	addrs := addressesIn(sections[0], 300)
	for _, tt := range []struct{ syms, found, want int }{
		{300, 300, 300}, {100, 300, 100}, {300, 7, 7}, {0, 300, 0},
	} {
		syms := make([]Symbol, tt.syms)
		found := make([]bool, tt.found)
		if n := tab.LookupBatch(addrs, syms, found); n != tt.want {
			t.Errorf("LookupBatch(%d addresses, %d syms, %d found) = %d; want %d", len(addrs), tt.syms, tt.found, n, tt.want)
		}
		for k := range min(tt.syms, tt.found) {
			if k < tt.want && !found[k] {
				t.Errorf("LookupBatch(%d syms, %d found): address %d not answered", tt.syms, tt.found, k)
			}
			if k >= tt.want && found[k] {
				t.Errorf("LookupBatch(%d syms, %d found): address %d answered past the count", tt.syms, tt.found, k)
			}
		}
	}
	var empty Table
	if n := empty.LookupBatch(addrs, make([]Symbol, 300), make([]bool, 300)); n != 300 {
		t.Errorf("LookupBatch on an empty table = %d; want 300", n)
	}
}

// TestBucketsFitWindow checks what the two levels are for: in a clustered
// image, most addresses of the dense __text land in buckets that fit the
// window, which Lookup searches without branches.
func TestBucketsFitWindow(t *testing.T) {
	raw, sections := textAndDataImage()
	tab, err := NewFromParts(raw, sections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var text []entry
	for _, e := range tab.entries {
		if e.sect == 1 {
			text = append(text, e)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const probes = 10000
	big := 0
	for range probes {
		a := text[0].addr + rng.Uint64N(text[len(text)-1].addr-text[0].addr)
		if _, ok := tab.windowStart(a); !ok {
			big++
		}
	}
	if big > probes/4 {
		t.Errorf("%d of %d addresses in __text land in buckets of %d entries or more; want at most a quarter", big, probes, window)
	}
}
