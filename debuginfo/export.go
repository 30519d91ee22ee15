package debuginfo

import "slices"

// Boundaries returns, sorted and without repeats, every address at which
// Lookup's answer may change: the addresses of the line-table rows and the
// starts and ends of the function and inlined-subroutine ranges. Lookup
// gives the same answer at every address from one boundary up to the next,
// so looking up each boundary extracts everything the Index knows (a
// persisted index is built that way). Below the first boundary Lookup
// finds nothing; from the last one up it answers as at the last one.
//
// It parses every compile unit, one at a time through the unit cache, so
// its cost is that of reading all of the DWARF once.
func (ix *Index) Boundaries() []uint64 {
	var out []uint64
	for u := range ix.units {
		ui := ix.unit(u)
		if ui == nil {
			continue
		}
		if ui.lines != nil {
			for _, r := range ui.lines.rows {
				out = append(out, r.addr)
			}
		}
		for _, s := range ui.segs {
			out = append(out, s.lo, s.hi)
		}
	}
	for _, s := range ix.byAddr {
		out = append(out, s.lo, s.hi)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
