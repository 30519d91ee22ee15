package debuginfo

import (
	"debug/macho"
	"maps"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

const benchDSYM = "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash"

// BenchmarkNew measures indexing symbolic's crash.dSYM (16 CUs, 1861
// functions with code, 1668 inlined subroutines).
func BenchmarkNew(b *testing.B) {
	secs := dwarfSections(b, corpusFile(b, benchDSYM), macho.CpuAmd64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(secs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup100k measures 100,000 file:line + inline lookups at
// addresses spread over crash.dSYM's code. bench/dwarf compares the same
// work with llvm-symbolizer.
func BenchmarkLookup100k(b *testing.B) {
	ix, err := New(dwarfSections(b, corpusFile(b, benchDSYM), macho.CpuAmd64))
	if err != nil {
		b.Fatal(err)
	}
	lo, hi, ok := ix.Bounds()
	if !ok {
		b.Fatal("no line rows")
	}
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 100_000)
	for i := range addrs {
		addrs[i] = lo + r.Uint64N(hi-lo)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range addrs {
			ix.Lookup(a)
		}
	}
}

// BenchmarkParseUnits parses every unit of a darwin cmd/go (the DWARF a
// symbol index build reads, STACKIMAGE_BENCH_BIN to read another Mach-O)
// in order, as Boundaries does on one processor: with the package's own
// decoder, and with debug/dwarf's Entry and LineReader alone, side by
// side.
func BenchmarkParseUnits(b *testing.B) {
	bin := os.Getenv("STACKIMAGE_BENCH_BIN")
	if bin == "" {
		var err error
		if bin, err = testcorpus.GoDarwinBinary(); err != nil {
			b.Skipf("no darwin cmd/go build: %v", err)
		}
	}
	f, err := image.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	secs, err := f.Images[0].DWARFSections()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name      string
		reference bool
	}{{"own decoder", false}, {"debug/dwarf", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				ix, err := build(maps.Clone(normalize(secs)), bc.reference)
				if err != nil {
					b.Fatal(err)
				}
				ix.eachUnit(1, func(int, *unitIndex) {})
			}
		})
	}
}
