package serve

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// fetchLimiter bounds the lookups that fetch symbols from the sources at
// once in an instance (limits.max_fetches). A lookup fetches its files
// one after another, so the cap bounds the connections to the sources
// too, whatever the requests in flight ask for and whatever their
// deadlines do.
type fetchLimiter struct {
	slots    chan struct{}
	inFlight prometheus.Gauge
	waiting  prometheus.Gauge
}

// errNoFetchSlot is the outcome of a lookup whose caller's context ended
// while it waited for a slot: nothing was fetched, nothing is remembered.
var errNoFetchSlot = errors.New("no fetch started before the request's deadline: limits.max_fetches lookups were in flight")

func newFetchLimiter(n int, m *metrics) *fetchLimiter {
	return &fetchLimiter{slots: make(chan struct{}, n), inFlight: m.fetchesInFlight, waiting: m.fetchesWaiting}
}

// acquire takes a slot, waiting while ctx lasts; it starts nothing once
// ctx is done.
func (l *fetchLimiter) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return errNoFetchSlot
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.waiting.Inc()
		defer l.waiting.Dec()
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return errNoFetchSlot
		}
	}
	l.inFlight.Inc()
	return nil
}

func (l *fetchLimiter) release() {
	l.inFlight.Dec()
	<-l.slots
}

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
