// Package parallel runs a loop's iterations on a few goroutines, the
// caller's among them.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(i) for each i in [0, n), at most workers at a time,
// from at most workers goroutines of which the caller's is one: a loop
// whose items are nearly always quick (a lookup found in memory) costs no
// goroutine when it has one item. Items are taken in order, one at a
// time, so a goroutine that starts late leaves its share to the others.
// None is started once ctx is done: the items not started are left as
// they are, for the caller to report.
func ForEach(ctx context.Context, n, workers int, fn func(i int)) {
	if n <= 0 {
		return
	}
	if workers <= 1 || n == 1 {
		for i := 0; i < n && ctx.Err() == nil; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range max(min(workers, n)-1, 0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
