package image

import (
	"container/heap"
	"math"
	"sort"
)

// span is a half-open address range [start, end) that refers to something
// (ref: an index chosen by the caller). Where spans overlap, the one with the
// highest prio wins, then the lowest order.
type span struct {
	start, end uint64
	prio       uint64
	order      int
	ref        int
}

// clipEnd returns start+size, clipped to the top of the address space
// (whose last byte then cannot be matched: ranges are half-open).
func clipEnd(start, size uint64) uint64 {
	if start+size < start {
		return math.MaxUint64
	}
	return start + size
}

// flatten resolves overlaps once, so that lookups are a binary search: it
// returns disjoint spans sorted by start, each piece carrying the ref of the
// input span that wins there. Empty spans are dropped. It sweeps the
// boundaries with a heap of the open spans: O(n log n).
func flatten(in []span) []span {
	var spans []span
	var bounds []uint64
	for _, s := range in {
		if s.start < s.end {
			spans = append(spans, s)
			bounds = append(bounds, s.start, s.end)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	uniq := bounds[:1]
	for _, b := range bounds[1:] {
		if b != uniq[len(uniq)-1] {
			uniq = append(uniq, b)
		}
	}
	var out []span
	var open spanHeap
	next := 0
	for i := 0; i+1 < len(uniq); i++ {
		b, end := uniq[i], uniq[i+1]
		for next < len(spans) && spans[next].start == b {
			heap.Push(&open, spans[next])
			next++
		}
		for len(open) > 0 && open[0].end <= b {
			heap.Pop(&open)
		}
		if len(open) == 0 {
			continue
		}
		w := open[0]
		if n := len(out); n > 0 && out[n-1].end == b && out[n-1].ref == w.ref {
			out[n-1].end = end
			continue
		}
		out = append(out, span{start: b, end: end, prio: w.prio, order: w.order, ref: w.ref})
	}
	return out
}

// findSpan returns the span of the flattened list holding addr, in O(log n).
func findSpan(spans []span, addr uint64) (span, bool) {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > addr })
	if i < len(spans) && spans[i].start <= addr {
		return spans[i], true
	}
	return span{}, false
}

// spanHeap keeps the winning open span on top.
type spanHeap []span

func (h spanHeap) Len() int { return len(h) }
func (h spanHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].order < h[j].order
}
func (h spanHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *spanHeap) Push(x any)   { *h = append(*h, x.(span)) }
func (h *spanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
