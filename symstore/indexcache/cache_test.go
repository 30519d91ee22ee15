package indexcache

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
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

// TestLocalSourceInMemory: a source of the program's own, holding a
// binary and its dSYM in memory, gives an index with debug information,
// and the two files copied into the cache for the walker.
func TestLocalSourceInMemory(t *testing.T) {
	mem, u := chainInMemory(t)
	dir := t.TempDir()
	c, err := New(Config{Dir: dir, MaxBytes: 1 << 30, MissTTL: time.Minute, FailedTTL: time.Minute, MaxFetches: 1,
		Sources: []*Origin{{Name: "memory", Local: mem}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l := c.Get(ctx, u, "", nil)
	if l.Index == nil || l.Status != StatusFound || l.Source != "memory" {
		t.Fatalf("Get(%s) = %q from %q, %v; want found from memory", u, l.Status, l.Source, l.Err)
	}
	defer c.Release(l.Index)
	if !l.Index.HasDebug || l.Index.Arch != "arm64" {
		t.Errorf("index: debug info %v, arch %q; want true, arm64", l.Index.HasDebug, l.Index.Arch)
	}
	paths := c.MachOFiles(ctx, l.Index, "", nil)
	if len(paths) != 2 {
		t.Fatalf("MachOFiles = %q, want the binary and the dSYM", paths)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, dir) {
			t.Errorf("%s: not a copy in the cache %s", p, dir)
		}
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestOriginNeedsOneSource: an Origin with neither a Remote nor a Local
// source, or with both, is refused at New rather than failing a lookup.
func TestOriginNeedsOneSource(t *testing.T) {
	src := remote.New(remote.Config{Name: "dir", Store: objstore.Dir{Root: t.TempDir()}, Layout: remote.Layout{Type: "unified"}})
	for _, o := range []*Origin{{Name: "none"}, {Name: "both", Remote: src, Local: &symstore.MemorySource{}}} {
		if c, err := New(Config{Dir: t.TempDir(), Sources: []*Origin{o}}); err == nil {
			c.Close()
			t.Errorf("New with origin %q: no error", o.Name)
		}
	}
}

// chainInMemory is a source of the test's own holding the chain-arm64-O1
// fixture's binary and dSYM in memory, and their UUID.
func chainInMemory(t *testing.T) (*symstore.MemorySource, uuid.UUID) {
	t.Helper()
	mem := new(symstore.MemorySource)
	var u uuid.UUID
	for _, path := range []string{"../../fixtures/bin/chain-arm64-O1", "../../fixtures/bin/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := mem.Add(path, data)
		if err != nil {
			t.Fatal(err)
		}
		u = ids[0]
	}
	return mem, u
}
