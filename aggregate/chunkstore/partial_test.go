package chunkstore

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

func removePartials(t *testing.T, store Store) {
	t.Helper()
	for _, key := range chunkKeys(t, store) {
		if strings.HasSuffix(key, partialSuffix) {
			if err := store.Remove(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Two instances take uploads of the current hour and write its partial
// chunks at the same time, over and over: every query, on either, counts
// every acknowledged upload once, and answers what merging the uploads
// alone answers, filtered or not.
func TestPartialChunksWithConcurrentUploadsAndInstances(t *testing.T) {
	store := newMemStore()
	a, b := newChunks(t, store, 3), newChunks(t, store, 3)
	const uploads, perUpload = 40, 25
	var posted sync.WaitGroup
	for i := range uploads {
		posted.Add(1)
		c := a
		if i%2 == 1 {
			c = b
		}
		go func() {
			defer posted.Done()
			if _, err := c.Write(context.Background(), chunkOf(t, manyStacks(perUpload, 10, uint64(i)))); err != nil {
				t.Errorf("Write: %v", err)
			}
		}()
	}
	// Meanwhile both instances write partial chunks as fast as they can
	// (besides those the uploads start), and queries check the counts.
	done := make(chan struct{})
	var writers sync.WaitGroup
	written := make([]int, 2)
	for i, c := range []*Chunks{a, b} {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				keys := chunkKeys(t, store)
				if len(keys) == 0 {
					continue
				}
				_, prefix, _ := chunkBucket(keys[0])
				key, err := c.writePartial(context.Background(), prefix, time.Now())
				if err != nil {
					t.Errorf("writePartial: %v", err)
				}
				if key != "" {
					written[i]++
				}
			}
		}()
	}
	var last int64
	for range 20 {
		records, _ := counts(t, a, Query{})
		if records%perUpload != 0 || records < last || records > uploads*perUpload {
			t.Errorf("%d records: not a whole number of uploads, fewer than before (%d), or more than posted", records, last)
		}
		last = records
	}
	posted.Wait()
	close(done)
	writers.Wait()
	a.Wait()
	b.Wait()
	if written[0]+written[1] < 2 {
		t.Errorf("partial chunks written: %v, want several", written)
	}
	keys := chunkKeys(t, store)
	if countSuffix(keys, partialSuffix) == 0 {
		t.Fatalf("no partial chunk in %q", keys)
	}
	for _, c := range []*Chunks{a, b} {
		if records, _ := counts(t, c, Query{}); records != uploads*perUpload {
			t.Errorf("%d records, want %d", records, uploads*perUpload)
		}
	}
	from, _ := time.Parse(time.RFC3339, "2026-11-26T01:10:00Z")
	to, _ := time.Parse(time.RFC3339, "2026-11-26T01:20:00Z")
	queries := []struct {
		name  string
		query Query
		group aggregate.GroupOptions
	}{
		{"all", Query{}, aggregate.GroupOptions{}},
		{"label", Query{Labels: []aggregate.Label{{Key: "api", Value: "api1"}}}, aggregate.GroupOptions{}},
		{"app version", Query{AppVersion: "2.1"}, aggregate.GroupOptions{}},
		{"time range", Query{From: from, To: to}, aggregate.GroupOptions{}},
		{"by stack", Query{}, aggregate.GroupOptions{Frames: -1}},
	}
	withPartials := map[string]string{}
	for _, q := range queries {
		withPartials[q.name] = answer(t, b, q.query, q.group)
	}
	removePartials(t, store)
	a.writingPartials.Store(true) // the queries below write none again
	for _, q := range queries {
		if got := answer(t, a, q.query, q.group); got != withPartials[q.name] {
			t.Errorf("query %s: the answer with partial chunks differs from the uploads' own:\n%s\nwant\n%s", q.name, withPartials[q.name], got)
		}
	}
}

// A reader counts the partial chunk holding the most uploads and the
// uploads it does not hold; the partial chunks it outranks are deleted
// once no query may still read them, and the hour's final chunk
// replaces them all.
func TestPartialChunksLifeCycle(t *testing.T) {
	store := newMemStore()
	c := newChunks(t, store, 2)
	c.writingPartials.Store(true) // the test writes them
	c.compacting.Store(true)
	now := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	c.cfg.Now = func() time.Time { return now }
	ctx := context.Background()
	post := func(n int) {
		for range n {
			writeAt(t, c, now)
		}
	}
	prefix := chunkPrefix + now.Format("2006-01-02T15") + "/"
	check := func(step string, records int64, partials int) {
		t.Helper()
		if got, _ := counts(t, c, Query{}); got != records {
			t.Errorf("%s: %d records, want %d", step, got, records)
		}
		if n := countSuffix(chunkKeys(t, store), partialSuffix); n != partials {
			t.Errorf("%s: %d partial chunks, want %d", step, n, partials)
		}
	}
	post(1)
	if key, err := c.writePartial(ctx, prefix, now); key != "" || err != nil {
		t.Errorf("one upload: writePartial = %q, %v; want nothing due", key, err)
	}
	post(1)
	first, err := c.writePartial(ctx, prefix, now)
	if err != nil || first == "" {
		t.Fatalf("two uploads: writePartial = %q, %v; want a partial chunk", first, err)
	}
	if _, held, _ := partialFields(first); held != 2 {
		t.Errorf("%s holds %d uploads, want 2", first, held)
	}
	check("first partial chunk", 6, 1)
	post(3)
	second, err := c.writePartial(ctx, prefix, now)
	if err != nil || second == "" || partialOrder(second, first) <= 0 {
		t.Fatalf("five uploads: writePartial = %q, %v; want one outranking %s", second, err, first)
	}
	got, err := c.readChunk(ctx, second)
	if err != nil || len(got.Replaces) != 5 || got.Records != 15 {
		t.Fatalf("second partial chunk: %v; %d uploads, %d records; want 5, 15", err, len(got.Replaces), got.Records)
	}
	check("two partial chunks", 15, 2)
	// The outranked one stays while a query may read it.
	post(2)
	now = now.Add(c.cfg.QueryTimeout + time.Minute + time.Second)
	if _, err := c.writePartial(ctx, prefix, now); err != nil {
		t.Fatal(err)
	}
	check("third partial chunk, the first deleted", 21, 2)
	if slices.Contains(chunkKeys(t, store), first) {
		t.Errorf("%s still listed", first)
	}

	// A partial chunk written after the hour's final chunk (by a slow
	// instance) is not counted, and the next compaction deletes it.
	post(1)
	now = now.Truncate(time.Hour).Add(time.Hour + c.compactionGrace() + time.Minute)
	final, err := c.compactBucket(ctx, prefix)
	if err != nil || !strings.HasSuffix(final, compactSuffix) {
		t.Fatalf("compactBucket = %q, %v", final, err)
	}
	check("final chunk", 24, 0)
	if keys := chunkKeys(t, store); len(keys) != 1 {
		t.Errorf("after the final chunk: %q, want it alone", keys)
	}
	read, _ := c.readChunk(ctx, final)
	late := *read // read chunks are shared
	late.Replaces = []string{"x"}
	buf, _ := encodeMergedChunk(&late)
	lateKey := partialKey(prefix, &late, now)
	if err := store.Put(ctx, lateKey, bytes.NewReader(buf), int64(len(buf)), true); err != nil {
		t.Fatal(err)
	}
	check("a late partial chunk", 24, 1)
	if key, err := c.writePartial(ctx, prefix, now); key != "" || err != nil {
		t.Errorf("writePartial in an hour with a final chunk = %q, %v; want nothing", key, err)
	}
	if _, err := c.compactBucket(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	check("the late partial chunk deleted", 24, 0)
}

// An upload starts writing the hour's partial chunk in the background
// when one is due; a negative PartialStep writes none.
func TestUploadsWritePartialChunks(t *testing.T) {
	for _, step := range []int{3, -1} {
		store := newMemStore()
		c := newChunks(t, store, step)
		var told []error
		c.cfg.PartialWritten = func(err error) { told = append(told, err) }
		for range 3 {
			if _, err := c.Write(context.Background(), exampleChunk(t)); err != nil {
				t.Fatal(err)
			}
			c.Wait()
		}
		want := 1
		if step < 0 {
			want = 0
		}
		if n := countSuffix(chunkKeys(t, store), partialSuffix); n != want {
			t.Errorf("step %d: %d partial chunks, want %d", step, n, want)
		}
		if len(told) != want || want == 1 && told[0] != nil {
			t.Errorf("step %d: partial chunks told: %v, want %d written", step, told, want)
		}
		if records, _ := counts(t, c, Query{}); records != 9 {
			t.Errorf("step %d: %d records, want 9", step, records)
		}
	}
}

// A query reads ahead the uploads accepted after the partial chunk was
// written, while it reads the partial chunk; what it read ahead is
// counted only if the partial chunk does not hold it (an instance's
// clock ahead of the others'), and an upload accepted before but not
// held (a late one) is read all the same.
func TestReadAheadCountsEachUploadOnce(t *testing.T) {
	store := newMemStore()
	c := newChunks(t, store, 1)
	c.writingPartials.Store(true)
	base := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	writeAt(t, c, at(0))
	writeAt(t, c, at(9)) // a clock ahead: accepted "after" the partial chunk, held by it
	prefix := chunkPrefix + base.Format("2006-01-02T15") + "/"
	partial, err := c.writePartial(context.Background(), prefix, at(5))
	if err != nil || partial == "" {
		t.Fatalf("writePartial = %q, %v", partial, err)
	}
	writeAt(t, c, at(3)) // late: accepted before the partial chunk, not held
	writeAt(t, c, at(7)) // after it
	writeAt(t, c, at(8)) // after it
	var plain []string
	for _, k := range chunkKeys(t, store) {
		if !strings.HasSuffix(k, partialSuffix) {
			plain = append(plain, k)
		}
	}
	ahead := uploadsAfter([]string{partial}, plain)
	var minutes []int
	for _, k := range ahead {
		n, _ := chunkAccepted(k)
		minutes = append(minutes, int(time.Unix(0, n).Sub(base)/time.Minute))
	}
	if !slices.Equal(minutes, []int{9, 8, 7}) {
		t.Errorf("read ahead the uploads of minutes %v, want 9, 8, 7", minutes)
	}
	r := c.readAhead(context.Background(), ahead)
	r.done.Wait() // all read, unstopped
	if got := r.stop(); len(got) != 3 {
		t.Errorf("read ahead %d chunks, want 3", len(got))
	}
	set, err := c.resolveBucket(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	// How many were read ahead depends on how soon the partial chunk
	// was read: only those named above.
	for key := range set.readAhead {
		if !slices.Contains(ahead, key) {
			t.Errorf("%s read ahead, not among %q", key, ahead)
		}
	}
	if len(set.keys) != 4 || len(set.covered) != 2 {
		t.Errorf("%d to count, %d covered; want 4 (the partial chunk and 3 uploads), 2", len(set.keys), len(set.covered))
	}
	if records, _ := counts(t, c, Query{}); records != 15 {
		t.Errorf("%d records, want 15", records)
	}
}

// listCounter counts a store's listings.
type listCounter struct {
	*memStore
	lists atomic.Int64
}

func (l *listCounter) List(ctx context.Context, prefix string) ([]string, error) {
	l.lists.Add(1)
	return l.memStore.List(ctx, prefix)
}

// Uploads list their hour for a partial chunk once every
// partialCheckEvery of them, not each: a listing of an hour of many
// uploads is many requests to an object store. The partial chunks are
// written all the same, and every upload is counted once.
func TestUploadsListTheirHourSeldom(t *testing.T) {
	store := &listCounter{memStore: newMemStore()}
	c := newChunks(t, store, 0) // the default step
	const uploads = 400
	for range uploads {
		if _, err := c.Write(context.Background(), exampleChunk(t)); err != nil {
			t.Fatal(err)
		}
		c.Wait() // each upload's check runs: none is skipped as busy
	}
	every := partialCheckEvery(defaultPartialStep)
	lists := store.lists.Load()
	t.Logf("%d uploads listed their hour %d times (once every %d uploads)", uploads, lists, every)
	if every < 2 || lists > uploads/int64(every)*3 {
		t.Errorf("%d uploads listed their hour %d times; want once every %d, at most %d times and some partial chunks", uploads, lists, every, uploads/every*3)
	}
	partials := countSuffix(chunkKeys(t, store.memStore), partialSuffix)
	if partials == 0 {
		t.Errorf("%d uploads wrote no partial chunk", uploads)
	}
	if records, _ := counts(t, c, Query{}); records != 3*uploads {
		t.Errorf("%d records, want %d", records, 3*uploads)
	}
}

// A query's own listing tells whether an open hour needs a partial
// chunk: when none is due, the hour is not listed again.
func TestQueryListsOnceWhenNoPartialIsDue(t *testing.T) {
	store := &listCounter{memStore: newMemStore()}
	c := newChunks(t, store, 0)
	// The uploads start no check, and all lie in one hour whenever the
	// test runs.
	c.writingPartials.Store(true)
	at := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	for range 10 {
		writeAt(t, c, at)
	}
	c.writingPartials.Store(false)
	store.lists.Store(0)
	if records, _ := counts(t, c, Query{}); records != 30 {
		t.Errorf("%d records, want 30", records)
	}
	c.Wait()
	if n := store.lists.Load(); n != 1 {
		t.Errorf("a query with no partial chunk due listed %d times, want once", n)
	}
	// Once one is due, the query's check writes it.
	c.writingPartials.Store(true)
	for range defaultPartialStep {
		writeAt(t, c, at)
	}
	c.writingPartials.Store(false)
	counts(t, c, Query{})
	c.Wait()
	if n := countSuffix(chunkKeys(t, store.memStore), partialSuffix); n != 1 {
		t.Errorf("%d partial chunks after a query with one due, want 1", n)
	}
}
