package symtab

// bucketIndex finds an address's place among the sorted entries with one
// read of a small table and one or two adjacent cache lines of entries,
// where a binary search over a million entries takes twenty dependent
// steps, most of them cache misses.
//
// The entries' address range [base, last] is cut into buckets of 1<<shift
// bytes; first[b] is the index of the first entry at or above bucket b's
// start, and first[len(first)-1] is the number of entries. The entries of
// bucket b are entries[first[b]:first[b+1]].
//
// There are at most a quarter as many buckets as entries, whatever the
// address range: a byte per entry at most, so a hostile table of a few
// symbols spread over the whole address space costs no more than a dense
// one. When
// entries cluster, a bucket may hold many of them; a lookup then searches
// the bucket by bisection, never worse than a binary search of the whole
// table.
type bucketIndex struct {
	base    uint64
	shift   uint
	buckets uint64 // len(first)-1; 0 for an empty table
	first   []uint32
}

// newBucketIndex indexes entries, which are sorted by address. The caller
// bounds len(entries) by maxEntries, so indexes fit in uint32.
func newBucketIndex(entries []entry) bucketIndex {
	n := len(entries)
	if n == 0 {
		return bucketIndex{}
	}
	x := bucketIndex{base: entries[0].addr}
	span := entries[n-1].addr - x.base
	// The smallest power-of-two bucket size giving at most
	// n/entriesPerBucket buckets.
	// A shift of 64 leaves span>>shift at 0: one bucket.
	for span>>x.shift >= max(1, uint64(n)/entriesPerBucket) {
		x.shift++
	}
	buckets := int(span>>x.shift) + 1
	x.first = make([]uint32, buckets+1)
	j := 0
	for b := range buckets {
		start := x.base + uint64(b)<<x.shift
		for j < n && entries[j].addr < start {
			j++
		}
		x.first[b] = uint32(j)
	}
	x.first[buckets] = uint32(n)
	x.buckets = uint64(buckets)
	return x
}

// entriesPerBucket is the fewest entries a bucket holds on average (at
// most twice as many, the bucket size being a power of two). Few buckets
// keep the index small enough to stay in the CPU's cache (a byte per entry
// at most: 1 MB for a million entries), so that a lookup waits for memory
// once, for the entries, rather than twice; measured on 1M synthetic
// symbols, 4 buckets per entry are faster than 1 or 2 despite the longer
// window.
const entriesPerBucket = 4

// window is how many entries from a bucket's first one a lookup compares
// without branching on them; a lookup of a bucket holding more searches it
// with branches.
//
// Why without branching: the entries are what a lookup waits for from
// memory, and a branch on them that the CPU guesses wrong (the scan of a
// bucket stops at a random place) throws away the work it had started on
// the next lookups meanwhile. Without such branches several lookups wait
// for memory at once.
const window = 8

// upperBound returns the index of the first entry whose address is greater
// than addr, or len(t.entries).
func (t *Table) upperBound(addr uint64) int {
	x := &t.index
	b := (addr - x.base) >> x.shift
	if addr < x.base || b >= x.buckets {
		return t.upperBoundOutside(addr)
	}
	// Entries before bucket b are below its start, so at or below addr;
	// the entry at first[b+1] is at or above the next bucket's start, so
	// above addr. The answer lies in [lo, hi].
	lo, hi := int(x.first[b]), int(x.first[b+1])
	if hi-lo > window || lo+window > len(t.entries) {
		return t.upperBoundIn(addr, lo, hi)
	}
	// Entries past the bucket are above addr: counting those at or below
	// addr among the window's gives the answer.
	w := t.entries[lo : lo+window : lo+window]
	return lo + b2i(w[0].addr <= addr) + b2i(w[1].addr <= addr) +
		b2i(w[2].addr <= addr) + b2i(w[3].addr <= addr) +
		b2i(w[4].addr <= addr) + b2i(w[5].addr <= addr) +
		b2i(w[6].addr <= addr) + b2i(w[7].addr <= addr)
}

// upperBoundOutside is upperBound for an address outside the buckets.
func (t *Table) upperBoundOutside(addr uint64) int {
	if t.index.buckets == 0 || addr < t.index.base {
		// No entry, or all of them above addr.
		return 0
	}
	// Past the last bucket, which holds the last entry.
	return len(t.entries)
}

// upperBoundIn is upperBound for an address whose answer lies in
// [lo, hi], a bucket too large for the window.
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
func (x *bucketIndex) bytes() int { return cap(x.first) * 4 }
