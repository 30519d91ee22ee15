package serve

import (
	"time"

	"github.com/stackimage/stackimage/aggregate/chunkstore"
)

// newChunks opens the aggregates kept in the configured store, nil when
// it has none to hold them (a scanned directory). The background work is
// counted in the metrics.
func (s *Server) newChunks() *chunkstore.Chunks {
	if s.store == nil || s.store.store == nil {
		return nil
	}
	result := func(err error) string {
		if err != nil {
			return "failed"
		}
		return "ok"
	}
	return chunkstore.New(s.store.store, chunkstore.Config{
		QueryTimeout:   s.cfg.Limits.RequestTimeout,
		Now:            func() time.Time { return timeNow() }, // tests replace timeNow
		Compacted:      func(err error) { s.metrics.compactions.WithLabelValues(result(err)).Inc() },
		PartialWritten: func(err error) { s.metrics.partials.WithLabelValues(result(err)).Inc() },
	})
}
