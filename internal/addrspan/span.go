package addrspan

import (
	"container/heap"
	"math"
	"sort"
)

// Span is a half-open address range [Start, End) that refers to something
// (Ref: an index chosen by the caller). Where spans overlap, the one with the
// highest Prio wins, then the lowest Order.
type Span struct {
	Start, End uint64
	Prio       uint64
	Order      int
	Ref        int
}

// ClipEnd returns start+size, clipped to the top of the address space
// (whose last byte then cannot be matched: ranges are half-open).
func ClipEnd(start, size uint64) uint64 {
	if start+size < start {
		return math.MaxUint64
	}
	return start + size
}

// Flatten resolves overlaps once, so that lookups are a binary search: it
// returns disjoint spans sorted by start, each piece carrying the ref of the
// input span that wins there. Empty spans are dropped. It sweeps the
// boundaries with a heap of the open spans: O(n log n).
func Flatten(in []Span) []Span {
	var spans []Span
	var bounds []uint64
	for _, s := range in {
		if s.Start < s.End {
			spans = append(spans, s)
			bounds = append(bounds, s.Start, s.End)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	uniq := bounds[:1]
	for _, b := range bounds[1:] {
		if b != uniq[len(uniq)-1] {
			uniq = append(uniq, b)
		}
	}
	var out []Span
	var open spanHeap
	next := 0
	for i := 0; i+1 < len(uniq); i++ {
		b, end := uniq[i], uniq[i+1]
		for next < len(spans) && spans[next].Start == b {
			heap.Push(&open, spans[next])
			next++
		}
		for len(open) > 0 && open[0].End <= b {
			heap.Pop(&open)
		}
		if len(open) == 0 {
			continue
		}
		w := open[0]
		if n := len(out); n > 0 && out[n-1].End == b && out[n-1].Ref == w.Ref {
			out[n-1].End = end
			continue
		}
		out = append(out, Span{Start: b, End: end, Prio: w.Prio, Order: w.Order, Ref: w.Ref})
	}
	return out
}

// Find returns the span of the flattened list holding addr, in O(log n).
func Find(spans []Span, addr uint64) (Span, bool) {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].End > addr })
	if i < len(spans) && spans[i].Start <= addr {
		return spans[i], true
	}
	return Span{}, false
}

// spanHeap keeps the winning open span on top.
type spanHeap []Span

func (h spanHeap) Len() int { return len(h) }
func (h spanHeap) Less(i, j int) bool {
	if h[i].Prio != h[j].Prio {
		return h[i].Prio > h[j].Prio
	}
	return h[i].Order < h[j].Order
}
func (h spanHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *spanHeap) Push(x any)   { *h = append(*h, x.(Span)) }
func (h *spanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
