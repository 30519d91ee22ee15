package addrspan

import (
	"slices"
	"sort"
)

// MaxOpenRange bounds the range of an image whose extent is unknown (no
// size): it reaches up to the next image's load address but no further
// than this, so that the last image does not swallow the heap and stacks
// above it. Real images are far smaller.
const MaxOpenRange = 4 << 30

// OpenEnd returns where an image of unknown size loaded at load ends: at
// the lowest load address above it among loads (sorted ascending), at
// most MaxOpenRange past load.
func OpenEnd(load uint64, loads []uint64) uint64 {
	end := ClipEnd(load, MaxOpenRange)
	if k := sort.Search(len(loads), func(k int) bool { return loads[k] > load }); k < len(loads) {
		end = min(end, loads[k])
	}
	return end
}

// Images returns the flattened spans of n images, image i loaded at load
// with size bytes (0 when unknown: then up to the next image, see
// OpenEnd); Ref is the image's index. Where images overlap, the one with
// the highest load address holding the address wins, then the first
// given. Find(spans, addr).Ref is then the image holding addr.
func Images(n int, image func(i int) (load, size uint64)) []Span {
	loads := make([]uint64, n)
	for i := range n {
		loads[i], _ = image(i)
	}
	slices.Sort(loads)
	spans := make([]Span, 0, n)
	for i := range n {
		load, size := image(i)
		end := OpenEnd(load, loads)
		if size > 0 {
			end = ClipEnd(load, size)
		}
		spans = append(spans, Span{Start: load, End: end, Prio: load, Order: i, Ref: i})
	}
	return Flatten(spans)
}

// Index returns the Ref of the span holding addr, -1 for none.
func Index(spans []Span, addr uint64) int {
	if s, ok := Find(spans, addr); ok {
		return s.Ref
	}
	return -1
}
