package serve

import (
	"context"
	"fmt"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// source is one configured source: an object store read through a
// layout (remote), or a directory scanned at start (layout "scan"), whose
// files are found by symstore.Symbols rather than by path.
type source struct {
	cfg     SourceConfig
	remote  *remote.Source    // nil for a scanned directory
	store   objstore.Store    // remote's store, where the aggregates' chunks go too
	scanned *symstore.Symbols // a scanned directory's index
	// origin is the source as the index cache asks it.
	origin *indexcache.Origin
}

// origins are the sources as the index cache asks them; nil for nil
// (every source).
func origins(sources []*source) []*indexcache.Origin {
	if sources == nil {
		return nil
	}
	out := make([]*indexcache.Origin, len(sources))
	for i, s := range sources {
		out[i] = s.origin
	}
	return out
}

// newSource opens a configured source. maxConns bounds its connections
// to a remote store (limits.max_fetches): lookups beyond it wait.
func newSource(ctx context.Context, cfg SourceConfig, tmpDir string, m *metrics, maxConns int) (*source, error) {
	s := &source{cfg: cfg}
	sc := cfg.storeConfig()
	if sc.Scanned() {
		s.scanned = symstore.NewSymbols()
		if err := s.scanned.AddDir(ctx, cfg.Path); err != nil {
			return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
		}
		s.origin = &indexcache.Origin{Name: cfg.Name, Local: s.scanned, Location: cfg.Path}
		return s, nil
	}
	store, err := sc.OpenStore(maxConns)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
	}
	s.store = store
	s.remote = remote.New(remote.Config{
		Name: cfg.Name, Store: s.store, Layout: sc.Layout,
		MaxDownload: sc.MaxDownload, DownloadTimeout: sc.DownloadTimeout, TempDir: tmpDir,
		Downloaded: func(n int64) {
			m.downloads.WithLabelValues(cfg.Name).Inc()
			m.downloadBytes.WithLabelValues(cfg.Name).Add(float64(n))
		},
		Failed: func() { m.cache.SourceErrors.WithLabelValues(cfg.Name).Inc() },
	})
	s.origin = &indexcache.Origin{Name: cfg.Name, Remote: s.remote}
	return s, nil
}

// storeConfig is the source's configuration as remote reads it.
func (c *SourceConfig) storeConfig() remote.StoreConfig {
	return remote.StoreConfig{Type: c.Type, Path: c.Path, URL: c.URL, Headers: c.Headers,
		Endpoint: c.Endpoint, Bucket: c.Bucket, Prefix: c.Prefix, Region: c.Region,
		AccessKey: c.AccessKey, SecretKey: c.SecretKey, Secure: c.Secure,
		Layout:      remote.Layout{Type: c.Layout.Type, Casing: c.Layout.Casing},
		MaxDownload: int64(c.MaxDownload), DownloadTimeout: c.DownloadTimeout}
}

// Open is remote.Source.Open for sources with a layout, remote.OpenLocal
// for the others (a scanned directory, a Go program's own source).
func (s *source) Open(ctx context.Context, id uuid.UUID, kind remote.Kind, name string) (*remote.File, error) {
	if s.remote == nil {
		f, err := remote.OpenLocal(ctx, s.origin.Local, id, kind)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", s.cfg.Name, err)
		}
		return f, nil
	}
	return s.remote.Open(ctx, id, kind, name)
}
