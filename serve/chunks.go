package serve

import (
	"context"
	"io"
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
	return chunkstore.New(chunkObjects{s.store.store}, chunkstore.Config{
		QueryTimeout:   s.cfg.Limits.RequestTimeout,
		Now:            func() time.Time { return timeNow() }, // tests replace timeNow
		Compacted:      func(err error) { s.metrics.compactions.WithLabelValues(result(err)).Inc() },
		PartialWritten: func(err error) { s.metrics.partials.WithLabelValues(result(err)).Inc() },
	})
}

// chunkObjects is the store seen through chunkstore.Store's method
// names.
type chunkObjects struct{ objectStore }

func (o chunkObjects) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	return o.get(ctx, key)
}

func (o chunkObjects) Put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error {
	return o.put(ctx, key, r, size, onlyIfAbsent)
}

func (o chunkObjects) Stat(ctx context.Context, key string) (int64, string, error) {
	return o.stat(ctx, key)
}

func (o chunkObjects) List(ctx context.Context, prefix string) ([]string, error) {
	return o.list(ctx, prefix)
}

func (o chunkObjects) Remove(ctx context.Context, key string) error { return o.remove(ctx, key) }
