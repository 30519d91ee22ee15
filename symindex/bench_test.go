package symindex_test

import (
	"github.com/stackimage/stackimage/debuginfo"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
)

// goDarwinIndex writes the index of a GOOS=darwin build of cmd/go (built
// once per Go version by testcorpus) and returns its path and the
// entry it was made from.
func goDarwinIndex(b *testing.B) (string, *symstore.Entry) {
	bin, err := testcorpus.GoDarwinBinary()
	if err != nil {
		b.Skipf("no darwin cmd/go build: %v", err)
	}
	for _, images := range openImages(b, bin) {
		e, _ := symstore.NewEntry(images...)
		path := filepath.Join(b.TempDir(), "go"+symindex.Extension)
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.WriteIndex(f); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		return path, e
	}
	b.Fatal("no image")
	return "", nil
}

// BenchmarkIndex times, on the darwin cmd/go: opening the index file and
// answering one address (the cost of a first answer in a process), and
// warm lookups of random addresses (symbol and frames).
func BenchmarkIndex(b *testing.B) {
	path, e := goDarwinIndex(b)
	lo, hi, ok := e.Debug()[0].Bounds()
	if !ok {
		b.Fatal("no line tables")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 100_000)
	for i := range addrs {
		addrs[i] = lo + rng.Uint64N(hi-lo)
	}
	b.Run("open+first", func(b *testing.B) {
		for b.Loop() {
			ix, err := symindex.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if a, err := ix.Lookup(addrs[0]); err != nil || !a.HasSymbol {
				b.Fatalf("Lookup(%#x): no symbol", addrs[0])
			}
			ix.Close()
		}
	})
	b.Run("lookup", func(b *testing.B) {
		ix, err := symindex.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		for b.Loop() {
			for _, a := range addrs {
				ix.Lookup(a)
			}
		}
		b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	})
}

// BenchmarkLookupRequests times the lookups of the service's requests on
// the darwin cmd/go: requests of 100 random __text addresses (100
// requests cycled, as serve's BenchmarkSymbolicate100FramesGo sends
// them), each address answered by Symbol then AppendSource into a reused
// slice, as symstore.Entry.AppendResolve does; "sorted" answers each
// request's addresses in address order. ns/frame is per address.
func BenchmarkLookupRequests(b *testing.B) {
	path, e := goDarwinIndex(b)
	lo, hi, ok := e.Debug()[0].Bounds()
	if !ok {
		b.Fatal("no line tables")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	requests := make([][]uint64, 100)
	for i := range requests {
		requests[i] = make([]uint64, 100)
		for k := range requests[i] {
			requests[i][k] = lo + rng.Uint64N(hi-lo)
		}
	}
	for _, sorted := range []bool{false, true} {
		name := "random"
		if sorted {
			name = "sorted"
		}
		b.Run(name, func(b *testing.B) {
			ix, err := symindex.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			var frames []debuginfo.Frame
			addrs := make([]uint64, 100)
			n := 0
			for b.Loop() {
				copy(addrs, requests[n%len(requests)])
				n++
				if sorted {
					slices.Sort(addrs)
				}
				for _, a := range addrs {
					ix.Symbol(a)
					frames, _ = ix.AppendSource(frames[:0], a)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(100*n), "ns/frame")
		})
	}
}
