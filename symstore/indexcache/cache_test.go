package indexcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// emptyCache is a Cache over one empty directory in the unified layout.
func emptyCache(t *testing.T) *Cache {
	t.Helper()
	src := remote.New(remote.Config{Name: "empty", Store: objstore.Dir{Root: t.TempDir()}, Layout: remote.Layout{Type: "unified"}})
	c, err := New(Config{Dir: t.TempDir(), MaxBytes: 1 << 20, MissTTL: time.Minute, FailedTTL: time.Minute, MaxFetches: 2,
		Sources: []*Origin{{Name: "empty", Remote: src}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRememberedMissesBounded: misses of UUIDs a client makes up are
// remembered up to a bound, not without end.
func TestRememberedMissesBounded(t *testing.T) {
	c := emptyCache(t)
	c.maxNegative = 50
	for i := range 200 {
		u := uuid.UUID{byte(i), byte(i >> 8), 1}
		if l := c.Get(context.Background(), u, "", nil); l.Status != StatusMissing || !errors.Is(l.Err, lookup.ErrNotFound) {
			t.Fatalf("Get(%s) = %q, %v; want %q and lookup.ErrNotFound", u, l.Status, l.Err, StatusMissing)
		}
	}
	c.mu.Lock()
	n := len(c.neg)
	c.mu.Unlock()
	if n > 50 {
		t.Errorf("%d misses remembered, want at most 50", n)
	}
}
