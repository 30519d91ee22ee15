package aggregate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stackimage/stackimage/uuid"
)

// benchRecords makes n records shaped as the aggregation benchmark's
// (bench/aggregate): stacks of 30 frames over 20 images, a twentieth of
// them unique, from 100 devices each loading the images elsewhere, with
// a thread, a device, versions, a label and a timestamp.
func benchRecords(n int) []*Record {
	rng := rand.New(rand.NewPCG(1, 1))
	const images, devices, frames = 20, 100, 30
	unique := max(1, n/20)
	sets := make([][]Image, devices)
	for d := range sets {
		for i := range images {
			sets[d] = append(sets[d], Image{UUID: uuid.UUID{byte(i + 1)}, Name: fmt.Sprintf("lib%d", i),
				LoadAddress: Address(0x100000000 + uint64(i)<<28 + uint64(rng.IntN(1<<12))<<14)})
		}
	}
	stacks := make([][][2]uint64, unique)
	for s := range stacks {
		for range frames {
			stacks[s] = append(stacks[s], [2]uint64{uint64(rng.IntN(images)), uint64(rng.IntN(1 << 20))})
		}
	}
	apis := []string{"UIDevice.name", "SystemBootTime", "FileTimestamp", "DiskSpace"}
	recs := make([]*Record, n)
	for k := range recs {
		d := rng.IntN(devices)
		rec := &Record{Images: sets[d], ImageSet: fmt.Sprint("d", d), Thread: "main", Device: fmt.Sprintf("iPhone%d,%d", 12+d%4, d%3),
			OSVersion: fmt.Sprintf("iOS 18.%d", d%3), AppVersion: "2.1", Labels: map[string]string{"api": apis[rng.IntN(len(apis))]},
			Timestamp: time.Unix(1_790_000_000+int64(rng.IntN(1<<20)), 0).UTC()}
		for _, f := range stacks[rng.IntN(unique)] {
			rec.Frames = append(rec.Frames, uint64(sets[d][f[0]].LoadAddress)+f[1])
		}
		recs[k] = rec
	}
	return recs
}

// BenchmarkAddBatch measures the counting alone: placing every frame,
// finding the stack, the attribute set and the sample, of records
// already decoded.
func BenchmarkAddBatch(b *testing.B) {
	recs := benchRecords(200_000)
	b.ResetTimer()
	for b.Loop() {
		a := New()
		for i := 0; i < len(recs); i += batchLines {
			a.AddBatch(recs[i:min(i+batchLines, len(recs))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
