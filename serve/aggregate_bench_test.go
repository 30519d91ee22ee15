package serve

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/aggregate/chunkstore"
	"github.com/stackimage/stackimage/internal/testtool"
)

// benchStacks writes n stream records of 30 frames of the fixture, drawn
// from unique distinct stacks, as one upload of one process (its images
// listed once, by image set).
func benchStacks(b testing.TB, n, unique int, seed uint64) []byte {
	b.Helper()
	id := fixtureUUID(b)
	rng := rand.New(rand.NewPCG(seed, 1))
	stacks := make([][]uint64, unique)
	urng := rand.New(rand.NewPCG(7, 7)) // the same unique stacks in every upload
	for i := range stacks {
		st := make([]uint64, 30)
		for k := range st {
			st[k] = 0x100000000 + 0x320 + uint64(urng.IntN(0x2c0))&^3
		}
		stacks[i] = st
	}
	var buf bytes.Buffer
	for i := range n {
		if i == 0 {
			fmt.Fprintf(&buf, `{"image_set":"p","images":[{"uuid":%q,"load_address":4294967296,"name":"chain-arm64-O1"}],`, id)
		} else {
			buf.WriteString(`{"image_set":"p",`)
		}
		buf.WriteString(`"frames":[`)
		for k, a := range stacks[rng.IntN(unique)] {
			if k > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, "%d", a)
		}
		fmt.Fprintf(&buf, `],"thread":"main","timestamp":"2026-11-26T01:%02d:00Z","app_version":"2.%d","labels":{"api":"api%d"}}`+"\n",
			i%60, i%3, i%5)
	}
	return buf.Bytes()
}

// BenchmarkStacksIngest posts batches of 1,000 stacks to one instance
// (handler and store on loopback, chunks written to a directory); the
// target is 20,000 stacks/s per instance.
func BenchmarkStacksIngest(b *testing.B) {
	_, ts := newTestServer(b, aggregateConfig(b.TempDir()))
	body := benchStacks(b, 1000, 500, 1)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		resp, err := http.Post(ts.URL+"/v1/stacks", "application/x-ndjson", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(1000*b.N)/time.Since(start).Seconds(), "stacks/s")
}

// benchChunks are 1,000,000 stacks as 1,000 chunks of 1,000 (each
// upload's attributes vary, 50,000 unique stacks in all), made once for
// the benchmarks that query them.
func benchChunks(b *testing.B) []*aggregate.Chunk {
	benchChunksOnce.Do(func() { benchChunksMade = makeBenchChunks(b) })
	return benchChunksMade
}

var (
	benchChunksOnce sync.Once
	benchChunksMade []*aggregate.Chunk
)

func makeBenchChunks(b testing.TB) (chunks []*aggregate.Chunk) {
	for c := range 1000 {
		agg := aggregate.New()
		rd, err := aggregate.NewReader(bytes.NewReader(benchStacks(b, 1000, 50_000, uint64(c))))
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := rd.Next()
			if err != nil {
				break
			}
			agg.Add(rec)
		}
		chunks = append(chunks, agg.Chunk())
	}
	return chunks
}

// storeBenchChunks writes benchChunks to s's store as accepted at when,
// waiting after each for the partial chunk it may start.
func storeBenchChunks(b *testing.B, s *Server, when time.Time) {
	saved := timeNow
	timeNow = func() time.Time { return when }
	defer func() { timeNow = saved }()
	for _, chunk := range benchChunks(b) {
		if _, err := s.chunks.Write(context.Background(), chunk); err != nil {
			b.Fatal(err)
		}
		s.chunks.Wait()
	}
}

// benchmarkQuery times GET /v1/aggregate?format=pprof, and reports the
// CPU time it takes besides: on a shared machine the wall clock also
// counts other processes' turns.
func benchmarkQuery(b *testing.B, url string) {
	b.ResetTimer()
	cpu0 := testtool.CPUTime()
	for range b.N {
		resp, body := do(b, "GET", url+"/v1/aggregate?format=pprof", nil, nil)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	if cpu := testtool.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkAggregateQuery1M answers GET /v1/aggregate?format=pprof over
// benchChunks, accepted this hour and so not compacted into a final
// chunk, with the partial chunks written as they landed (as the
// instance writes them after each upload, when due); the target is 2 s.
func BenchmarkAggregateQuery1M(b *testing.B) {
	s, ts := newTestServer(b, aggregateConfig(b.TempDir()))
	storeBenchChunks(b, s, time.Now())
	b.Logf("%d chunks listed, %d of them partial", len(chunkKeys(b, s)), countSuffix(chunkKeys(b, s), ".partial.chunk"))
	benchmarkQuery(b, ts.URL)
}

// BenchmarkAggregateQuery1MUnmerged is BenchmarkAggregateQuery1M with no
// partial chunk written: 1,000 uploads landed at once, the query merges
// them all.
func BenchmarkAggregateQuery1MUnmerged(b *testing.B) {
	s, ts := newTestServer(b, aggregateConfig(b.TempDir()))
	// Chunks that write no partial chunk, on the same store.
	s.chunks = chunkstore.New(s.store.store, chunkstore.Config{PartialStep: -1})
	storeBenchChunks(b, s, time.Now())
	benchmarkQuery(b, ts.URL)
}

// BenchmarkAggregateQuery1MCompacted is BenchmarkAggregateQuery1M over
// an hour that has ended and been compacted into one chunk.
func BenchmarkAggregateQuery1MCompacted(b *testing.B) {
	s, ts := newTestServer(b, aggregateConfig(b.TempDir()))
	storeBenchChunks(b, s, time.Now().Add(-2*time.Hour))
	if err := s.chunks.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	if keys := chunkKeys(b, s); len(keys) != 1 {
		b.Fatalf("%d chunks after the compaction, want 1", len(keys))
	}
	benchmarkQuery(b, ts.URL)
}
