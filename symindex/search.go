package symindex

import (
	"math/bits"
	"sync"
)

// searchRecords returns how many of the n records of size bytes at the
// start of b begin with an address (u64) at or below addr, the records
// being sorted by it. The loop has no branch on the comparison, which
// random addresses would mispredict half the time.
func searchRecords(b []byte, size, n int, addr uint64) int {
	if n == 0 || len(b) < size*n {
		return 0
	}
	base := 0 // records [0, base) are at or below addr
	for n > 1 {
		half := n >> 1
		// borrow is 1 when the record starts above addr.
		_, borrow := bits.Sub64(addr, le.Uint64(b[size*(base+half-1):]), 0)
		base += half &^ -int(borrow)
		n -= half
	}
	if le.Uint64(b[size*base:]) <= addr {
		base++
	}
	return base
}

// blockSearch finds the block holding an address among block records
// sorted by their first address (u64), as searchRecords does, through an
// index of buckets made on first use: a binary search of thousands of
// records is a dozen dependent loads, most of them cache misses when
// lookups are interleaved with other work (a service's requests), where
// a bucket gives the one or two records to test.
type blockSearch struct {
	once sync.Once
	// Bucket k covers the addresses [base + k<<shift, base + (k+1)<<shift);
	// first[k] counts the records starting below it, first[len-1] all of
	// them. nil when the records are too few or not sorted.
	base  uint64
	shift uint
	first []uint32
}

// minBucketed is the fewest records given buckets.
const minBucketed = 64

// count returns how many of the n records of size bytes in b start at or
// below addr. b is the whole section: its chunks are checked. The buckets
// are made once the index is warm (every chunk checked good, see sweep):
// a first answer costs no more than a binary search.
func (s *blockSearch) count(b []byte, size, n int, addr uint64, warm bool) int {
	if !warm {
		return searchRecords(b, size, n, addr)
	}
	s.once.Do(func() { s.build(b, size, n) })
	if s.first == nil {
		return searchRecords(b, size, n, addr)
	}
	if addr < s.base {
		return 0
	}
	k := (addr - s.base) >> s.shift
	if k >= uint64(len(s.first)-1) {
		return n // above every record's bucket
	}
	lo, hi := int(s.first[k]), int(s.first[k+1])
	return lo + searchRecords(b[size*lo:], size, hi-lo, addr)
}

// build makes the buckets: as many as the records (a power of two), a
// u32 each, so at most a quarter of the records' bytes.
func (s *blockSearch) build(b []byte, size, n int) {
	if n < minBucketed || len(b) < size*n {
		return
	}
	base, last := le.Uint64(b), le.Uint64(b[size*(n-1):])
	buckets := 1 << bits.Len(uint(n-1))
	shift := uint(0)
	for (last-base)>>shift >= uint64(buckets) {
		shift++
	}
	first := make([]uint32, buckets+1)
	k, prev := 0, base
	for r := 0; r < n; r++ {
		a := le.Uint64(b[size*r:])
		if a < prev || a > last {
			return // not sorted (a damaged file): the plain search answers
		}
		prev = a
		for bucket := int((a - base) >> shift); k <= bucket; k++ {
			first[k] = uint32(r)
		}
	}
	for ; k <= buckets; k++ {
		first[k] = uint32(n)
	}
	s.base, s.shift, s.first = base, shift, first
}
