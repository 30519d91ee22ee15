package chunkstore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// A compaction cut short at any step neither loses nor doubles a stack:
// after its merged chunk is written the old chunks are skipped, however
// many of them are deleted yet; the next compaction finishes the
// deletes; an upload arriving late in a compacted hour is merged with it
// later, still counted once.
func TestCompactionCountsEveryStackOnce(t *testing.T) {
	store := newMemStore()
	c := newChunks(t, store, 0)
	c.compacting.Store(true) // no compaction in the background: the test takes the steps
	hour := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	for i := range 3 {
		writeAt(t, c, hour.Add(time.Duration(i)*time.Minute))
	}
	// The current hour is not compacted: uploads may still be landing.
	writeAt(t, c, time.Now())
	check := func(step string, wantRecords, wantWeight int64) {
		t.Helper()
		if records, weight := counts(t, c, Query{}); records != wantRecords || weight != wantWeight {
			t.Errorf("%s: %d records of weight %d, want %d of weight %d", step, records, weight, wantRecords, wantWeight)
		}
		// The label filter goes through the merged samples' attributes.
		labelled := Query{Labels: []aggregate.Label{{Key: "api", Value: "UserDefaults"}}}
		if records, _ := counts(t, c, labelled); records != wantRecords*2/3 {
			t.Errorf("%s: %d records labelled, want %d", step, records, wantRecords*2/3)
		}
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, store)[0])
	ctx := context.Background()

	// Step 1 only: the merged chunk is written, the old ones not deleted.
	key, set, err := c.writeCompacted(ctx, prefix)
	if err != nil || !strings.HasSuffix(key, compactSuffix) || len(set.replaced) != 3 {
		t.Fatalf("writeCompacted = %q, %+v, %v; want a merged chunk replacing 3", key, set, err)
	}
	if n := len(chunkKeys(t, store)); n != 5 {
		t.Fatalf("%d chunks after step 1, want 5 (3 old, 1 merged, 1 of this hour)", n)
	}
	check("merged chunk written, none deleted", 12, 20)
	// One old chunk deleted, then the crash.
	if err := store.Remove(ctx, set.replaced[0]); err != nil {
		t.Fatal(err)
	}
	check("one old chunk deleted", 12, 20)
	// A second instance sees the same, and a compaction of its own
	// finishes the deletes without merging again.
	c2 := newChunks(t, store, 0)
	c2.compacting.Store(true)
	if again, err := c2.compactBucket(ctx, prefix); err != nil || again != "" {
		t.Errorf("compacting a compacted hour = %q, %v; want nothing merged", again, err)
	}
	keys := chunkKeys(t, store)
	if len(keys) != 2 || !slices.Contains(keys, key) {
		t.Errorf("after the second compaction: %q, want the merged chunk and this hour's", keys)
	}
	if records, _ := counts(t, c2, Query{}); records != 12 {
		t.Errorf("second instance: %d records, want 12", records)
	}
	check("compaction finished", 12, 20)

	// A late upload in the compacted hour is merged with the merged chunk.
	writeAt(t, c, hour.Add(59*time.Minute))
	check("late upload", 15, 25)
	key2, set2, err := c.writeCompacted(ctx, prefix)
	if err != nil || key2 == key {
		t.Fatalf("second merge = %q, %v", key2, err)
	}
	got, err := c.readChunk(ctx, key2)
	if err != nil {
		t.Fatal(err)
	}
	// It replaces the first merged chunk and, through it, the first
	// three: deleting the merged one first must not bring them back.
	if len(got.Replaces) != 5 || !slices.Contains(got.Replaces, key) {
		t.Errorf("second merged chunk replaces %q, want 5 keys with %s", got.Replaces, key)
	}
	// Crash again before deleting: both merged chunks are listed.
	check("two merged chunks listed", 15, 25)
	for _, old := range set2.replaced {
		if err := store.Remove(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	check("second compaction finished", 15, 25)
}

// A query starts the compaction of closed hours in the background, and
// the answer after it is the answer before.
func TestQueryCompactsClosedHours(t *testing.T) {
	store := newMemStore()
	c := newChunks(t, store, 0)
	var compactions []error
	c.cfg.Compacted = func(err error) { compactions = append(compactions, err) }
	hour := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 4 {
		writeAt(t, c, hour.Add(time.Duration(i)*time.Minute))
	}
	if records, _ := counts(t, c, Query{}); records != 12 {
		t.Errorf("before: %d records, want 12", records)
	}
	c.Wait()
	keys := chunkKeys(t, store)
	if len(keys) != 1 || !strings.HasSuffix(keys[0], compactSuffix) {
		t.Errorf("after the query's compaction: %q, want one merged chunk", keys)
	}
	if len(compactions) != 1 || compactions[0] != nil {
		t.Errorf("compactions told: %v, want one that succeeded", compactions)
	}
	if records, _ := counts(t, c, Query{}); records != 12 {
		t.Errorf("after: %d records, want 12", records)
	}
}

// Instances compacting the same hour at once merge it once.
func TestConcurrentCompactionsMergeOnce(t *testing.T) {
	store := newMemStore()
	a, b := newChunks(t, store, 0), newChunks(t, store, 0)
	a.compacting.Store(true)
	b.compacting.Store(true)
	hour := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 3 {
		writeAt(t, a, hour.Add(time.Duration(i)*time.Minute))
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, store)[0])
	errs := make(chan error, 2)
	for _, c := range []*Chunks{a, b} {
		go func() { _, err := c.compactBucket(context.Background(), prefix); errs <- err }()
	}
	for range 2 {
		// A compaction may find a chunk the other deleted under it: an
		// error that leaves the store as it was.
		if err := <-errs; err != nil && !strings.Contains(err.Error(), "not found") {
			t.Error(err)
		}
	}
	if records, _ := counts(t, a, Query{}); records != 9 {
		t.Errorf("%d records, want 9", records)
	}
	if n := countSuffix(chunkKeys(t, store), compactSuffix); n != 1 {
		t.Errorf("%d merged chunks, want 1", n)
	}
}

// Compact compacts the hours that have ended, and no other.
func TestCompact(t *testing.T) {
	store := newMemStore()
	c := newChunks(t, store, -1)
	c.compacting.Store(true)
	old := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 2 {
		writeAt(t, c, old.Add(time.Duration(i)*time.Minute))
		writeAt(t, c, time.Now())
	}
	if err := c.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys := chunkKeys(t, store)
	if len(keys) != 3 || countSuffix(keys, compactSuffix) != 1 {
		t.Errorf("after Compact: %q, want the ended hour's merged chunk and this hour's two uploads", keys)
	}
	if records, weight := counts(t, c, Query{}); records != 12 || weight != 20 {
		t.Errorf("%d records of weight %d, want 12 of weight 20", records, weight)
	}
}

// vanishingStore lists, once, a chunk that is gone when read: a
// compaction deleted it between a query's listing and its reading.
type vanishingStore struct {
	Store
	listed int
}

func (v *vanishingStore) List(ctx context.Context, prefix string) ([]string, error) {
	keys, err := v.Store.List(ctx, prefix)
	v.listed++
	if v.listed == 1 && len(keys) > 0 {
		keys = append(keys, strings.TrimSuffix(keys[0], ".chunk")+"-gone.chunk")
	}
	return keys, err
}

// A query that finds a listed chunk deleted lists again and answers.
func TestQueryListsAgainWhenAChunkIsGone(t *testing.T) {
	v := &vanishingStore{Store: newMemStore()}
	c := newChunks(t, v, -1) // no partial chunk: its listings are not the query's
	writeAt(t, c, time.Now())
	if records, _ := counts(t, c, Query{}); records != 3 || v.listed != 2 {
		t.Errorf("%d records after %d listings, want 3 after 2", records, v.listed)
	}
}

// listedBefore is a view of a store whose List shows only the keys it
// held when the view was made (and still holds): an instance that listed
// an hour just before an upload landed.
type listedBefore struct {
	*memStore
	seen map[string]bool
}

func newListedBefore(m *memStore) *listedBefore {
	keys, _ := m.List(context.Background(), "")
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	return &listedBefore{m, seen}
}

func (v *listedBefore) List(ctx context.Context, prefix string) ([]string, error) {
	keys, err := v.memStore.List(ctx, prefix)
	return slices.DeleteFunc(keys, func(k string) bool { return !v.seen[k] }), err
}

// An upload landing in an hour after its grace while two instances
// compact that hour, one having listed it and one not, makes two final
// chunks, one holding the other's uploads: a reader counts the larger
// only, and the next compaction removes the smaller, counting nothing
// twice.
func TestLateUploadDuringTwoCompactions(t *testing.T) {
	store := newMemStore()
	hour := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	c := newChunks(t, store, 0)
	c.compacting.Store(true)
	for i := range 2 {
		writeAt(t, c, hour.Add(time.Duration(i)*time.Minute))
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, store)[0])
	early := newChunks(t, newListedBefore(store), 0) // listed before the late upload
	early.compacting.Store(true)
	writeAt(t, c, hour.Add(59*time.Minute)) // the late upload
	wantRecords, wantWeight := counts(t, c, Query{})
	if wantRecords == 0 {
		t.Fatal("no records before compaction")
	}
	ctx := context.Background()
	late := newChunks(t, store, 0) // listed after it
	late.compacting.Store(true)
	bigger, _, err := late.writeCompacted(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	smaller, _, err := early.writeCompacted(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(bigger, compactSuffix) || !strings.HasSuffix(smaller, compactSuffix) || bigger == smaller {
		t.Fatalf("two compactions wrote %q and %q: want two different final chunks", bigger, smaller)
	}
	reader := newChunks(t, store, 0)
	reader.compacting.Store(true)
	if records, weight := counts(t, reader, Query{}); records != wantRecords || weight != wantWeight {
		t.Errorf("with both final chunks: %d records of weight %d, want %d of weight %d", records, weight, wantRecords, wantWeight)
	}
	if _, err := reader.compactBucket(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	if keys := chunkKeys(t, store); !slices.Equal(keys, []string{bigger}) {
		t.Errorf("after the next compaction the hour holds %q, want only %q", keys, bigger)
	}
	if records, weight := counts(t, reader, Query{}); records != wantRecords || weight != wantWeight {
		t.Errorf("after the next compaction: %d records of weight %d, want %d of weight %d", records, weight, wantRecords, wantWeight)
	}
}
