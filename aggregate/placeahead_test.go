package aggregate

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The decoding goroutines place the records' frames, and what is
// counted from them is what the plain count finds: on a stream whose
// image sets are defined once (benchStream), most records are numbered
// as the aggregator numbers the images once it has seen their set; on
// one whose sets are defined again and again, with inline images too
// (randomStream), the records are placed and renumbered or placed again.
func TestDecodersPlaceFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	once := benchStream(20000)
	for _, tt := range []struct {
		name               string
		stream             []byte
		placedMin, numbMin float64
		workers            int
	}{
		// The first batches, decoded beside the one that defines the
		// sets or before the aggregator has numbered them, are left to
		// the aggregator, on any number of workers.
		{"sets defined once, 1 worker", once, 0.99, 0.8, 1},
		{"sets defined once, 3 workers", once, 0.6, 0.4, 3},
		{"sets defined again, 1 worker", randomStream(rng, 10000), 0.9, 0, 1},
		{"sets defined again, 3 workers", randomStream(rng, 10000), 0.5, 0, 3},
	} {
		stream, workers := tt.stream, tt.workers
		want := referenceCounts(t, readRecords(t, stream))
		agg := New()
		var placed, numbered, records int
		err := newMemoryReader(stream, nil).readAll(context.Background(), workers, true, agg, func(recs []*Record, bad []*RecordError) error {
			for _, re := range bad {
				t.Errorf("%v", re)
			}
			for _, rec := range recs {
				records++
				if rec.placed.ok && sameList(rec.placed.images, rec.Images) {
					placed++
					if rec.placed.numbered {
						numbered++
					}
				}
			}
			agg.AddBatch(recs)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if float64(placed) < tt.placedMin*float64(records) || float64(numbered) < tt.numbMin*float64(records) {
			t.Errorf("%s: of %d records, %d placed by the decoders, %d of them numbered; want at least %.0f %% and %.0f %%",
				tt.name, records, placed, numbered, 100*tt.placedMin, 100*tt.numbMin)
		}
		t.Logf("%s: of %d records, %d placed by the decoders, %d of them numbered", tt.name, records, placed, numbered)
		if diff := cmp.Diff(want, counts(agg)); diff != "" {
			t.Errorf("%s (-reference +counted):\n%s", tt.name, diff)
		}
	}
}

// A record whose image set the decoder guessed wrong (a set defined
// again, in a batch decoded later) is placed by the aggregator with the
// set resolved in stream order.
func TestWrongImageSetGuessPlacedAgain(t *testing.T) {
	stream := []byte(`{"image_set":"p","images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":4096,"name":"A"}],"frames":[4100]}
{"image_set":"p","frames":[4200,9000]}
{"image_set":"p","images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":8192,"name":"A"}],"frames":[8200]}
{"image_set":"p","frames":[4200,9000]}
`)
	recs := readRecords(t, stream)
	want := referenceCounts(t, recs)

	// The decoders guess set p of the last record to be its first
	// definition, as a goroutine that has not seen the second would.
	agg := New()
	guesses := newImageSetGuesses()
	placer := newRecordPlacer(agg, guesses)
	first := slices.Clone(recs)
	for i := range first {
		rec := *recs[i]
		if i == 1 || i == 3 {
			rec.Images = nil // as decoded: the set not yet resolved
		}
		first[i] = &rec
	}
	placer.placeBatch(first[:2], nil)
	placer.placeBatch(first[3:], nil)
	first[2].placed = placedFrames{}
	first[3].Images = recs[3].Images // resolved in order: the second definition
	if !first[3].placed.ok || sameList(first[3].placed.images, first[3].Images) {
		t.Fatalf("the last record's guess is %v, want the first definition", first[3].placed.images)
	}
	first[1].Images = recs[1].Images
	agg.AddBatch(first)
	if diff := cmp.Diff(want, counts(agg)); diff != "" {
		t.Errorf("counted with a wrong guess (-reference +counted):\n%s", diff)
	}
}
