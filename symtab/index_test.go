package symtab

import (
	"encoding/binary"
	"math/rand/v2"
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

	long := strings.Repeat("L", 70000)
	tests := []struct {
		name     string
		raw      image.RawSymtab
		sections []image.Section
	}{
		{"dense", dense, denseSections},
		{"dense without sections", dense, nil},
		{"clustered", rawSymtab(true, binary.LittleEndian, clustered), clusteredSections},
		{"whole address space", rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x10}, {"_b", tSect, 1, 0x20}, {"_c", tSect, 1, 0xffff_ffff_ffff_fff0},
		}), nil},
		{"long names", rawSymtab(true, binary.LittleEndian, []nl{
			{"_" + long, tSect, 1, 0x100003000}, {long, tSect, 1, 0x100003100}, {"_short", tSect, 1, 0x100003200},
		}), testSections},
		{"text and far data", textAndData, textAndDataSections},
		{"overlapping sections", rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x1000}, {"_b", tSect, 2, 0x1800}, {"_c", tSect, 1, 0x1c00}, {"_d", tSect, 2, 0x2400},
		}), []image.Section{{Index: 1, Addr: 0x1000, Size: 0x1000}, {Index: 2, Addr: 0x1800, Size: 0x1000}}},
		{"one index for two sections", rawSymtab(true, binary.LittleEndian, []nl{
			{"_a", tSect, 1, 0x1000}, {"_b", tSect, 1, 0x3000}, {"_c", tSect, 2, 0x2000},
		}), []image.Section{{Index: 1, Addr: 0x1000, Size: 0x100}, {Index: 1, Addr: 0x3000, Size: 0x100}, {Index: 2, Addr: 0x2000, Size: 0x100}}},
		{"shared address", rawSymtab(true, binary.LittleEndian, []nl{
			{"_end_of_text", tSect, 1, 0x100004000}, {"_stub", tSect, 2, 0x100004000},
			{"_text", tSect, 1, 0x100003000}, {"_wrong_section", tSect, 3, 0x100003800},
		}), testSections},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(tt.raw, tt.sections, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			probes := []uint64{0, ^uint64(0)}
			for _, e := range tab.entries {
				probes = append(probes, e.addr-1, e.addr, e.addr+1, e.addr+rng.Uint64N(256))
			}
			for _, a := range probes {
				got, ok := tab.Lookup(a)
				want, wantOK := referenceLookup(tab, a)
				if ok != wantOK || got != want {
					t.Fatalf("Lookup(%#x) = %q at %#x, %v; want %q at %#x, %v", a, got.Name, got.Addr, ok, want.Name, want.Addr, wantOK)
				}
			}
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

// TestBucketsFitWindow checks what the two levels are for: in a clustered
// image, most addresses of the dense __text land in buckets the
// window searches without branches.
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
		if lo, hi, ok := tab.index.bucket(a); !ok || hi-lo > window {
			big++
		}
	}
	if big > probes/4 {
		t.Errorf("%d of %d addresses in __text land in buckets of more than %d entries; want at most a quarter", big, probes, window)
	}
}
