package serve

import (
	"context"
	"sync"
)

// forEachBounded calls fn for each of n items with at most limit running
// at once (limits.max_request_fetches), from at most limit goroutines,
// and starts none once ctx is done: the items not started are left as
// they are, for the caller to report. The caller's goroutine is one of
// them: an item found in memory (nearly always, and often the only one)
// takes less than waking another thread for it would.
func forEachBounded(ctx context.Context, n, limit int, fn func(i int)) {
	if n == 0 {
		return
	}
	var next int
	var mu sync.Mutex
	work := func() {
		for ctx.Err() == nil {
			mu.Lock()
			i := next
			next++
			mu.Unlock()
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range min(limit, n) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
