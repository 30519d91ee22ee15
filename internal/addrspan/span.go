package addrspan

import (
	"cmp"
	"math"
	"slices"
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
// input span that wins there. Empty spans are dropped. Spans that do not
// overlap (a process's images, nearly always) are returned sorted as they
// are; otherwise it sweeps the boundaries with a heap of the open spans:
// O(n log n).
func Flatten(in []Span) []Span {
	spans := make([]Span, 0, len(in))
	for _, s := range in {
		if s.Start < s.End {
			spans = append(spans, s)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	slices.SortStableFunc(spans, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	disjoint := true
	for i := 1; i < len(spans) && disjoint; i++ {
		disjoint = spans[i-1].End <= spans[i].Start
	}
	if disjoint {
		return spans
	}
	bounds := make([]uint64, 0, 2*len(spans))
	for _, s := range spans {
		bounds = append(bounds, s.Start, s.End)
	}
	slices.Sort(bounds)
	uniq := slices.Compact(bounds)
	out := make([]Span, 0, len(spans))
	open := make(spanHeap, 0, len(spans))
	next := 0
	for i := 0; i+1 < len(uniq); i++ {
		b, end := uniq[i], uniq[i+1]
		for next < len(spans) && spans[next].Start == b {
			open.push(spans[next])
			next++
		}
		for len(open) > 0 && open[0].End <= b {
			open.pop()
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

// spanHeap keeps the winning open span on top: a binary heap over Span
// values, without container/heap's boxing of each value pushed.
type spanHeap []Span

// wins reports whether a is the span to show where a and b overlap.
func wins(a, b Span) bool {
	if a.Prio != b.Prio {
		return a.Prio > b.Prio
	}
	return a.Order < b.Order
}

func (h *spanHeap) push(s Span) {
	*h = append(*h, s)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !wins(q[i], q[parent]) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *spanHeap) pop() {
	q := *h
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		best, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && wins(q[l], q[best]) {
			best = l
		}
		if r < len(q) && wins(q[r], q[best]) {
			best = r
		}
		if best == i {
			break
		}
		q[i], q[best] = q[best], q[i]
		i = best
	}
	*h = q
}
