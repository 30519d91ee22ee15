package aggregate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// benchStream writes benchRecords as the stream format, each device's
// images as an image set defined by its first record, as the
// aggregation benchmark's stream (bench/aggregate) is written.
func benchStream(n int) []byte {
	var out bytes.Buffer
	defined := map[string]bool{}
	for _, rec := range benchRecords(n) {
		line := *rec
		if defined[line.ImageSet] {
			line.Images = nil
		}
		defined[line.ImageSet] = true
		b, err := json.Marshal(&line)
		if err != nil {
			panic(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// BenchmarkLoadStream measures the read phase of a stream file: its
// lines decoded, their frames placed and the records counted, as the
// loader does with a file it maps, on the benchmark's cores (-cpu).
func BenchmarkLoadStream(b *testing.B) {
	stream := benchStream(200_000)
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	for b.Loop() {
		a := New()
		l := &Loader{Aggregator: a, OnError: func(name string, err error) { panic(fmt.Sprint(name, err)) }}
		if err := l.readStreamData(context.Background(), &loadWorker{}, "bench", stream, nil); err != nil {
			b.Fatal(err)
		}
		if a.Records() != 200_000 {
			b.Fatalf("%d records", a.Records())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*200_000), "ns/record")
}
