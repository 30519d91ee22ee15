package serve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// TestMissesAreLookupErrNotFound: every way the service misses a UUID
// (each kind of source's Open, an object store's get, the index cache,
// and the symbol lookup it hands to aggregation) says so with an error
// errors.Is counts as lookup.ErrNotFound, the module's one "not found".
func TestMissesAreLookupErrNotFound(t *testing.T) {
	empty := httptest.NewServer(http.NotFoundHandler())
	defer empty.Close()
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Sources = append(cfg.Sources,
		SourceConfig{Name: "dir", Type: "filesystem", Path: t.TempDir(), Layout: LayoutConfig{Type: "unified"}},
		SourceConfig{Name: "http", Type: "http", URL: empty.URL})
	s, _ := newTestServer(t, cfg)
	ctx := context.Background()
	missing := uuid.UUID{0xde, 0xad}

	opened := 0
	for _, src := range s.sources {
		if src.store == nil {
			continue
		}
		opened++
		for _, kind := range remote.Kinds {
			if f, err := src.Open(ctx, missing, kind, "app"); f != nil || !errors.Is(err, notfound.ErrNotFound) {
				t.Errorf("source %s: Open(%s, %s) = %v, %v; want lookup.ErrNotFound", src.cfg.Name, missing, kind, f, err)
			}
		}
		if _, _, err := src.store.Get(ctx, "no/such/key"); !errors.Is(err, notfound.ErrNotFound) {
			t.Errorf("source %s: get of a missing key: %v, want lookup.ErrNotFound", src.cfg.Name, err)
		}
	}
	if opened != 2 {
		t.Fatalf("%d sources with a store, want the directory and the HTTP one", opened)
	}
	if l := s.cache.Get(ctx, missing, "app", nil); l.Index != nil || l.Status != indexcache.StatusMissing || !errors.Is(l.Err, notfound.ErrNotFound) {
		t.Errorf("index cache: %q, %v; want %q and lookup.ErrNotFound", l.Status, l.Err, indexcache.StatusMissing)
	}
	if e, err := s.cache.LookupContext(ctx, missing); e != nil || !errors.Is(err, notfound.ErrNotFound) {
		t.Errorf("Cache.LookupContext = %v, %v; want lookup.ErrNotFound", e, err)
	}
	// A hit is not an error.
	if e, err := s.cache.LookupContext(ctx, fixtureUUID(t)); e == nil || err != nil {
		t.Errorf("Cache.LookupContext of the fixture = %v, %v; want its entry", e, err)
	} else {
		e.Release()
	}
}

// TestNewStopsWhenContextEnds: New does not index a scanned directory
// once its context has ended, and returns the context's error.
func TestNewStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Cache.Dir = t.TempDir()
	if s, err := New(ctx, cfg); s != nil || !errors.Is(err, context.Canceled) {
		if s != nil {
			s.Close()
		}
		t.Errorf("New with an ended context = %v, %v; want nothing and context.Canceled", s, err)
	}
}
