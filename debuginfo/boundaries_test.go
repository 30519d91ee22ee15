package debuginfo

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// naiveBoundaries is Boundaries' definition spelled out: every unit
// range's ends, every function segment's ends and every row's address,
// sorted, without repeats.
func naiveBoundaries(ix *Index) []uint64 {
	var all []uint64
	for _, s := range ix.byAddr {
		all = append(all, s.lo, s.hi)
	}
	for u := range ix.units {
		ui := ix.unit(u)
		for _, s := range ui.segs {
			all = append(all, s.lo, s.hi)
		}
		if ui.lines != nil {
			for _, r := range ui.lines.rows {
				all = append(all, r.addr)
			}
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// TestMergeRuns: units whose addresses interleave are merged range by
// range into sorted order, and an address outside its unit's ranges makes
// mergeRuns sort them all instead; either way the result is the sorted
// addresses.
func TestMergeRuns(t *testing.T) {
	// Unit 0 owns [0x10, 0x20) and [0x40, 0x50), unit 1 [0x20, 0x40).
	ix := &Index{byAddr: []seg{{0x10, 0x20, 0}, {0x20, 0x40, 1}, {0x40, 0x50, 0}}, units: make([]unitSpan, 2)}
	for _, tc := range []struct {
		name         string
		unit0, unit1 []uint64
	}{
		{"interleaved", []uint64{0x10, 0x18, 0x20, 0x40, 0x48, 0x50}, []uint64{0x20, 0x30, 0x40}},
		{"an address outside its unit's ranges", []uint64{0x10, 0x30, 0x48}, []uint64{0x20, 0x38}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := slices.Concat(tc.unit0, tc.unit1)
			runs := []run{{0, len(tc.unit0)}, {len(tc.unit0), len(out)}}
			want := slices.Sorted(slices.Values(out))
			got := ix.mergeRuns(slices.Clone(out), runs)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mergeRuns differs from sorting (-want +got):\n%s", diff)
			}
		})
	}
}
