package aggregate

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
)

// BenchmarkSymbolicate measures naming the unique addresses of an
// aggregate: 2,000 records of 30 frames at random offsets in the __TEXT of
// every thin fixture binary (../fixtures/bin), symbols loaded and kept
// warm; ns/location is per unique address.
func BenchmarkSymbolicate(b *testing.B) {
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		b.Fatal(err)
	}
	paths, err := filepath.Glob("../fixtures/bin/*")
	if err != nil {
		b.Fatal(err)
	}
	var imgs []Image
	var sizes []uint64
	for _, path := range paths {
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue
		}
		f, err := image.Open(path)
		if err != nil || len(f.Images) != 1 {
			continue
		}
		im := f.Images[0]
		text, ok := im.TextSegment()
		f.Close()
		if !ok || im.UUID.IsZero() {
			continue
		}
		imgs = append(imgs, Image{UUID: im.UUID, LoadAddress: Address(0x100000000 + uint64(len(imgs))<<32), Name: filepath.Base(path)})
		sizes = append(sizes, text.Size)
	}
	if len(imgs) == 0 {
		b.Fatal("no fixture binaries")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	agg := New()
	for range 2000 {
		rec := &Record{Images: imgs}
		for range 30 {
			k := rng.IntN(len(imgs))
			rec.Frames = append(rec.Frames, uint64(imgs[k].LoadAddress)+rng.Uint64N(sizes[k]))
		}
		agg.Add(rec)
	}
	res, err := agg.Symbolicate(context.Background(), syms) // loads the symbols
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := agg.Symbolicate(context.Background(), syms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(res.Locations)), "ns/location")
}
