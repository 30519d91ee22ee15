package symtab

import "math/bits"

// bucketIndex finds an address's place among the sorted entries with reads
// of two small tables and two or three adjacent cache lines of entries,
// where a binary search over a million entries takes twenty dependent
// steps, most of them cache misses.
//
// It has two levels because real images are clustered: __text holds most
// symbols close together, the data sections fewer over a wider range, and
// segments leave gaps between them. One bucket size for the whole range is
// too coarse for __text (tens of entries a bucket, searched with branches
// the CPU guesses wrong) or, made finer, spends memory on empty buckets.
// So the range [base, last entry] is cut into coarse buckets of 1<<shift
// bytes, about one per coarseEntries entries, and each coarse bucket into
// as many fine buckets (a power of two) as its own entries need, about
// fineEntries each.
//
// first[f] is the index of the first entry at or above fine bucket f's
// start. The fine buckets of a coarse bucket are consecutive in first, the
// coarse buckets follow each other in address order, and the last element
// of first is the number of entries: so fine bucket f holds
// entries[first[f]:first[f+1]], wherever f+1 lies.
//
// Memory is bounded by the number of entries, whatever the addresses: a
// coarse bucket has at most one fine bucket per entry it holds, so first
// holds at most four bytes per entry (about one, on real images), and a
// hostile table of a few symbols spread over the whole address space costs
// no more than a dense one.
type bucketIndex struct {
	base   uint64
	shift  uint   // coarse bucket size: 1<<shift bytes, shift at most 63
	mask   uint64 // 1<<shift - 1: an offset within a coarse bucket
	coarse []coarseBucket
	first  []uint32
}

// coarseBucket says where a coarse bucket's fine buckets are in first and
// how large they are.
type coarseBucket struct {
	fine  uint32 // index in first of its first fine bucket
	shift uint8  // its fine buckets' size: 1<<shift bytes
}

const (
	// coarseEntries is about how many entries a coarse bucket holds
	// (between one and two times as many, the size being a power of
	// two), on average over the whole range.
	coarseEntries = 256
	// fineEntries is the most entries a fine bucket holds on average
	// within its coarse bucket (at least half as many): well under
	// window, so that nearly all buckets fit in it. With 8, the million
	// evenly spread symbols of BenchmarkSynthetic averaged 7.9 a bucket,
	// a third of the lookups fell back on a search with branches, and
	// LookupBatch took 182 ns a lookup against 83 ns with 4. The cost is
	// half a byte a symbol more in first.
	fineEntries = 4
)

// newBucketIndex indexes entries, which are sorted by address. The caller
// bounds len(entries) by maxEntries, so indexes fit in uint32.
//
// It makes one coarse bucket unless the entries would crowd into few of
// its fine buckets: when they are spread evenly, as in a large table of
// code, one does as well, and a lookup's read of the coarse bucket always
// hits the CPU's cache. Measured on a million synthetic symbols, many
// coarse buckets made lookups about 7% slower there.
func newBucketIndex(entries []entry) bucketIndex {
	if crowded(entries) {
		return buildBucketIndex(entries, uint64(len(entries))/coarseEntries)
	}
	return buildBucketIndex(entries, 1)
}

// crowded reports whether, with one coarse bucket, the entries would crowd
// into a few of the fine buckets: whether an entry's bucket would hold more
// than twice fineEntries entries on average. Spread evenly, an entry's
// bucket holds fewer than fineEntries+1 others on average.
func crowded(entries []entry) bool {
	n := len(entries)
	if n == 0 {
		return false
	}
	base, span := entries[0].addr, entries[n-1].addr-entries[0].addr
	shift := uint8(bits.Len64(span)) // one coarse bucket
	fine := fineShift(shift, uint32(n), span+1)
	var squares uint64 // at most n², which fits: n < 2^32
	for i := 0; i < n; {
		// The entries are sorted: a bucket's are a run.
		b := (entries[i].addr - base) >> fine
		j := i + 1
		for j < n && (entries[j].addr-base)>>fine == b {
			j++
		}
		m := uint64(j - i)
		squares += m * m
		i = j
	}
	return squares > 2*fineEntries*uint64(n)
}

// fineShift returns the size of the fine buckets (1<<size bytes) of a
// coarse bucket of 1<<shift bytes holding m entries that span extent
// bytes of it: about fineEntries entries a fine bucket over that extent,
// and at most m fine buckets.
func fineShift(shift uint8, m uint32, extent uint64) uint8 {
	if m <= fineEntries {
		return shift
	}
	size := max(1, extent/uint64(m/fineEntries))
	most := uint8(bits.Len32(m) - 1) // log2 of the most fine buckets
	return max(uint8(bits.Len64(size)-1), shift-min(most, shift))
}

// buildBucketIndex indexes entries with about the given number of coarse
// buckets (at least one, at most twice as many).
func buildBucketIndex(entries []entry, coarse uint64) bucketIndex {
	n := len(entries)
	if n == 0 {
		return bucketIndex{}
	}
	x := bucketIndex{base: entries[0].addr}
	span := entries[n-1].addr - x.base
	// The smallest power-of-two coarse size giving at most that many
	// buckets. The shift stops at 63, so that a lookup shifts by it
	// without Go's extra code for shifts of 64 or more: a range of 2^63
	// bytes or more takes two coarse buckets where it asked for one.
	for x.shift < 63 && span>>x.shift >= max(1, coarse) {
		x.shift++
	}
	x.mask = 1<<x.shift - 1
	x.coarse = make([]coarseBucket, span>>x.shift+1)

	// Count each coarse bucket's entries and find the part of it they
	// span, then cut it into fine buckets (a power of two) sized so that
	// that part holds about fineEntries a bucket: the entries of a coarse
	// bucket may sit in a corner of it, as __text's end does before a
	// gap. A coarse bucket of m entries gets at most m fine buckets.
	counts := make([]uint32, len(x.coarse))
	low := make([]uint64, len(x.coarse))  // its lowest entry's offset
	high := make([]uint64, len(x.coarse)) // its highest entry's offset
	for _, e := range entries {
		off := e.addr - x.base
		c := off >> x.shift
		if counts[c] == 0 {
			low[c] = off
		}
		high[c] = off
		counts[c]++
	}
	fine := uint32(0)
	for c, m := range counts {
		shift := fineShift(uint8(x.shift), m, high[c]-low[c]+1)
		x.coarse[c] = coarseBucket{fine: fine, shift: shift}
		fine += 1 << (uint8(x.shift) - shift)
	}

	x.first = make([]uint32, fine+1)
	j := 0
	for c := range x.coarse {
		cb := x.coarse[c]
		start := x.base + uint64(c)<<x.shift
		buckets := uint32(1) << (uint8(x.shift) - cb.shift)
		for f := range buckets {
			at := start + uint64(f)<<cb.shift
			for j < n && entries[j].addr < at {
				j++
			}
			x.first[cb.fine+f] = uint32(j)
		}
	}
	x.first[fine] = uint32(n)
	return x
}

// window is how many entries a lookup compares without branching on
// them: the entry before its fine bucket and the bucket's own, if it holds
// fewer than window (see Table.windowStart); a lookup in a bucket holding
// more searches it with branches. Eight entries of 16 bytes are two or
// three cache lines.
//
// Why without branching: the entries are what a lookup waits for from
// memory, and a branch on them that the CPU guesses wrong (the scan of a
// bucket stops at a random place) throws away the work it had started on
// the next lookups meanwhile.
const window = 8

// fine returns the fine bucket holding addr: its entries are
// first[f]:first[f+1]. ok is false for an address outside the indexed
// range.
func (x *bucketIndex) fine(addr uint64) (f uint64, ok bool) {
	off := addr - x.base
	c := off >> (x.shift & 63)
	if addr < x.base || c >= uint64(len(x.coarse)) {
		return 0, false
	}
	cb := x.coarse[c]
	f = uint64(cb.fine) + (off&x.mask)>>(cb.shift&63)
	// Always true, first ending with the entry count; the test lets
	// the compiler leave out the bounds checks of first[f] and first[f+1].
	return f, f+1 < uint64(len(x.first))
}

// bucket returns the range of entries [lo, hi] holding the answer for
// addr: entries before lo are at or below addr, the entry at hi (if any)
// above it. ok is false for an address outside the indexed range.
func (x *bucketIndex) bucket(addr uint64) (lo, hi int, ok bool) {
	f, ok := x.fine(addr)
	if !ok {
		return 0, 0, false
	}
	return int(x.first[f]), int(x.first[f+1]), true
}

// upperBound returns the index of the first entry whose address is greater
// than addr, or len(t.entries). It is for the uncommon cases (Lookup's
// fallback, End), and searches with branches.
func (t *Table) upperBound(addr uint64) int {
	lo, hi, ok := t.index.bucket(addr)
	if !ok {
		return t.upperBoundOutside(addr)
	}
	return t.upperBoundIn(addr, lo, hi)
}

// upperBoundOutside is upperBound for an address outside the buckets.
func (t *Table) upperBoundOutside(addr uint64) int {
	if len(t.entries) == 0 || addr < t.index.base {
		// No entry, or all of them above addr.
		return 0
	}
	// Past the last bucket, which holds the last entry.
	return len(t.entries)
}

// upperBoundIn is upperBound for an address whose answer lies in
// [lo, hi], its bucket.
func (t *Table) upperBoundIn(addr uint64, lo, hi int) int {
	for hi-lo > window {
		m := int(uint(lo+hi) >> 1)
		if t.entries[m].addr > addr {
			hi = m
		} else {
			lo = m + 1
		}
	}
	for lo < hi && t.entries[lo].addr <= addr {
		lo++
	}
	return lo
}

// b2i returns 1 for true and 0 for false; the compiler makes it a flag
// read, not a branch.
func b2i(b bool) int {
	n := 0
	if b {
		n = 1
	}
	return n
}

// bytes returns the memory the index holds.
func (x *bucketIndex) bytes() int { return cap(x.first)*4 + cap(x.coarse)*8 }
