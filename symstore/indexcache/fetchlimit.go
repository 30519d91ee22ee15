package indexcache

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// fetchLimiter bounds the lookups that fetch symbols from the sources at
// once in an instance (Config.MaxFetches). A lookup fetches its files
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
var errNoFetchSlot = errors.New("no fetch started before the request's deadline: MaxFetches lookups were in flight")

func newFetchLimiter(n int, m *Metrics) *fetchLimiter {
	return &fetchLimiter{slots: make(chan struct{}, n), inFlight: m.FetchesInFlight, waiting: m.FetchesWaiting}
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
