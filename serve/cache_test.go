package serve

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// TestSharedIndexBuiltOnce: two instances share a store; the first to
// need a UUID builds its index and writes it there, the second reads it
// and builds nothing.
func TestSharedIndexBuiltOnce(t *testing.T) {
	u := fixtureUUID(t)
	store := t.TempDir()
	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, fixtureBin), remote.KindDebug: readFile(t, fixtureDSYM)})
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: store}, {Name: "http", Type: "http", URL: src.URL}}
	cfg.Store = "store"
	a, tsA := newTestServer(t, cfg)
	b, tsB := newTestServer(t, cfg)
	body := symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484)
	delete(body, "options") // candidates name where each instance found the index
	_, first := postJSON(t, tsA.URL+"/symbolicate", body)
	_, second := postJSON(t, tsB.URL+"/symbolicate", body)
	if !bytes.Equal(first, second) {
		t.Errorf("the instances answer differently:\n%s\n%s", first, second)
	}
	got := []float64{
		metric(t, a, "stackimage_index_builds_total", "result", "ok"), metric(t, a, "stackimage_shared_index_writes_total", "result", "written"),
		metric(t, b, "stackimage_index_builds_total", "result", "ok"), metric(t, b, "stackimage_index_cache_total", "result", "shared"),
	}
	if got[0] != 1 || got[1] != 1 || got[2] != 0 || got[3] != 1 {
		t.Errorf("A built %v and wrote %v, B built %v and read %v from the store; want 1, 1, 0, 1", got[0], got[1], got[2], got[3])
	}
	if _, err := os.Stat(filepath.Join(store, indexcache.SharedKey(u))); err != nil {
		t.Errorf("no shared index in the store: %v", err)
	}
}

// TestLocalCacheByteCap: with room for one index, asking for a second
// evicts the first from memory and disk; asking for the first again
// builds it again.
func TestLocalCacheByteCap(t *testing.T) {
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Cache.MaxBytes = 1
	s, ts := newTestServer(t, cfg)
	var ids []string
	for _, name := range []string{"chain-arm64-O1", "chain-x86_64-O1"} {
		syms := symstore.NewSymbols()
		syms.AddFile(context.Background(), filepath.Join("..", "fixtures", "bin", name))
		ids = append(ids, syms.UUIDs()[0].Hex())
		syms.Close()
	}
	ask := func(id string) {
		t.Helper()
		_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(id, 0x100000000, 0x100000400, 0x100000484))
		if st := decode(t, data).Modules[0].DebugStatus; st != "found" {
			t.Fatalf("%s: %s", id, data)
		}
	}
	ask(ids[0])
	ask(ids[1])
	if e := metric(t, s, "stackimage_index_cache_evictions_total"); e != 1 {
		t.Errorf("%v evictions, want 1", e)
	}
	files, _ := filepath.Glob(filepath.Join(s.cacheDir, "index", "*"))
	if len(files) != 1 {
		t.Errorf("local cache holds %v, want one index", files)
	}
	ask(ids[0])
	if b := metric(t, s, "stackimage_index_builds_total", "result", "ok"); b != 3 {
		t.Errorf("%v builds, want 3: the evicted index is built again", b)
	}
}

// TestCacheDirTrimmedAtStart: index files a previous run left beyond the
// byte cap are removed, oldest first, and its temporary files are gone.
func TestCacheDirTrimmedAtStart(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "index")
	os.MkdirAll(index, 0o755)
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.WriteFile(filepath.Join(dir, "tmp", "fetch-1"), []byte("half a download"), 0o644)
	old, recent := filepath.Join(index, "A.symindex"), filepath.Join(index, "B.symindex")
	os.WriteFile(old, make([]byte, 600), 0o644)
	os.WriteFile(recent, make([]byte, 600), 0o644)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	cfg := DefaultConfig("")
	cfg.Cache.Dir = dir
	cfg.Cache.MaxBytes = 1000
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(old); err == nil {
		t.Errorf("the older index survived though the two exceed the cap")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the newer index was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp", "fetch-1")); err == nil {
		t.Errorf("a previous run's temporary file survived")
	}
}

// TestKeptFilesEvictedWithIndex: the binary and dSYM downloaded with an
// index (kept for walks) count against cache.max_bytes and leave the
// local cache with their index.
func TestKeptFilesEvictedWithIndex(t *testing.T) {
	cfg := DefaultConfig("")
	var ids []uuid.UUID
	for _, name := range []string{"chain-arm64-O1", "chain-x86_64-O1"} {
		bin := filepath.Join("..", "fixtures", "bin", name)
		dsym := filepath.Join(bin+".dSYM", "Contents", "Resources", "DWARF", name)
		syms := symstore.NewSymbols()
		syms.AddFile(context.Background(), bin)
		u := syms.UUIDs()[0]
		syms.Close()
		ids = append(ids, u)
		src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, bin), remote.KindDebug: readFile(t, dsym)})
		cfg.Sources = append(cfg.Sources, SourceConfig{Name: name, Type: "http", URL: src.URL})
	}
	cfg.Cache.MaxBytes = 1
	s, ts := newTestServer(t, cfg)
	cached := func() []string {
		files, _ := filepath.Glob(filepath.Join(s.cacheDir, "index", "*"))
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		return names
	}
	for i, u := range ids {
		_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
		if st := decode(t, data).Modules[0].DebugStatus; st != "found" {
			t.Fatalf("%s: %s", u, data)
		}
		want := []string{u.String() + ".debuginfo", u.String() + ".executable", u.String() + symindex.Extension}
		if diff := cmp.Diff(want, cached()); diff != "" {
			t.Errorf("after UUID %d, the local cache differs (-want +got):\n%s", i, diff)
		}
	}
	if e := metric(t, s, "stackimage_index_cache_evictions_total"); e != 1 {
		t.Errorf("%v evictions, want 1", e)
	}
}
