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
	if got, limit := tab.index.bytes(), 4*(tab.Len()/entriesPerBucket+1); got > limit {
		t.Errorf("index of %d symbols over the address space: %d bytes, want at most %d", tab.Len(), got, limit)
	}
}
