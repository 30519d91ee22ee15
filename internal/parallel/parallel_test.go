package parallel

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestForEachEveryItemOnce: every item runs exactly once, never more than
// workers at a time, for counts below, at and above the workers.
func TestForEachEveryItemOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {3, 4}, {4, 4}, {1000, 4}, {10, 1}, {10, 0}} {
		seen := make([]atomic.Int32, tc.n)
		var running, most atomic.Int32
		var mu sync.Mutex
		ForEach(context.Background(), tc.n, tc.workers, func(i int) {
			r := running.Add(1)
			mu.Lock()
			most.Store(max(most.Load(), r))
			mu.Unlock()
			seen[i].Add(1)
			running.Add(-1)
		})
		for i := range seen {
			if got := seen[i].Load(); got != 1 {
				t.Errorf("n=%d workers=%d: item %d ran %d times", tc.n, tc.workers, i, got)
			}
		}
		if limit := int32(max(tc.workers, 1)); most.Load() > limit {
			t.Errorf("n=%d workers=%d: %d ran at once", tc.n, tc.workers, most.Load())
		}
	}
}

// TestForEachStopsWithItsContext: once ctx ends, no item starts.
func TestForEachStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	ForEach(ctx, 100, 1, func(i int) {
		ran.Add(1)
		if i == 9 {
			cancel()
		}
	})
	if got := ran.Load(); got != 10 {
		t.Errorf("%d items ran, want the 10 before the context ended", got)
	}
}
