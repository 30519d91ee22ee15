package testtool

import (
	"runtime"
	"runtime/metrics"
)

// HeapAllocated returns the bytes the heap allocated while f ran, for a
// test that holds a parser to an allocation budget. f must do the same
// work each time it is called.
//
// It reads runtime/metrics first, which does not stop the world, so that
// a fuzz target can afford it on every input. That count is exact only
// lazily: each P's cached spans are added to it when they are returned,
// and a garbage collection while f runs returns them all, adding the
// earlier work of every P (megabytes after a large input) to f's. So a
// count over budget is measured again around a second run of f with
// runtime.ReadMemStats, which flushes the caches first and is exact but
// for other goroutines' allocations.
func HeapAllocated(f func(), budget uint64) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	f()
	metrics.Read(sample)
	if got := sample[0].Value.Uint64() - before; got <= budget {
		return got
	}
	var start, end runtime.MemStats
	runtime.ReadMemStats(&start)
	f()
	runtime.ReadMemStats(&end)
	return end.TotalAlloc - start.TotalAlloc
}
