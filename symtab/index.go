package symtab

// bucketIndex finds an address's place among the sorted entries in about
// two cache-line reads, where a binary search over a million entries takes
// twenty dependent steps, most of them cache misses.
//
// The entries' address range [base, last] is cut into buckets of 1<<shift
// bytes; first[b] is the index of the first entry at or above bucket b's
// start, and first[len(first)-1] is the number of entries. The entries of
// bucket b are entries[first[b]:first[b+1]].
//
// There are at most as many buckets as entries, whatever the address
// range: 4 bytes per entry at most, so a hostile table of a few symbols
// spread over the whole address space costs no more than a dense one. When
// entries cluster, a bucket may hold many of them; a lookup then searches
// the bucket by bisection, never worse than a binary search of the whole
// table.
type bucketIndex struct {
	base  uint64
	shift uint
	first []uint32
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
	// The smallest power-of-two bucket size giving at most n buckets.
	// A shift of 64 leaves span>>shift at 0: one bucket.
	for span>>x.shift >= uint64(n) {
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
	return x
}

// maxLinearScan is the size of a bucket searched entry by entry rather
// than by bisection: a short scan of adjacent entries beats mispredicted
// branches.
const maxLinearScan = 8

// upperBound returns the index of the first entry whose address is greater
// than addr, or len(t.entries).
func (t *Table) upperBound(addr uint64) int {
	x := &t.index
	if len(x.first) == 0 || addr < x.base {
		// No entry, or all of them above addr.
		return 0
	}
	b := (addr - x.base) >> x.shift
	if b >= uint64(len(x.first)-1) {
		// Past the last bucket, which holds the last entry.
		return len(t.entries)
	}
	// Entries before bucket b are below its start, so at or below addr;
	// the entry at first[b+1] is at or above the next bucket's start, so
	// above addr. The answer lies in [lo, hi].
	lo, hi := int(x.first[b]), int(x.first[b+1])
	for hi-lo > maxLinearScan {
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

// bytes returns the memory the index holds.
func (x *bucketIndex) bytes() int { return cap(x.first) * 4 }
