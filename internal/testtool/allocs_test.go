package testtool

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

var sink [][]byte

// fillCaches allocates objects of many sizes and keeps them, so that
// every P's cache holds spans whose allocations the heap count has not
// yet seen.
func fillCaches() {
	sink = sink[:0]
	for size := 8; size <= 32<<10; size += size/4 + 8 {
		for range 16 {
			sink = append(sink, make([]byte, size))
		}
	}
}

// TestHeapAllocatedAcrossAGC is the case that failed a fuzz target's
// seed in CI: a garbage collection during f adds every cached span's
// earlier allocations to runtime/metrics' count.
func TestHeapAllocatedAcrossAGC(t *testing.T) {
	const budget = 16 << 10
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	worst := uint64(0)
	for range 5 {
		fillCaches()
		metrics.Read(sample)
		before := sample[0].Value.Uint64()
		runtime.GC()
		metrics.Read(sample)
		worst = max(worst, sample[0].Value.Uint64()-before)

		fillCaches()
		if got := HeapAllocated(runtime.GC, budget); got > budget {
			t.Errorf("HeapAllocated(runtime.GC) = %d bytes, want at most %d", got, budget)
		}
	}
	t.Logf("runtime/metrics alone counted up to %d bytes for a GC", worst)
}

// TestHeapAllocatedCounts checks that what f allocates is counted, on
// both paths: within budget and over it.
func TestHeapAllocatedCounts(t *testing.T) {
	const size = 1 << 20
	for _, budget := range []uint64{4 * size, size / 2} {
		got := HeapAllocated(func() { sink = append(sink[:0], make([]byte, size)) }, budget)
		if got < size || got > 2*size {
			t.Errorf("budget %d: HeapAllocated of a %d-byte make = %d", budget, size, got)
		}
	}
}
