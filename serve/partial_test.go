package serve

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// lowPartialStep makes a partial chunk due after every step uploads, for
// the test.
func lowPartialStep(t *testing.T, step int) {
	saved := minPartialStep
	minPartialStep = step
	t.Cleanup(func() { minPartialStep = saved })
}

// answers are a query's answers in the formats that show every stack:
// the folded stacks and the groups.
func answers(t *testing.T, url, query string) string {
	t.Helper()
	var out strings.Builder
	for _, format := range []string{"folded", "json"} {
		resp, body := do(t, "GET", url+"/v1/aggregate?format="+format+"&"+query, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/aggregate?format=%s&%s: %d %s", format, query, resp.StatusCode, body)
		}
		out.Write(body)
	}
	return out.String()
}

func removePartials(t *testing.T, s *Server) {
	t.Helper()
	for _, key := range chunkKeys(t, s) {
		if strings.HasSuffix(key, partialSuffix) {
			if err := s.store.store.Remove(context.Background(), key); err != nil {
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
	lowPartialStep(t, 3)
	store := t.TempDir()
	a, tsA := newTestServer(t, aggregateConfig(store))
	b, tsB := newTestServer(t, aggregateConfig(store))
	const uploads, perUpload = 40, 25
	var posted sync.WaitGroup
	for i := range uploads {
		posted.Add(1)
		url := tsA.URL
		if i%2 == 1 {
			url = tsB.URL
		}
		go func() {
			defer posted.Done()
			body := benchStacks(t, perUpload, 10, uint64(i))
			if resp, msg := do(t, "POST", url+"/v1/stacks", bytes.NewReader(body), nil); resp.StatusCode != http.StatusOK {
				t.Errorf("POST /v1/stacks: %d %s", resp.StatusCode, msg)
			}
		}()
	}
	// Meanwhile both instances write partial chunks as fast as they can
	// (besides those the uploads start), and queries check the counts.
	done := make(chan struct{})
	var writers sync.WaitGroup
	written := make([]int, 2)
	for i, s := range []*Server{a, b} {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				keys := chunkKeys(t, s)
				if len(keys) == 0 {
					continue
				}
				_, prefix, _ := chunkBucket(keys[0])
				key, err := s.writePartial(context.Background(), prefix, timeNow())
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
		doc := groupsOf(t, tsA.URL+"/v1/groups")
		if doc.Records%perUpload != 0 || doc.Records < last || doc.Records > uploads*perUpload {
			t.Errorf("%d records: not a whole number of uploads, fewer than before (%d), or more than posted", doc.Records, last)
		}
		last = doc.Records
	}
	posted.Wait()
	close(done)
	writers.Wait()
	a.background.Wait()
	b.background.Wait()
	if written[0]+written[1] < 2 {
		t.Errorf("partial chunks written: %v, want several", written)
	}
	keys := chunkKeys(t, a)
	if countSuffix(keys, partialSuffix) == 0 {
		t.Fatalf("no partial chunk in %q", keys)
	}
	for _, ts := range []string{tsA.URL, tsB.URL} {
		if doc := groupsOf(t, ts+"/v1/groups"); doc.Records != uploads*perUpload {
			t.Errorf("%s: %d records, want %d", ts, doc.Records, uploads*perUpload)
		}
	}
	queries := []string{"", "label=api=api1", "app_version=2.1", "from=2026-11-26T01:10:00Z&to=2026-11-26T01:20:00Z", "group_by=stack"}
	withPartials := map[string]string{}
	for _, q := range queries {
		withPartials[q] = answers(t, tsB.URL, q)
	}
	removePartials(t, a)
	a.writingPartials.Store(true) // the queries below write none again
	for _, q := range queries {
		if got := answers(t, tsA.URL, q); got != withPartials[q] {
			t.Errorf("query %q: the answer with partial chunks differs from the uploads' own:\n%s\nwant\n%s", q, withPartials[q], got)
		}
	}
}

// A reader counts the partial chunk holding the most uploads and the
// uploads it does not hold; the partial chunks it outranks are deleted
// once no query may still read them, and the hour's final chunk
// replaces them all.
func TestPartialChunksLifeCycle(t *testing.T) {
	lowPartialStep(t, 2)
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	s.writingPartials.Store(true) // the test writes them
	s.compacting.Store(true)
	now := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	saved := timeNow
	timeNow = func() time.Time { return now }
	t.Cleanup(func() { timeNow = saved })
	ctx := context.Background()
	post := func(n int) {
		for range n {
			postAt(t, ts.URL, now)
		}
	}
	prefix := chunkPrefix + now.Format("2006-01-02T15") + "/"
	check := func(step string, records int64, partials int) {
		t.Helper()
		if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != records {
			t.Errorf("%s: %d records, want %d", step, doc.Records, records)
		}
		if n := countSuffix(chunkKeys(t, s), partialSuffix); n != partials {
			t.Errorf("%s: %d partial chunks, want %d", step, n, partials)
		}
	}
	post(1)
	if key, err := s.writePartial(ctx, prefix, now); key != "" || err != nil {
		t.Errorf("one upload: writePartial = %q, %v; want nothing due", key, err)
	}
	post(1)
	first, err := s.writePartial(ctx, prefix, now)
	if err != nil || first == "" {
		t.Fatalf("two uploads: writePartial = %q, %v; want a partial chunk", first, err)
	}
	if _, held, _ := partialFields(first); held != 2 {
		t.Errorf("%s holds %d uploads, want 2", first, held)
	}
	check("first partial chunk", 6, 1)
	post(3)
	second, err := s.writePartial(ctx, prefix, now)
	if err != nil || second == "" || partialOrder(second, first) <= 0 {
		t.Fatalf("five uploads: writePartial = %q, %v; want one outranking %s", second, err, first)
	}
	got, err := s.readChunk(ctx, second)
	if err != nil || len(got.Replaces) != 5 || got.Records != 15 {
		t.Fatalf("second partial chunk: %v; %d uploads, %d records; want 5, 15", err, len(got.Replaces), got.Records)
	}
	check("two partial chunks", 15, 2)
	// The outranked one stays while a query may read it.
	post(2)
	now = now.Add(s.cfg.Limits.RequestTimeout + time.Minute + time.Second)
	if _, err := s.writePartial(ctx, prefix, now); err != nil {
		t.Fatal(err)
	}
	check("third partial chunk, the first deleted", 21, 2)
	if slices.Contains(chunkKeys(t, s), first) {
		t.Errorf("%s still listed", first)
	}

	// A partial chunk written after the hour's final chunk (by a slow
	// instance) is not counted, and the next compaction deletes it.
	post(1)
	now = now.Truncate(time.Hour).Add(time.Hour + s.compactionGrace() + time.Minute)
	final, err := s.compactBucket(ctx, prefix)
	if err != nil || !strings.HasSuffix(final, compactSuffix) {
		t.Fatalf("compactBucket = %q, %v", final, err)
	}
	check("final chunk", 24, 0)
	if keys := chunkKeys(t, s); len(keys) != 1 {
		t.Errorf("after the final chunk: %q, want it alone", keys)
	}
	read, _ := s.readChunk(ctx, final)
	late := *read // read chunks are shared
	late.Replaces = []string{"x"}
	buf, _ := encodeMergedChunk(&late)
	lateKey := partialKey(prefix, &late, now)
	if err := s.store.store.Put(ctx, lateKey, bytes.NewReader(buf), int64(len(buf)), true); err != nil {
		t.Fatal(err)
	}
	check("a late partial chunk", 24, 1)
	if key, err := s.writePartial(ctx, prefix, now); key != "" || err != nil {
		t.Errorf("writePartial in an hour with a final chunk = %q, %v; want nothing", key, err)
	}
	if _, err := s.compactBucket(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	check("the late partial chunk deleted", 24, 0)
}

// An upload starts writing the hour's partial chunk in the background
// when one is due.
func TestUploadsWritePartialChunks(t *testing.T) {
	lowPartialStep(t, 3)
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	for i := range 3 {
		if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("upload %d: %d %s", i, resp.StatusCode, body)
		}
		s.background.Wait()
	}
	if n := countSuffix(chunkKeys(t, s), partialSuffix); n != 1 {
		t.Errorf("%d partial chunks, want 1", n)
	}
	if v := metric(t, s, "stackimage_aggregate_partial_chunks_total", "result", "ok"); v != 1 {
		t.Errorf("partial chunks counted: %v, want 1", v)
	}
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 9 {
		t.Errorf("%d records, want 9", doc.Records)
	}
}

// A query reads ahead the uploads accepted after the partial chunk was
// written, while it reads the partial chunk; what it read ahead is
// counted only if the partial chunk does not hold it (an instance's
// clock ahead of the others'), and an upload accepted before but not
// held (a late one) is read all the same.
func TestReadAheadCountsEachUploadOnce(t *testing.T) {
	lowPartialStep(t, 1)
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	s.writingPartials.Store(true)
	base := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	postAt(t, ts.URL, at(0))
	postAt(t, ts.URL, at(9)) // a clock ahead: accepted "after" the partial chunk, held by it
	saved := timeNow
	timeNow = func() time.Time { return at(5) }
	prefix := chunkPrefix + base.Format("2006-01-02T15") + "/"
	partial, err := s.writePartial(context.Background(), prefix, at(5))
	timeNow = saved
	if err != nil || partial == "" {
		t.Fatalf("writePartial = %q, %v", partial, err)
	}
	postAt(t, ts.URL, at(3)) // late: accepted before the partial chunk, not held
	postAt(t, ts.URL, at(7)) // after it
	postAt(t, ts.URL, at(8)) // after it
	keys := chunkKeys(t, s)
	var plain []string
	for _, k := range keys {
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
	r := s.readAhead(context.Background(), ahead)
	r.done.Wait() // all read, unstopped
	if got := r.stop(); len(got) != 3 {
		t.Errorf("read ahead %d chunks, want 3", len(got))
	}
	set, err := s.resolveBucket(context.Background(), prefix)
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
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 15 {
		t.Errorf("%d records, want 15", doc.Records)
	}
}
