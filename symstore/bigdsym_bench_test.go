package symstore

import (
	"os"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// BenchmarkFirstAnswerBigDSYM measures what "stackimage atos -i -o DSYM
// ADDR" does for one address, in process: open the dSYM's DWARF file,
// index its symbols, read its DWARF and look the address up. The file is
// the one bench/bigdsym builds (over 200 MB), named by
// $STACKIMAGE_BIGDSYM; the address is midway through what the line tables
// cover.
func BenchmarkFirstAnswerBigDSYM(b *testing.B) {
	path := os.Getenv("STACKIMAGE_BIGDSYM")
	if path == "" {
		b.Skip("set STACKIMAGE_BIGDSYM to the DWARF file `go run ./bench/bigdsym` prints")
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := image.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		e, err := NewEntry(f.Images[0])
		if err != nil {
			b.Fatal(err)
		}
		ix := e.Debug()
		if len(ix) == 0 {
			b.Fatalf("%s: no DWARF: %v", path, e.Warnings())
		}
		lo, hi, _ := ix[0].Bounds()
		mid := lo + (hi-lo)/2
		if frames := e.Source(mid); len(frames) == 0 {
			b.Fatalf("Source(%#x) found nothing", mid)
		}
		f.Close()
	}
}
