package serve

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunkPrefix is where the aggregates lie in the store (docs/aggregate.md).
const chunkPrefix = "_aggregate/chunks/"

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

func countSuffix(keys []string, suffix string) (n int) {
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}

// A query starts the compaction of closed hours in the background,
// counted in the metrics, and the answer after it is the answer before.
func TestQueryCompactsClosedHours(t *testing.T) {
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	hour := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour)
	for i := range 4 {
		postAt(t, ts.URL, hour.Add(time.Duration(i)*time.Minute))
	}
	before := groupsOf(t, ts.URL+"/v1/groups")
	if before.Records != 12 || len(before.Groups) != 1 || before.Groups[0].Weight != 20 {
		t.Errorf("before: %d records in %d groups, want 12 in one of weight 20", before.Records, len(before.Groups))
	}
	s.chunks.Wait()
	keys := chunkKeys(t, s)
	if len(keys) != 1 || !strings.HasSuffix(keys[0], ".compact.chunk") {
		t.Errorf("after the query's compaction: %q, want one merged chunk", keys)
	}
	if v := metric(t, s, "stackimage_aggregate_compactions_total", "result", "ok"); v != 1 {
		t.Errorf("compactions counted: %v, want 1", v)
	}
	after := groupsOf(t, ts.URL+"/v1/groups")
	if after.Records != 12 || len(after.Groups) != 1 || after.Groups[0].Weight != 20 {
		t.Errorf("after: %d records in %d groups, want 12 in one of weight 20", after.Records, len(after.Groups))
	}
}

// Uploads start writing the hour's partial chunk in the background once
// 50 of them are not in one, at the next of the checks an instance makes
// every 6 uploads (an eighth of the step), counted in the metrics.
func TestUploadsWritePartialChunks(t *testing.T) {
	// All in one hour, whenever the test runs; put back once the server
	// (and its background work) is closed.
	now := time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute)
	saved := timeNow
	timeNow = func() time.Time { return now }
	t.Cleanup(func() { timeNow = saved })
	s, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	const uploads = 50 + 50/8
	for i := range uploads {
		if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("upload %d: %d %s", i, resp.StatusCode, body)
		}
		s.chunks.Wait()
		if i == 48 && countSuffix(chunkKeys(t, s), ".partial.chunk") != 0 {
			t.Fatalf("a partial chunk after %d uploads, want none before 50", i+1)
		}
	}
	if n := countSuffix(chunkKeys(t, s), ".partial.chunk"); n != 1 {
		t.Errorf("%d partial chunks, want 1", n)
	}
	if v := metric(t, s, "stackimage_aggregate_partial_chunks_total", "result", "ok"); v != 1 {
		t.Errorf("partial chunks counted: %v, want 1", v)
	}
	if doc := groupsOf(t, ts.URL+"/v1/groups"); doc.Records != 3*uploads {
		t.Errorf("%d records, want %d", doc.Records, 3*uploads)
	}
}
