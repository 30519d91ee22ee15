package debuginfo

import "slices"

// Boundaries returns, sorted and without repeats, every address at which
// Lookup's answer may change: the addresses of the line-table rows and the
// starts and ends of the function and inlined-subroutine ranges. Lookup
// gives the same answer at every address from one boundary up to the next,
// so looking up each boundary extracts everything the Index knows (a
// persisted index is built that way). Below the first boundary Lookup
// finds nothing; from the last one up it answers as at the last one.
func (ix *Index) Boundaries() []uint64 {
	out := make([]uint64, 0, len(ix.rows)+2*len(ix.spans))
	for _, r := range ix.rows {
		out = append(out, r.addr)
	}
	for _, s := range ix.spans {
		out = append(out, s.lo, s.hi)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
