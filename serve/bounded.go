package serve

import (
	"context"
	"sync"
)

// forEachBounded calls fn for each of n items with at most limit running
// at once (limits.max_request_fetches), from at most limit goroutines,
// and starts none once ctx is done: the items not started are left as
// they are, for the caller to report.
func forEachBounded(ctx context.Context, n, limit int, fn func(i int)) {
	if n == 0 {
		return
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(limit, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
}
