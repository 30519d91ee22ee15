package snapshot

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrNotCaptured is the error ReadMemory wraps when an address lies in no
// captured region.
var ErrNotCaptured = errors.New("snapshot: memory not captured")

// Region is one captured block of memory.
type Region struct {
	Address uint64
	Data    []byte
}

// end returns the address just past the region. NewRegions guarantees it
// does not overflow.
func (r Region) end() uint64 { return r.Address + uint64(len(r.Data)) }

// Regions is the captured memory, sorted by address and non-overlapping. It
// satisfies walker.Memory.
type Regions struct {
	regions []Region
}

// NewRegions sorts and checks regions; overlapping regions are an error, and
// so are empty ones and ones that run past the top of the address space.
// The Region values are copied; their Data is not.
func NewRegions(regions []Region) (*Regions, error) {
	return newRegions(regions, "regions")
}

// newRegions is NewRegions with errors naming regions as label[i], the
// index in the caller's order.
func newRegions(regions []Region, label string) (*Regions, error) {
	order := make([]int, len(regions))
	for i, r := range regions {
		if len(r.Data) == 0 {
			return nil, fieldErrorf(fmt.Sprintf("%s[%d]", label, i), "empty region at %#x", r.Address)
		}
		if uint64(len(r.Data)) > math.MaxUint64-r.Address {
			return nil, fieldErrorf(fmt.Sprintf("%s[%d]", label, i), "%d bytes at %#x run past the end of the address space",
				len(r.Data), r.Address)
		}
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return regions[order[a]].Address < regions[order[b]].Address })
	sorted := make([]Region, len(regions))
	for i, j := range order {
		sorted[i] = regions[j]
		if i == 0 {
			continue
		}
		prev := sorted[i-1]
		if cur := sorted[i]; cur.Address < prev.end() {
			return nil, fieldErrorf(fmt.Sprintf("%s[%d]", label, j), "[%#x, %#x) overlaps %s[%d] [%#x, %#x)",
				cur.Address, cur.end(), label, order[i-1], prev.Address, prev.end())
		}
	}
	return &Regions{regions: sorted}, nil
}

// ReadMemory reads len(p) bytes at addr from the captured regions, crossing
// from one region into an adjacent one. Like io.ReaderAt, it returns the
// number of bytes read and, when that is short of len(p), an error wrapping
// ErrNotCaptured that names the first missing address.
func (r *Regions) ReadMemory(p []byte, addr uint64) (int, error) {
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		if a < addr {
			return n, fmt.Errorf("%w: read at %#x wraps past the end of the address space", ErrNotCaptured, addr)
		}
		var regions []Region
		if r != nil {
			regions = r.regions
		}
		// The first region ending above a is the only one that can hold it.
		i := sort.Search(len(regions), func(i int) bool { return regions[i].end() > a })
		if i == len(regions) || regions[i].Address > a {
			return n, fmt.Errorf("%w at %#x", ErrNotCaptured, a)
		}
		reg := regions[i]
		n += copy(p[n:], reg.Data[a-reg.Address:])
	}
	return n, nil
}

// All returns the regions in address order. The caller must not modify
// them.
func (r *Regions) All() []Region {
	if r == nil {
		return nil
	}
	return r.regions
}
