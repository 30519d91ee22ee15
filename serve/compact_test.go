package serve

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/symstore/objstore"
)

// postAt posts the docs' example stacks (3 records, weight 5) as if
// accepted at when, so that their chunk lies under that hour.
func postAt(t *testing.T, url string, when time.Time) {
	t.Helper()
	saved := timeNow
	timeNow = func() time.Time { return when }
	defer func() { timeNow = saved }()
	if resp, body := do(t, "POST", url+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/stacks: %d %s", resp.StatusCode, body)
	}
}

func chunkKeys(t testing.TB, s *Server) []string {
	t.Helper()
	keys, err := s.store.store.List(context.Background(), chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A compaction cut short at any step neither loses nor doubles a stack:
// after its merged chunk is written the old chunks are skipped, however
// many of them are deleted yet; the next compaction finishes the
// deletes; an upload arriving late in a compacted hour is merged with it
// later, still counted once.
func TestCompactionCountsEveryStackOnce(t *testing.T) {
	store := t.TempDir()
	s, ts := newTestServer(t, aggregateConfig(store))
	s.compacting.Store(true) // no compaction in the background: the test takes the steps
	hour := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	for i := range 3 {
		postAt(t, ts.URL, hour.Add(time.Duration(i)*time.Minute))
	}
	// The current hour is not compacted: uploads may still be landing.
	postAt(t, ts.URL, time.Now())
	check := func(step string, records int64, weight int64) {
		t.Helper()
		doc := groupsOf(t, ts.URL+"/v1/groups")
		if doc.Records != records || len(doc.Groups) != 1 || doc.Groups[0].Weight != weight {
			t.Errorf("%s: %d records in %d groups, want %d of weight %d", step, doc.Records, len(doc.Groups), records, weight)
		}
		// The label filter goes through the merged samples' attributes.
		if doc := groupsOf(t, ts.URL+"/v1/groups?label=api=UserDefaults"); doc.Records != records*2/3 {
			t.Errorf("%s: %d records labelled, want %d", step, doc.Records, records*2/3)
		}
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, s)[0])
	ctx := context.Background()

	// Step 1 only: the merged chunk is written, the old ones not deleted.
	key, set, err := s.writeCompacted(ctx, prefix)
	if err != nil || !strings.HasSuffix(key, compactSuffix) || len(set.replaced) != 3 {
		t.Fatalf("writeCompacted = %q, %+v, %v; want a merged chunk replacing 3", key, set, err)
	}
	if n := len(chunkKeys(t, s)); n != 5 {
		t.Fatalf("%d chunks after step 1, want 5 (3 old, 1 merged, 1 of this hour)", n)
	}
	check("merged chunk written, none deleted", 12, 20)
	// One old chunk deleted, then the crash.
	if err := s.store.store.Remove(ctx, set.replaced[0]); err != nil {
		t.Fatal(err)
	}
	check("one old chunk deleted", 12, 20)
	// A second instance sees the same, and a compaction of its own
	// finishes the deletes without merging again.
	s2, ts2 := newTestServer(t, aggregateConfig(store))
	s2.compacting.Store(true)
	if again, err := s2.compactBucket(ctx, prefix); err != nil || again != "" {
		t.Errorf("compacting a compacted hour = %q, %v; want nothing merged", again, err)
	}
	keys := chunkKeys(t, s)
	if len(keys) != 2 || !slices.Contains(keys, key) {
		t.Errorf("after the second compaction: %q, want the merged chunk and this hour's", keys)
	}
	if doc := groupsOf(t, ts2.URL+"/v1/groups"); doc.Records != 12 {
		t.Errorf("second instance: %d records, want 12", doc.Records)
	}
	check("compaction finished", 12, 20)

	// A late upload in the compacted hour is merged with the merged chunk.
	postAt(t, ts.URL, hour.Add(59*time.Minute))
	check("late upload", 15, 25)
	key2, set2, err := s.writeCompacted(ctx, prefix)
	if err != nil || key2 == key {
		t.Fatalf("second merge = %q, %v", key2, err)
	}
	got, err := s.readChunk(ctx, key2)
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
		if err := s.store.store.Remove(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	check("second compaction finished", 15, 25)
}

// A query starts the compaction of closed hours in the background, and
// the answer after it is the answer before.
func TestQueryCompactsClosedHours(t *testing.T) {
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	hour := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 4 {
		postAt(t, ts.URL, hour.Add(time.Duration(i)*time.Minute))
	}
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 12 {
		t.Errorf("before: %d records, want 12", doc.Records)
	}
	s.background.Wait()
	keys := chunkKeys(t, s)
	if len(keys) != 1 || !strings.HasSuffix(keys[0], compactSuffix) {
		t.Errorf("after the query's compaction: %q, want one merged chunk", keys)
	}
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 12 {
		t.Errorf("after: %d records, want 12", doc.Records)
	}
}

// Instances compacting the same hour at once merge it once.
func TestConcurrentCompactionsMergeOnce(t *testing.T) {
	store := t.TempDir()
	a, ts := newTestServer(t, aggregateConfig(store))
	b, _ := newTestServer(t, aggregateConfig(store))
	a.compacting.Store(true)
	hour := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 3 {
		postAt(t, ts.URL, hour.Add(time.Duration(i)*time.Minute))
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, a)[0])
	errs := make(chan error, 2)
	for _, s := range []*Server{a, b} {
		go func() { _, err := s.compactBucket(context.Background(), prefix); errs <- err }()
	}
	for range 2 {
		// A compaction may find a chunk the other deleted under it: an
		// error that leaves the store as it was.
		if err := <-errs; err != nil && !strings.Contains(err.Error(), "not found") {
			t.Error(err)
		}
	}
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 9 {
		t.Errorf("%d records, want 9", doc.Records)
	}
}

// vanishingStore lists, once, a chunk that is gone when read: a
// compaction deleted it between a query's listing and its reading.
type vanishingStore struct {
	objstore.Store
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
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	s.writingPartials.Store(true) // their listings are not the query's
	postAt(t, ts.URL, time.Now())
	v := &vanishingStore{Store: s.store.store}
	s.store.store = v
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 3 || v.listed != 2 {
		t.Errorf("%d records after %d listings, want 3 after 2", doc.Records, v.listed)
	}
}
